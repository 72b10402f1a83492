"""The session's gate, observed, and each tool call's own view of it.

Guards that every ruling is seen and that a call the agent gave up on cannot act: the session's
policy Gate is wrapped once (`ObservedGate`), so each ruling is reported the moment it happens
and remembered (an unattended run reports "denied" with its own exit code), and a gate that
raises is a deny. Each tool call gets its own `ToolCallState` (its ToolContext's `gate` and
`cancel`): time in the gate is excluded from the call's timeout, and once the call is given up
on (timed out, interrupted) it can no longer pass the gate, and a writer's `commit()` just
before it writes fails, so nothing is written (assistant.gating.cancel: first one wins). What the
gate rules is told to a `GateObserver` (the agent turns it into its typed events). No
thread-local state.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Protocol

from policy.gate import Decision

from assistant.gating.cancel import CancelOrCommit
from assistant.gating.context import Authorizer, Cancellation

__all__ = ["GateObserver", "GateRecord", "ObservedGate", "ProposalCall", "ToolCallState", "UNOBSERVED"]


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


class GateObserver(Protocol):
    """Who is told what the gate rules, the moment it does (the agent: as its typed events)."""

    def ruled(self, record: GateRecord, sha256: str | None) -> None:
        """A ruling (`sha256`: of the content an allow is bound to, if any)."""

    def write_shown(self, kind: str, target: str, content: str, current: str | None) -> None:
        """A write allowed without a question: its whole text, for the person's screen."""


class _Unobserved:
    def ruled(self, record: GateRecord, sha256: str | None) -> None:
        pass

    def write_shown(self, kind: str, target: str, content: str, current: str | None) -> None:
        pass


UNOBSERVED: GateObserver = _Unobserved()


def _deny(reason: str) -> Decision:
    return Decision(allowed=False, verdict="deny", reason=reason, sha256=None)


class ObservedGate:
    """The session's policy Gate, observed: every ruling is reported as it happens and
    remembered (an unattended run reports "denied" with its own exit code). A gate that
    raises is a deny. `gate` is the policy Gate itself."""

    def __init__(self, gate: Authorizer, observer: GateObserver = UNOBSERVED) -> None:
        self.gate = gate
        self.observer = observer
        self.rulings: list[GateRecord] = []
        self._lock = threading.Lock()
        self._asking: list[Cancellation] = []   # tool calls now inside the gate (a person may be asked)

    def report_to(self, observer: GateObserver) -> None:
        """From now on, tell `observer` every ruling (the agent of this session, an MCP server)."""
        self.observer = observer

    def still_wanted(self) -> bool:
        """False once a tool call now waiting in the gate has been given up on (Ctrl-C at a
        question in the chat): the question is cancelled and nothing typed later answers it."""
        with self._lock:
            asking = list(self._asking)
        return not any(call.cancelled() for call in asking)

    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        """A ruling for a call made outside any tool call (the person's CLI, the Python API)."""
        return self.authorize_for("?", kind, target, content=content, current=current, summary=summary, url=url)

    def authorize_for(self, tool: str, kind: str, target: str, *, content: bytes | None = None,
                      current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        decision = self.decide(kind, target, content=content, current=current, summary=summary, url=url)
        self.record(tool, kind, target, decision)
        return decision

    def decide(self, kind: str, target: str, *, content: bytes | None = None, current: bytes | None = None,
               summary: str = "", url: str | None = None, asking: Cancellation | None = None,
               answer_required: str | None = None) -> Decision:
        """The gate's decision, not yet recorded; a gate that raises is a deny. While it decides,
        the call `asking` counts as waiting in the gate (see still_wanted). `answer_required`:
        only a person's answer may allow it (policy.gate.Gate.authorize; a gate that cannot
        honour it raises, which is a deny)."""
        more = {"answer_required": answer_required} if answer_required is not None else {}
        with self._waiting(asking):
            try:
                return self.gate.authorize(kind, target, content=content, current=current, summary=summary,
                                           url=url, **more)
            except Exception as exc:   # the gate fails closed; so do we if it ever raises
                return _deny(f"the gate failed ({type(exc).__name__}); denied")

    @contextmanager
    def _waiting(self, call: Cancellation | None) -> Iterator[None]:
        if call is None:
            yield
            return
        with self._lock:
            self._asking.append(call)
        try:
            yield
        finally:
            with self._lock:
                self._asking.remove(call)

    def record(self, tool: str, kind: str, target: str, decision: Decision) -> None:
        r = GateRecord(tool=tool, kind=kind, target=str(target), allowed=bool(decision.allowed),
                       verdict=str(decision.verdict), reason=str(decision.reason))
        with self._lock:
            self.rulings.append(r)
        self.observer.ruled(r, decision.sha256)


class _EndsOnce:
    """A call that ends once: given up on (cancel) or committed by its writer (commit), the
    first one stands (gating.cancel.CancelOrCommit, held as `self.end`)."""

    end: CancelOrCommit

    def cancel(self) -> bool:
        """Give up on the call; False when it is too late (its writer has committed)."""
        return self.end.cancel()

    def commit(self) -> bool:
        return self.end.commit()

    def cancelled(self) -> bool:
        return self.end.cancelled()


class ToolCallState(_EndsOnce):
    """One tool call's view of the gate (passed to the tool in its ToolContext, as its `gate`,
    `cancel` and `own_call`): time spent in the gate is excluded from the call's timeout, and once
    the agent has given up on the call (timed out, interrupted) it can no longer pass the gate and
    a writer's `commit()` just before it writes fails, so nothing is written; once a writer has
    committed, `cancel()` no longer gives up on it (the agent waits for the write instead)."""

    def __init__(self, tool: str, gate: ObservedGate) -> None:
        self.tool = tool
        self.observed = gate
        self.lock = threading.Lock()
        self.gate_seconds = 0.0
        self.in_gate_since: float | None = None
        self.end = CancelOrCommit()     # given up on, or its writer committed: the first one stands

    def work_seconds(self, started: float, now: float) -> float:
        with self.lock:
            in_gate = (now - self.in_gate_since) if self.in_gate_since is not None else 0.0
            return (now - started) - self.gate_seconds - in_gate

    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        if self.cancelled():
            decision = _deny("the tool call ran out of time before this was allowed")
            self.observed.record(self.tool, kind, target, decision)
            return decision
        with self.lock:
            self.in_gate_since = time.monotonic()
        try:
            decision = self.observed.decide(kind, target, content=content, current=current, summary=summary,
                                            url=url, asking=self)
        finally:
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
            self.observed.observer.write_shown(kind, str(target), content.decode("utf-8", "replace"),
                                               current.decode("utf-8", "replace") if current is not None else None)
        return decision


class ProposalCall(_EndsOnce):
    """The authority of one memory change a reflection proposed (assistant.agent.reflection):
    it passes the gate only with a person's answer, this once, whatever the table or a grant
    says (`answer_required`), so the person leaving a chat, or approving a run's requests,
    decides each one. Like a ToolCallState it can be given up on (Ctrl-C while it asks): it then
    no longer passes the gate and its writer's commit() fails."""

    def __init__(self, tool: str, gate: ObservedGate, why: str, *, label: str = "") -> None:
        self.tool = tool
        self.observed = gate
        self.why = why
        self.label = label      # said before the writer's summary ("proposed at the end of the chat (1 of 2)")
        self.end = CancelOrCommit()

    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        if self.cancelled():
            decision = _deny("the proposal was given up on before it was answered")
        else:
            said = f"{self.label}: {summary}" if self.label else summary
            decision = self.observed.decide(kind, target, content=content, current=current, summary=said,
                                            url=url, asking=self, answer_required=self.why)
            if decision.allowed and (decision.remember is None or self.cancelled()):
                # only a person's answer allows a proposal (the gate guarantees it; so do we)
                decision = _deny("a proposal is written only on a person's yes")
        self.observed.record(self.tool, kind, target, decision)
        return decision
