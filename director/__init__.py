"""Director: runs self-executing Markdown plans as durable workflows."""

__version__ = "0.1.0"
