"""`assistant memory`: (being built)."""

COMMANDS: list = []
