"""The capability model: kinds, glob grants, rulings, approvals. Never imports `assistant`."""
