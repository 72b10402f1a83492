"""`assistant chat`: (being built)."""

COMMANDS: list = []
