"""Secrets: the vault, the leak scanner (its rules and folding view), putting secrets back after
an edit, the remembered unlock, the per-workspace revision key, the secret-refusal rule and the
refusal budget across runs.
"""
