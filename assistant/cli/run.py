"""`assistant run`: (being built)."""

COMMANDS: list = []
