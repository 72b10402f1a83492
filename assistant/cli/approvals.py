"""`assistant approvals`: (being built)."""

COMMANDS: list = []
