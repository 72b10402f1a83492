"""The seams of one gated call: who rules on it, and whether it is still wanted.

Guards that a write's authority travels with the call, explicitly: every writer (memory_write,
file_write, the person's CLI) asks the `Authorizer` it was handed (the policy Gate, or the
agent's per-call view of it, which excludes gate time from the call's timeout and denies once
the agent has given up on the call) and checks `Cancellation` under its lock just before it
commits, so a call the model was told had been stopped never lands later. No thread-local
state, no duck typing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from policy.gate import Decision


class Authorizer(Protocol):
    """Who rules on one gated call: the policy Gate, or the agent's per-call view of it."""

    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision: ...


# A call given up on (timed out, interrupted, cancelled, its client gone) after its writer
# committed: how long whoever waits for it waits for the write to land. The writer's own waits
# are bounded (each lock 10 s at most; the write itself is one local file).
COMMITTED_WRITE_WAIT = 60.0


class Cancellation(Protocol):
    """Has the call this work belongs to been given up on (timed out, interrupted)?"""

    def cancelled(self) -> bool: ...

    def commit(self) -> bool:
        """The work is about to make its effect permanent (a write under the writers' lock):
        False if the call was given up on (do nothing); else True, and from now on it can no
        longer be given up on: whoever waits for it waits for the effect and reports it, instead
        of telling the model "timed out" about a write that then lands."""
        ...


class NeverCancelled:
    """The cancellation of a call nobody gives up on (the person's CLI, the Python API)."""

    def cancelled(self) -> bool:
        return False

    def commit(self) -> bool:
        return True


NEVER_CANCELLED = NeverCancelled()


class CallAuthority(Authorizer, Cancellation, Protocol):
    """One gated call's authority, as a writer gets it: who rules on the call (`authorize`) and
    whether it is still wanted (`cancelled`, `commit`). A tool call's own gate view (the agent's
    ToolCallState, an MCP client's GatedCall) is one itself."""


@dataclass(frozen=True)
class Call:
    """A call's authority made of a gate and a cancellation given apart (the person's CLI, the
    Python API: never cancelled)."""

    gate: Authorizer
    cancel: Cancellation = NEVER_CANCELLED

    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        return self.gate.authorize(kind, target, content=content, current=current, summary=summary, url=url)

    def cancelled(self) -> bool:
        return self.cancel.cancelled()

    def commit(self) -> bool:
        return self.cancel.commit()


class AuditSink(Protocol):
    def append(self, record: dict[str, object]) -> object: ...


__all__ = ["COMMITTED_WRITE_WAIT", "NEVER_CANCELLED", "AuditSink", "Authorizer", "Call", "CallAuthority", "Cancellation",
           "NeverCancelled"]
