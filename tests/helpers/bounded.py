"""Test support (no tests here): run a call with a generous time bound, so a test that guards
against super-linear work on hostile input fails instead of hanging; wait for a condition, bounded."""

from __future__ import annotations

import threading
import time


def bounded(fn, limit: float):
    """Run fn in a thread; fail (not hang) if it takes longer than `limit` seconds.

    The limit is generous (linear work takes well under a tenth of it); it only separates
    linear from quadratic, it is not a speed target."""
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("r", fn()), daemon=True)
    t.start()
    t.join(limit)
    assert not t.is_alive(), f"still running after {limit}s: super-linear on hostile input"
    return box.get("r")


def wait_for(cond, timeout: float = 60.0) -> bool:
    """Poll COND every 50 ms until it is true (True) or TIMEOUT seconds have passed (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return False
