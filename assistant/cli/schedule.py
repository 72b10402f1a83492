"""`assistant schedule`: (being built)."""

COMMANDS: list = []
