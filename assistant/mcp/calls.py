"""One gated MCP tool call: who rules on it, and how a client that gives up closes its request.

Guards that a write an MCP client no longer waits for is never approved later and never lands:
- `GatedCall` is the call's Authorizer (the session's observed gate, refusing once the call was
  given up on) and its Cancellation (checked by the memory writer under its lock, just before
  it commits): one CallAuthority, handed to the writer as it is. Giving up and committing
  exclude each other through assistant.gating.cancel.CancelOrCommit (the agent's calls use it too);
- the approval request the gate files for the call is tied to it (the session's `on_request`
  hook, told in the gate's own thread, finds the call bound to that thread), so `cancel()`
  closes exactly that request as denied, whether the request was filed before or after the
  client cancelled (`notifications/cancelled`) or went away.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

from policy.gate import Decision, Gate

from assistant.gating.cancel import CancelOrCommit

if TYPE_CHECKING:
    from policy.approvals import Request

    from assistant.gating.observed import ObservedGate


class GatedCall:
    """One memory_write, memory_edit or memory_remove from an MCP client: its writer's authority (a
    CallAuthority: it is both the Authorizer and the Cancellation)."""

    def __init__(self, tool: str, observed: "ObservedGate", gate: Gate) -> None:
        self.tool = tool
        self.observed = observed
        self.gate = gate
        self.end = CancelOrCommit()              # given up on (why), or its writer committed
        self._lock = threading.Lock()
        self._request: "Request | None" = None   # the approval request filed for it
        self._filed_at: float | None = None

    # -- Authorizer -----------------------------------------------------------------------
    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        reason = self.given_up()
        if reason is not None:
            decision = Decision(False, "deny", f"{reason} before it was allowed", None)
            self.observed.record(self.tool, kind, target, decision)
            return decision
        return self.observed.authorize_for(self.tool, kind, target, content=content, current=current,
                                           summary=summary, url=url)

    # -- Cancellation ---------------------------------------------------------------------
    def cancelled(self) -> bool:
        return self.end.cancelled()

    def commit(self) -> bool:
        return self.end.commit()

    def given_up(self) -> str | None:
        return self.end.reason()

    def cancel(self, reason: str) -> bool:
        """The client gave up on this call: its request (filed or yet to be) is closed as denied.
        False when it is too late (its writer has committed: the write lands, and is answered)."""
        if not self.end.cancel(reason):
            return False
        with self._lock:
            request = self._request
        if request is not None:
            # closing it twice (here and in filed(), when the two cross) is harmless: the gate
            # closes a request it still waits on, once
            self.gate.close_request(request.id, self.end.reason() or reason)
        return True

    # -- the request ----------------------------------------------------------------------
    def filed(self, request: "Request") -> None:
        """The gate filed `request` for this call and now waits for its answer."""
        with self._lock:
            self._request = request
            self._filed_at = time.monotonic()
        reason = self.end.reason()
        if reason is not None:
            self.gate.close_request(request.id, reason)

    def waiting(self) -> tuple["Request", float] | None:
        """(the request, when it was filed) while one is filed, else None."""
        with self._lock:
            if self._request is None or self._filed_at is None:
                return None
            return self._request, self._filed_at


class CallRegistry:
    """Which GatedCall each worker thread is running, for the gate's `on_request` hook."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[int, GatedCall] = {}

    @contextmanager
    def bound(self, call: GatedCall) -> Iterator[None]:
        """Run the body (in the worker thread) as `call`."""
        me = threading.get_ident()
        with self._lock:
            self._calls[me] = call
        try:
            yield
        finally:
            with self._lock:
                self._calls.pop(me, None)

    def on_request(self, request: "Request") -> None:
        """The session's on_request hook: called in the thread whose call filed `request`."""
        with self._lock:
            call = self._calls.get(threading.get_ident())
        if call is not None:
            call.filed(request)


__all__ = ["CallRegistry", "GatedCall"]
