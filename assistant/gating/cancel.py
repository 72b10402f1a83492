"""Cancel or commit, first one wins: the one primitive behind every call that can be given up on.

Guards that a call given up on (timed out, interrupted, its MCP client cancelled or gone) and
its writer committing exclude each other: whichever comes first stands and the other is told
False. A call given up on writes nothing (its writer's `commit()` fails); a call whose writer
committed can no longer be given up on (whoever waits for it waits for the write and reports it).
The agent's per-call gate view (assistant.gating.observed.ToolCallState) and an MCP client's
call (assistant.mcp.calls.GatedCall) both hold one.
"""

from __future__ import annotations

import threading

__all__ = ["CancelOrCommit"]


class CancelOrCommit:
    """How one call ended, if it has: given up on (with the reason given) or committed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._end: str | None = None       # "cancelled" or "committed"
        self._reason: str | None = None    # why it was given up on (the first reason stands)

    def cancel(self, reason: str = "") -> bool:
        """Give up on the call: False when it is too late (its writer has committed). Giving up
        again is True and keeps the first reason."""
        with self._lock:
            if self._end == "committed":
                return False
            if self._end is None:
                self._end, self._reason = "cancelled", reason
            return True

    def commit(self) -> bool:
        """The writer is about to make its effect permanent: False if the call was given up on
        (write nothing), else True, and from now on `cancel()` is False."""
        with self._lock:
            if self._end == "cancelled":
                return False
            self._end = "committed"
            return True

    def cancelled(self) -> bool:
        with self._lock:
            return self._end == "cancelled"

    def reason(self) -> str | None:
        """Why the call was given up on; None while it was not."""
        with self._lock:
            return self._reason if self._end == "cancelled" else None
