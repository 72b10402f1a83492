"""`assistant grants`: (being built)."""

COMMANDS: list = []
