"""What the operator sees: live and plain rendering, show, audit views."""
