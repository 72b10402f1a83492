"""Test support (no tests here): run a call with a generous time bound, so a test that guards
against super-linear work on hostile input fails instead of hanging; wait for a condition, bounded; answer the first approval request from another thread, bounded."""

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


class AnswersFirstRequest(threading.Thread):
    """A person elsewhere: polls (bounded by `timeout` seconds) until `first()` finds the first
    approval request, then `answer(it)`. Whatever goes wrong lands in .error (None when all went
    well), for the test to assert after join()."""

    def __init__(self, timeout: float) -> None:
        super().__init__(daemon=True)
        self.timeout = timeout
        self.error: str | None = None

    def first(self):          # the request to answer, or None while there is none yet
        raise NotImplementedError

    def answer(self, request) -> None:
        raise NotImplementedError

    def run(self) -> None:
        try:
            deadline = time.monotonic() + self.timeout
            while time.monotonic() < deadline:
                request = self.first()
                if request is not None:
                    self.answer(request)
                    return
                time.sleep(0.05)
            self.error = "no request appeared"
        except Exception as exc:  # noqa: BLE001 - reported to the test
            self.error = repr(exc)
