"""One module per command: the effects edge that wires the parts together."""
