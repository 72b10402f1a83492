"""The seams of one gated call: who rules on it (the observed gate) and whether it is still
wanted (one cancel-or-commit primitive, assistant.gating.cancel).
"""
