"""`python -m director`."""

from director.cli import entry

entry()
