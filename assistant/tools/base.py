"""What a tool is: a name, a description for the model, an argument schema, a policy kind;
and what one call of it can reach (ToolContext).

Tools never decide their own permission: a gated tool calls `ctx.gate.authorize(...)` with
its kind and target, and only acts on an allowed Decision. A writer hands `ctx.call()` to the
gated-write pipeline, so a call the agent has given up on (timed out) writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from assistant.gating.context import NEVER_CANCELLED, AuditSink, Authorizer, Call, CallAuthority, Cancellation
from assistant.gating.untrusted import UntrustedReads
from assistant.notes.writer import Refused, SecretRefused

if TYPE_CHECKING:
    from assistant.confine import Root
    from assistant.secrets.scanner import Scanner
    from assistant.notes.store import Memory
    from assistant.recall.turn import Recaller
    from assistant.secrets.vault import Vault
    from assistant.workspace.layout import Workspace


class ToolError(Exception):
    """A refusal or failure the model should see, as a short specific message (never a secret)."""


class SecretRefusal(ToolError):
    """The call carried a value stored in the vault and was refused. The message (what the
    model sees) names neither the secret nor where it was; `names` is for the person's display
    and the audit log only. The agent takes no more tool calls in the turn (a refusal per call
    would be an oracle a model can binary-search)."""

    def __init__(self, message: str, *, names: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.names = tuple(names)


def tool_error(exc: Refused) -> ToolError:
    """A refusal of the gated-write pipeline as the model is told it: a vault secret is a
    SecretRefusal (the agent ends the turn), anything else a ToolError with the same words."""
    if isinstance(exc, SecretRefused) and exc.vault:
        return SecretRefusal(str(exc), names=exc.names)
    return ToolError(str(exc))


@dataclass
class ToolContext:
    """What one tool call can reach. The session builds one; the agent gives each call its own
    copy whose `gate` and `cancel` belong to that call (explicitly, no thread-local state)."""

    workspace: "Workspace | None"
    scanner: "Scanner | None"
    gate: Authorizer                       # the policy Gate, or the agent's per-call view of it
    memory: "Memory | None" = None
    files: "Root | None" = None            # the confined Root at files/
    vault: "Vault | None" = None           # for web_fetch auth by name
    audit: AuditSink | None = None         # where file writes are audited (memory has its own)
    run_id: str = ""
    cancel: Cancellation = NEVER_CANCELLED  # has this call been given up on (timed out)?
    extra: dict[str, object] = field(default_factory=dict)
    model: str = ""                        # the model's name, for history's provenance
    sources: list[str] = field(default_factory=list)   # untrusted places this turn read ("web:host")
    recall: "Recaller | None" = None       # for memory_search
    # the session-wide record of untrusted places read (shared by every call's copy): a tool
    # that returns text from one marks it (`read_untrusted`), and the gate then asks memory writes
    reads: UntrustedReads = field(default_factory=UntrustedReads)

    own_call: CallAuthority | None = None   # the agent's per-call view (it is `gate` and `cancel`)

    def read_untrusted(self, source: str) -> None:
        """This call is about to hand the model text from an untrusted place (a URL, files/<path>):
        mark the session, for the rest of it (until /reload)."""
        self.reads.mark(source)

    def call(self) -> CallAuthority:
        """This call's authority, for the gated-write pipeline: the agent's per-call view itself,
        or (no agent: the session's own context) the gate and cancellation paired."""
        return self.own_call if self.own_call is not None else Call(self.gate, self.cancel)


@dataclass
class Tool:
    name: str
    description: str                       # includes the judgement of when to use it
    parameters: dict[str, object]          # JSON schema of args (object), bounded strings
    run: Callable[[dict[str, object], ToolContext], str]
    kind: str | None = None                # policy kind when gated ("memory", "file", "net")
    # for a tool that reads untrusted text: the place a call read ("web:host", "file:path"),
    # recorded by the agent for the rest of the turn and kept with any note written after it
    untrusted: Callable[[dict[str, object]], str | None] | None = None


def path_tool(name: str, description: str, path: dict[str, object],
              run: Callable[[dict[str, object], ToolContext], str], **more: object) -> Tool:
    """A tool whose one argument is a path (`path`: its JSON schema)."""
    return Tool(name=name, description=description,
                parameters={"type": "object", "properties": {"path": path}, "required": ["path"],
                            "additionalProperties": False},
                run=run, **more)  # type: ignore[arg-type]
