"""The one gated-write pipeline: how memory_write and file_write put model text on disk.

Guards that every write the model can cause takes the same steps in the same order, whatever
it writes to:
    1. path check     the shared relative-path grammar, then the writer's own rule (.md, hidden)
    2. content rules  UTF-8 text, no NUL, at most `max_bytes`
    3. leak scan      a stored secret or credential shape in the content or the path is refused
                      at once and never put to a person
    4. base/conflict  the current bytes are read (confined); a writer that must name the
                      revision it replaces (memory) is refused if it does not
    5. gate           `authorize(kind, path, content, current)`; anything but an allowed decision
                      bound to these exact bytes is a refusal
    6. write          under the writer's lock (bounded wait): the current bytes are checked again
                      (a lost race is a conflict the writer sees), a call that was cancelled
                      meanwhile writes nothing, then the confined atomic write of the approved bytes
    7. audit          one line: kind, target, sha256, size (never the content)
What differs between writers (kind, limits, extra path rule, messages, the lock, the exceptions
raised) is a `WriteRules` value; the steps themselves are written once, here.
"""

from __future__ import annotations

import hashlib
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Callable, Protocol

from policy.gate import Decision

from .confine import ConfinementError, Root, validate_relpath
from .leaks import Scanner
from .locking import LockTimeout
from .notes import revision

MAX_PATH_CHARS = 512


class Authorizer(Protocol):
    """Who rules on one gated call: the policy Gate, or the agent's per-call view of it."""

    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision: ...


class Cancellation(Protocol):
    """Has the call this work belongs to been given up on (timed out, interrupted)?"""

    def cancelled(self) -> bool: ...


class NeverCancelled:
    """The cancellation of a call nobody gives up on (the person's CLI, the Python API)."""

    def cancelled(self) -> bool:
        return False


NEVER_CANCELLED = NeverCancelled()


@dataclass(frozen=True)
class Call:
    """One call's authority: the gate it asks, and whether it is still wanted."""

    gate: Authorizer
    cancel: Cancellation = NEVER_CANCELLED


class AuditSink(Protocol):
    def append(self, record: dict[str, object]) -> object: ...


@dataclass(frozen=True)
class Refusals:
    """The exception each step raises (memory: NoteError subclasses; files: ToolError)."""

    path: type[Exception]
    content: type[Exception]
    secret: type[Exception]
    conflict: type[Exception]
    denied: type[Exception]
    busy: type[Exception]
    failed: type[Exception]


@dataclass(frozen=True)
class WriteRules:
    """What one writer does differently; the pipeline's steps are the same for all."""

    kind: str                                   # policy kind: "memory" | "file"
    tool: str                                   # "memory_write" | "file_write" (for the summary)
    noun: str                                   # "note" | "file" (for messages)
    max_bytes: int
    size_hint: str                              # said when content is too large
    refusals: Refusals
    path_rule: Callable[[str], None]            # the writer's own rule after the shared grammar
    read_current: Callable[[Root, str], bytes | None]   # None: no such file; refusals otherwise
    secret_message: Callable[[list[str]], str]
    lock: Callable[[], AbstractContextManager[object]]


@dataclass(frozen=True)
class WriteResult:
    path: str
    revision: str
    created: bool
    bytes: int = 0
    warning: str | None = None   # e.g. the audit line could not be appended


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- the steps ---------------------------------------------------------------------------------

def check_path(rules: WriteRules, path: object) -> str:
    """1. The path, or refusals.path saying which rule and which component."""
    refuse = rules.refusals.path
    if not isinstance(path, str):
        raise refuse(f"path must be a string, not {type(path).__name__}")
    if len(path) > MAX_PATH_CHARS:
        raise refuse(f"path is {len(path)} characters; at most {MAX_PATH_CHARS} are allowed")
    try:
        validate_relpath(path)
    except ConfinementError as exc:
        raise refuse(f"path refused: {exc}") from None
    rules.path_rule(path)
    return path


def check_content(rules: WriteRules, content: object) -> bytes:
    """2. The exact bytes to write, or refusals.content saying why."""
    refuse = rules.refusals.content
    if isinstance(content, (bytes, bytearray)):
        data = bytes(content)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise refuse(f"content is not valid UTF-8 (byte {exc.start}: {exc.reason}); "
                         f"{rules.noun}s are UTF-8 text") from None
    elif isinstance(content, str):
        text = content
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise refuse(f"content is not valid UTF-8 (character {exc.start} is a lone surrogate)") from None
    else:
        raise refuse(f"content must be text, not {type(content).__name__}")
    nul = text.find("\x00")
    if nul >= 0:
        raise refuse(f"content contains a NUL character (at character {nul}); {rules.noun}s are text")
    if len(data) > rules.max_bytes:
        raise refuse(f"content is {len(data)} bytes; a {rules.noun} may be at most {rules.max_bytes} bytes"
                     f"{rules.size_hint}")
    return data


def check_secrets(rules: WriteRules, scanner: Scanner | None, path: str, data: bytes) -> None:
    """3. Refuse at once if the content or the path carries a secret. Never asks anyone."""
    if scanner is None:
        return
    names: list[str] = []
    for text in (data.decode("utf-8"), path):
        for name in scanner.names_found(text):
            if name not in names:
                names.append(name)
    if names:
        raise rules.refusals.secret(rules.secret_message(names))


def authorize(rules: WriteRules, call: Call, path: str, data: bytes, current: bytes | None,
              summary: str, redact: Callable[[str], str]) -> None:
    """5. Allowed, for exactly these bytes, or refusals.denied (every error is a deny)."""
    denied = rules.refusals.denied
    try:
        decision = call.gate.authorize(rules.kind, path, content=data, current=current, summary=summary)
    except Exception as exc:  # noqa: BLE001 - every error inside the gate is a deny
        raise denied(f"denied: the gate failed ({type(exc).__name__}); nothing was written") from None
    if not decision.allowed:
        raise denied(f"denied: {redact(str(decision.reason or 'not allowed'))}; nothing was written")
    if decision.sha256 and decision.sha256 != sha256_hex(data):
        raise denied("denied: the approval was for different content; nothing was written")


def still_current(rules: WriteRules, root: Root, path: str, current: bytes | None, doing: str) -> None:
    """Under the lock: the bytes the gate ruled on are still the ones on disk."""
    now = rules.read_current(root, path)
    if now != current:
        if current is None:
            raise rules.refusals.conflict(f"{path} was created by another writer meanwhile; "
                                          "changed since you read it, read it again")
        raise rules.refusals.conflict(f"{path} changed since you read it, read it again (it changed "
                                      f"while the {doing} was being decided)")


def audit_line(audit: AuditSink | None, event: dict[str, object]) -> str | None:
    """7. Append one audit event; a warning instead of raising (the write already happened)."""
    if audit is None:
        return None
    try:
        audit.append(event)
        return None
    except Exception as exc:  # noqa: BLE001 - reported, never silently lost
        return f"the audit line could not be written ({type(exc).__name__})"


# --- the pipeline ------------------------------------------------------------------------------

def gated_write(rules: WriteRules, root: Root, path: object, content: object, *, call: Call,
                scanner: Scanner | None, audit: AuditSink | None, run_id: str,
                check_base: Callable[[str, bytes | None], None] = lambda path, current: None) -> WriteResult:
    """Steps 1-7 (module docstring) for one whole-file write. `check_base(path, current)` is the
    writer's read-before-overwrite rule (step 4); it raises refusals.conflict."""
    path = check_path(rules, path)                                   # 1
    data = check_content(rules, content)                             # 2
    check_secrets(rules, scanner, path, data)                        # 3
    current = rules.read_current(root, path)                         # 4
    check_base(path, current)
    what = f"new {rules.noun}" if current is None else f"replaces revision {revision(current)}"
    authorize(rules, call, path, data, current,                      # 5
              f"{rules.tool} {path} ({len(data)} bytes, {what})",
              scanner.redact if scanner is not None else str)
    try:
        with rules.lock():                                           # 6
            still_current(rules, root, path, current, "write")
            if call.cancel.cancelled():
                raise rules.refusals.denied(f"the call ran out of time (limits.tool_timeout) before {path} "
                                            "was written; nothing was written")
            try:
                root.write_bytes(path, data)
            except ConfinementError as exc:
                raise rules.refusals.path(f"path refused: {exc}") from None
            except OSError as exc:
                raise rules.refusals.failed(f"{path} could not be written: {exc.strerror or exc}") from None
            warning = audit_line(audit, {                           # 7
                "event": "written", "run": run_id, "kind": rules.kind, "target": path,
                "sha256": sha256_hex(data), "revision": revision(data), "bytes": len(data),
                "base": revision(current) if current is not None else None, "created": current is None,
            })
    except LockTimeout as exc:
        raise rules.refusals.busy(f"{exc}; nothing was written") from None
    return WriteResult(path=path, revision=revision(data), created=current is None, bytes=len(data),
                       warning=warning)


__all__ = ["Authorizer", "AuditSink", "Call", "Cancellation", "NEVER_CANCELLED", "NeverCancelled", "Refusals",
           "WriteResult", "WriteRules", "gated_write", "check_path", "check_content", "check_secrets",
           "authorize", "still_current", "audit_line", "sha256_hex", "MAX_PATH_CHARS"]
