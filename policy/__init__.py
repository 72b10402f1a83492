"""The capability model: kinds, glob grants, rulings, approvals. Never imports `assistant`."""

from policy.engine import Ruling, Session, decide

__all__ = ["Ruling", "Session", "decide"]   # DESIGN's `policy.decide(...)`
