"""`assistant vault`: (being built)."""

COMMANDS: list = []
