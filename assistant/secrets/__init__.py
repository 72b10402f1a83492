"""Secrets: the vault, the leak scanner (its rules and folding view), putting secrets back after
an edit, the remembered unlock, and the per-workspace revision key.
"""
