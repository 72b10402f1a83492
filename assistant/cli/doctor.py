"""`assistant doctor`: (being built)."""

COMMANDS: list = []
