"""Running blocks: the pty shell session and secret redaction."""
