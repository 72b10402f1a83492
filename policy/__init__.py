"""The capability model: kinds, glob grants, rulings, approvals. Never imports `assistant`."""

from .engine import Ruling, Session, decide  # noqa: F401  (DESIGN's `policy.decide(...)`)
