"""The engine: a plan executed as a durable workflow of blocks; gates; events."""
