"""A capability-gated personal assistant with OS-confined memory writes."""

__version__ = "0.1.0"
