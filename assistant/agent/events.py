"""What a turn reports as it happens: one frozen dataclass per event, defined here and nowhere else.

Guards the seam between the turn loop and everything that watches it (the chat and run displays,
the MCP server's transcript, tests): an event is a typed value, matched by its class
(`match event: case ToolCalled(tool=..., args=...)`), never a name and a dict read back with
`.get`. Each class carries the name its transcript record has (`EVENT`), and `record(event)` is
that record's fields exactly as they are written today (the transcript's JSON on disk is the
same: fields left out when they hold their "not applicable" default are left out of the record).
`RECORDED` is False for events meant for the screen only (tokens, an allowed write's text).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Callable, ClassVar, Union, get_args

from assistant.gating.observed import GateRecord

__all__ = [
    "ClaimUnbacked", "EVENTS", "Event", "EventSink", "GateEvents", "Notice", "Recalled", "Replied", "RulingMade", "StepRefused",
    "StepTaken", "Stopped", "Token", "ToolCalled", "ToolFinished", "TurnFailed", "UserMessage",
    "VaultValueRefused", "WriteShown", "record", "redacted",
]


@dataclass(frozen=True)
class _Base:
    EVENT: ClassVar[str] = ""                  # the transcript's "event" field
    RECORDED: ClassVar[bool] = True            # False: for the screen only, never in the transcript
    # fields left out of the record while they hold their default (they do not apply)
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()


@dataclass(frozen=True)
class UserMessage(_Base):
    """The person's message starts a turn (with the notes changed on disk since the last one)."""

    EVENT: ClassVar[str] = "user"
    text: str
    changed_notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Notice(_Base):
    """Something the person should know that is no failure (a secret replaced, exchanges dropped)."""

    EVENT: ClassVar[str] = "notice"
    message: str


@dataclass(frozen=True)
class Recalled(_Base):
    """The notes recalled for the message: each {"path", "score", "source"} (+ "stale": True)."""

    EVENT: ClassVar[str] = "recall"
    notes: tuple[dict[str, object], ...] = ()


@dataclass(frozen=True)
class Token(_Base):
    """A piece of the reply as the model produces it (already redacted; screen only)."""

    EVENT: ClassVar[str] = "token"
    RECORDED: ClassVar[bool] = False
    text: str


@dataclass(frozen=True)
class StepTaken(_Base):
    """One model step: its raw action text, whether it parsed (else why not), its token counts and
    `model_s`, the seconds the model's step call took (llama.cpp's evaluation and generation, or
    the wait on the server, with the reply's streaming to the screen)."""

    EVENT: ClassVar[str] = "step"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"cached_tokens", "model_s"})
    n: int
    action: str
    parsed: bool
    error: str | None
    prompt_tokens: int | None = None
    evaluated_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    model_s: float | None = None


@dataclass(frozen=True)
class Replied(_Base):
    """The turn's reply. `streamed` False: streaming stopped part-way, show the reply whole."""

    EVENT: ClassVar[str] = "reply"
    text: str
    streamed: bool = True


@dataclass(frozen=True)
class StepRefused(_Base):
    """A model step that is no valid action; the model is told `error`."""

    EVENT: ClassVar[str] = "invalid"
    error: str | None


@dataclass(frozen=True)
class Stopped(_Base):
    """The turn was stopped (a limit reached, a call that carried a vault value)."""

    EVENT: ClassVar[str] = "stopped"
    message: str


@dataclass(frozen=True)
class TurnFailed(_Base):
    """The turn failed (the model or its backend); `message` says how."""

    EVENT: ClassVar[str] = "error"
    message: str


@dataclass(frozen=True)
class ToolCalled(_Base):
    """A tool call, before it runs. `kind`: the tool's policy kind (None: an ungated tool); ""
    where the door does not say (an MCP client's calls: their records have no kind)."""

    EVENT: ClassVar[str] = "tool_call"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"kind"})
    tool: str
    args: dict[str, object] = field(default_factory=dict)
    kind: str | None = ""


@dataclass(frozen=True)
class ToolFinished(_Base):
    """A tool call's result as the model gets it. `seconds` it took (None: interrupted, refused);
    `secret`: refused for carrying a vault value; `timeout`: it ran out of time."""

    EVENT: ClassVar[str] = "tool_result"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"seconds", "secret", "timeout"})
    tool: str
    ok: bool
    output: str
    seconds: float | None = None
    secret: bool = False
    timeout: bool = False


@dataclass(frozen=True)
class RulingMade(_Base):
    """A gate ruling, the moment it is made (assistant.gating.observed.GateRecord, plus the sha256
    of the content an allow is bound to)."""

    EVENT: ClassVar[str] = "ruling"
    tool: str
    kind: str
    target: str
    allowed: bool
    verdict: str
    reason: str
    sha256: str | None = None


@dataclass(frozen=True)
class WriteShown(_Base):
    """A write allowed without a question: its whole text (and the text it replaces) for the
    screen (the transcript has the call's arguments)."""

    EVENT: ClassVar[str] = "write_shown"
    RECORDED: ClassVar[bool] = False
    kind: str
    target: str
    content: str
    current: str | None = None


@dataclass(frozen=True)
class VaultValueRefused(_Base):
    """A tool call carried a value stored in the vault and was refused: the person is told which
    secrets (`names`), the model is not."""

    EVENT: ClassVar[str] = "secret_refused"
    tool: str
    target: str
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClaimUnbacked(_Base):
    """The reply says a note was saved, updated or deleted, and no memory-changing call
    succeeded in the turn (assistant.agent.claims): the person is told nothing was saved."""

    EVENT: ClassVar[str] = "false_claim"
    message: str
    reply: str


Event = Union[UserMessage, Notice, Recalled, Token, StepTaken, Replied, StepRefused, Stopped, TurnFailed,
              ToolCalled, ToolFinished, RulingMade, WriteShown, VaultValueRefused, ClaimUnbacked]
EVENTS: tuple[type, ...] = get_args(Event)   # every event class, for whoever must handle each
EventSink = Callable[[Event], None]


def record(event: Event) -> dict[str, object]:
    """The event's fields as its transcript record holds them (without "time", "session", "event").
    Tuples are written as JSON lists, as they always were."""
    out: dict[str, object] = {}
    for f in fields(event):
        value = getattr(event, f.name)
        if f.name in event.OPTIONAL and value == f.default:
            continue
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def redacted(event: Event, redact: Callable[[object], object]) -> Event:
    """The same event with `redact` applied to every field's value (a tuple stays a tuple)."""
    changes = {}
    for f in fields(event):
        value = getattr(event, f.name)
        new = redact(value)
        if isinstance(value, tuple) and isinstance(new, list):
            new = tuple(new)
        changes[f.name] = new
    return replace(event, **changes)


class GateEvents:
    """The observer of a session's gate (assistant.gating.observed.GateObserver) that reports
    what it rules as events to `sink`: a RulingMade for each ruling, a WriteShown for each write
    allowed without a question."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    def ruled(self, ruling: GateRecord, sha256: str | None) -> None:
        self.sink(RulingMade(tool=ruling.tool, kind=ruling.kind, target=ruling.target, allowed=ruling.allowed,
                             verdict=ruling.verdict, reason=ruling.reason, sha256=sha256))

    def write_shown(self, kind: str, target: str, content: str, current: str | None) -> None:
        self.sink(WriteShown(kind=kind, target=target, content=content, current=current))
