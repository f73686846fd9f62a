"""The plan: its model, the parser, the bash analyser, templates, knobs, verify semantics, lint."""
