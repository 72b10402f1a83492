"""The session's gate, observed, and each tool call's own view of it.

Guards that every ruling is seen and that a call the agent gave up on cannot act: the session's
policy Gate is wrapped once (`ObservedGate`), so each ruling is reported the moment it happens
and remembered (an unattended run reports "denied" with its own exit code), and a gate that
raises is a deny. Each tool call gets its own `ToolCallState` (its ToolContext's `gate` and
`cancel`): time in the gate is excluded from the call's timeout, and once the call is given up
on (timed out, interrupted) it can no longer pass the gate, and a writer asking `cancelled()`
just before it commits writes nothing. No thread-local state.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

from policy.gate import Decision

from assistant.gating.context import Authorizer

__all__ = ["EventSink", "GateRecord", "ObservedGate", "ToolCallState"]

EventSink = Callable[[str, dict[str, object]], None]


@dataclass(frozen=True)
class GateRecord:
    """One gate Decision as the session saw it: which tool asked, for what, and the outcome.
    (Not policy.engine.Ruling, which is the engine's verdict before anyone is asked.)"""

    tool: str
    kind: str
    target: str
    allowed: bool
    verdict: str
    reason: str


def _deny(reason: str) -> Decision:
    return Decision(allowed=False, verdict="deny", reason=reason, sha256=None)


class ObservedGate:
    """The session's policy Gate, observed: every ruling is reported as it happens and
    remembered (an unattended run reports "denied" with its own exit code). A gate that
    raises is a deny. `gate` is the policy Gate itself."""

    def __init__(self, gate: Authorizer, emit: EventSink) -> None:
        self.gate = gate
        self.emit = emit
        self.rulings: list[GateRecord] = []
        self._lock = threading.Lock()
        self._asking: list["ToolCallState"] = []   # tool calls now inside the gate (a person may be asked)

    def still_wanted(self) -> bool:
        """False once a tool call now waiting in the gate has been given up on (Ctrl-C at a
        question in the chat): the question is cancelled and nothing typed later answers it."""
        with self._lock:
            asking = list(self._asking)
        return not any(state.cancelled() for state in asking)

    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        """A ruling for a call made outside any tool call (the person's CLI, the Python API)."""
        return self.authorize_for("?", kind, target, content=content, current=current, summary=summary, url=url)

    def authorize_for(self, tool: str, kind: str, target: str, *, content: bytes | None = None,
                      current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        try:
            decision = self.gate.authorize(kind, target, content=content, current=current, summary=summary,
                                           url=url)
        except Exception as exc:   # the gate fails closed; so do we if it ever raises
            decision = _deny(f"the gate failed ({type(exc).__name__}); denied")
        self.record(tool, kind, target, decision)
        return decision

    def record(self, tool: str, kind: str, target: str, decision: Decision) -> None:
        r = GateRecord(tool=tool, kind=kind, target=str(target), allowed=bool(decision.allowed),
                       verdict=str(decision.verdict), reason=str(decision.reason))
        with self._lock:
            self.rulings.append(r)
        self.emit("ruling", {"tool": r.tool, "kind": r.kind, "target": r.target, "allowed": r.allowed,
                             "verdict": r.verdict, "reason": r.reason, "sha256": decision.sha256})


class ToolCallState:
    """One tool call's view of the gate (passed to the tool in its ToolContext, as `gate` and
    `cancel`): time spent in the gate is excluded from the call's timeout, and once the agent
    has given up on the call (timed out, interrupted) it can no longer pass the gate and a
    writer's `commit()` just before it writes fails, so nothing is written; once a writer has
    committed, `cancel()` no longer gives up on it (the agent waits for the write instead)."""

    def __init__(self, tool: str, gate: ObservedGate) -> None:
        self.tool = tool
        self.observed = gate
        self.lock = threading.Lock()
        self.gate_seconds = 0.0
        self.in_gate_since: float | None = None
        self._end: str | None = None     # "cancelled" (given up on) or "committed" (its writer's)

    def cancel(self) -> bool:
        """Give up on the call; False when it is too late (its writer has committed)."""
        return self._end_as("cancelled")

    def commit(self) -> bool:
        return self._end_as("committed")

    def cancelled(self) -> bool:
        with self.lock:
            return self._end == "cancelled"

    def _end_as(self, end: str) -> bool:
        """Giving up on the call and its writer committing exclude each other: the first one
        stands, the other gets False."""
        with self.lock:
            if self._end not in (None, end):
                return False
            self._end = end
            return True

    def work_seconds(self, started: float, now: float) -> float:
        with self.lock:
            in_gate = (now - self.in_gate_since) if self.in_gate_since is not None else 0.0
            return (now - started) - self.gate_seconds - in_gate

    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        with self.lock:
            if self._end == "cancelled":
                decision = _deny("the tool call ran out of time before this was allowed")
                late = True
            else:
                late = False
                self.in_gate_since = time.monotonic()
        if late:
            self.observed.record(self.tool, kind, target, decision)
            return decision
        with self.observed._lock:
            self.observed._asking.append(self)
        try:
            decision = self.observed.gate.authorize(kind, target, content=content, current=current,
                                                    summary=summary, url=url)
        except Exception as exc:   # the gate fails closed; so do we if it ever raises
            decision = _deny(f"the gate failed ({type(exc).__name__}); denied")
        finally:
            with self.observed._lock:
                self.observed._asking.remove(self)
            with self.lock:
                if self.in_gate_since is not None:
                    self.gate_seconds += time.monotonic() - self.in_gate_since
                self.in_gate_since = None
        if self.cancelled() and decision.allowed:
            decision = _deny("the tool call ran out of time while waiting; denied")
        self.observed.record(self.tool, kind, target, decision)
        if decision.allowed and content is not None and decision.remember is None:
            # allowed without a question (a watched chat, a grant): the person sees the whole
            # write now, not just the call's line (display only: the transcript has the args)
            self.observed.emit("write_shown", {
                "kind": kind, "target": str(target), "content": content.decode("utf-8", "replace"),
                "current": current.decode("utf-8", "replace") if current is not None else None})
        return decision
