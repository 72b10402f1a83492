"""Memory: the one writer of `memory/`, the redacting reader, and the catalog.

Guards what the assistant will believe next time. A write goes, in this order and nowhere
else: path rules (relative, forward-slashed, `.md`, the Root's rules) -> content rules (UTF-8
text, no NUL, size cap) -> leak scan (a hit is refused at once, naming the secret or rule,
never the value, and is never put to a person) -> read-before-overwrite (an existing note is
only replaced by a writer that names its current revision) -> the policy gate (allow / ask
out of band / deny; the approval is bound to the sha256 of these exact bytes) -> under the
writers' lock: the revision is checked again (a lost race is a refusal the writer sees) and
the exact approved bytes are written atomically through the confined `Root` -> an audit line
(sha256 and size, never content). Whole-file replacement only.

Reads are ungated (context, not reach) but confined, bounded, and redacted by the scanner.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from policy.gate import Gate

from . import catalog as _catalog
from .confine import ConfinementError, FileTooLargeError, Root
from .gated_write import (AuditSink, Authorizer, Call, Refusals, WriteResult, WriteRules,
                          audit_line, authorize, check_path, gated_write, sha256_hex, still_current)
from .leaks import Scanner
from .locking import FileLock, LockTimeout
from .notes import revision

if TYPE_CHECKING:
    from .workspace import Workspace

__all__ = [
    "Memory", "Note", "WriteResult", "RemoveResult", "Entry", "revision",
    "NoteError", "PathRefused", "ContentRefused", "SecretRefused", "Conflict",
    "Denied", "NotFound", "Unreadable", "Busy", "CONFLICT_MESSAGE",
    "open_memory", "memory_write", "memory_read", "memory_list",
]

Entry = _catalog.Entry
CONFLICT_MESSAGE = "changed since you read it, read it again"


# --- refusals --------------------------------------------------------------------------------

class NoteError(Exception):
    """A memory operation refused, with a specific message safe to show the model (no secret)."""


class PathRefused(NoteError):
    """The path breaks a path rule (not `.md`, absolute, `..`, dot-leading, control chars...)."""


class ContentRefused(NoteError):
    """The content is not a note: not text, not UTF-8, carries NUL, or is over the size cap."""


class SecretRefused(NoteError):
    """The content (or path) carries a stored secret or a credential shape. Never asked about."""


class Conflict(NoteError):
    """Read-before-overwrite failed: the writer's base is not the note's current revision."""


class Denied(NoteError):
    """The gate did not allow the write (deny, no approver, timeout, approval for other bytes)."""


class NotFound(NoteError, FileNotFoundError):
    """No note at that path (also a FileNotFoundError)."""


class Unreadable(NoteError):
    """The note exists but cannot be read as a note (symlink, FIFO, folder, not UTF-8, too large)."""


class Busy(NoteError):
    """Another writer held the memory lock for the whole bounded wait."""


@dataclass(frozen=True)
class Note:
    path: str
    content: str      # redacted
    revision: str     # of the bytes on disk (12 hex chars of sha256)


@dataclass(frozen=True)
class RemoveResult:
    path: str
    revision: str     # of the removed bytes
    warning: str | None = None


def _base_matches(base: str, current: bytes) -> bool:
    """`base` names the current bytes: the 12-character revision memory_read gives, or (for a
    caller that hashed the note itself) its full sha256 hex / any prefix of at least 8 hex."""
    given = base.strip().lower()
    if given == revision(current):
        return True
    return 8 <= len(given) <= 64 and re.fullmatch(r"[0-9a-f]+", given) is not None \
        and sha256_hex(current).startswith(given)


# What the gated-write pipeline (assistant.gated_write) does differently for notes.
_REFUSALS = Refusals(path=PathRefused, content=ContentRefused, secret=SecretRefused, conflict=Conflict,
                     denied=Denied, busy=Busy, failed=NoteError)


def _note_path_rule(path: str) -> None:
    if not path.endswith(".md"):
        raise PathRefused(f"path refused: {path!r} does not end in .md; notes are markdown files")


def _secret_message(names: list[str]) -> str:
    return (f"refused: the note would carry a secret ({', '.join(names)}). Secrets never go into "
            "memory, and this is not put to the person for approval (approving it would park the "
            "value in every future prompt). Leave the secret out; refer to it by name if needed.")


class Memory:
    """The notes of one workspace. `gate` rules on writes made without a call of their own
    (the person's CLI, the Python API); the agent passes each tool call's `Call`."""

    def __init__(self, ws: "Workspace", scanner: Scanner, gate: Authorizer, *, lock_timeout: float = 10.0,
                 audit: AuditSink | None = None, run_id: str = "") -> None:
        if scanner is None:
            raise ValueError("Memory needs a leak scanner (assistant.leaks.Scanner); none means no writes")
        self.ws = ws
        self.scanner = scanner
        self.gate = gate
        # the run the audit lines name: the session's id; a bare policy Gate knows its own
        self.run_id = run_id or (gate.run_id if isinstance(gate, Gate) else "")
        self.settings = _catalog.CatalogSettings.from_config(ws.config.memory)
        self.max_note_bytes = self.settings.max_note_bytes
        self.lock_timeout = lock_timeout
        self._audit = audit
        self.rules = WriteRules(
            kind="memory", tool="memory_write", noun="note", max_bytes=self.max_note_bytes,
            size_hint=" (memory.max_note_bytes). Split it into several notes, one topic each.",
            refusals=_REFUSALS, path_rule=_note_path_rule, read_current=self._current,
            secret_message=_secret_message, lock=self._lock)

    # -- rules --------------------------------------------------------------------------

    def check_path(self, path: object) -> str:
        """The note path, or PathRefused saying which rule and which component."""
        return check_path(self.rules, path)

    # -- plumbing -----------------------------------------------------------------------

    def _root(self) -> Root:
        try:
            return Root(self.ws.memory_dir)
        except FileNotFoundError:
            raise NoteError(f"no memory folder at {self.ws.memory_dir}") from None

    def sweep_temp(self, older_than: float = 3600.0) -> int:
        """Remove temp files a crashed writer left in memory/ (dot-leading, so never a note),
        under the writers' lock so a write in progress is never touched. Returns how many.
        With no lock file yet, no writer holds it: the sweep runs without creating one (a
        session that only reads leaves state/ as it found it; a writer starting meanwhile has
        only fresh temp files, which the age limit spares)."""
        if not self.ws.lock_path.exists():
            with self._root() as root:
                return root.sweep_temp(older_than)
        with self._lock():
            with self._root() as root:
                return root.sweep_temp(older_than)

    def _lock(self) -> FileLock:
        self.ws.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        return FileLock(self.ws.lock_path, timeout=self.lock_timeout)

    def _current(self, root: Root, path: str) -> bytes | None:
        """The note's bytes now, None if there is none; Unreadable if it is not a readable note."""
        try:
            return root.read_bytes(path, max_bytes=self.max_note_bytes)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise PathRefused(f"path refused: a folder on the way to {path!r} is a file") from None
        except FileTooLargeError:
            raise Unreadable(
                f"{path} is larger than {self.max_note_bytes} bytes (memory.max_note_bytes), so it "
                "cannot be read or replaced here; the person can fix it by hand or remove it"
            ) from None
        except ConfinementError as exc:
            raise Unreadable(f"{path} cannot be read as a note: {exc}") from None
        except IsADirectoryError:
            raise Unreadable(f"{path} is a folder, not a note") from None
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise PathRefused(f"path refused: a folder on the way to {path!r} is a file") from None
            raise Unreadable(f"{path} cannot be read: {exc.strerror or type(exc).__name__}") from None

    @staticmethod
    def _check_base(path: str, current: bytes | None, base: object, force: bool) -> None:
        if base is not None and not isinstance(base, str):
            raise Conflict(f"base must be the revision string memory_read gave for {path}")
        if current is None:
            if base:
                raise Conflict(f"{path} no longer exists: it was removed since you read it; "
                               "read the catalog again (write without base to create it)")
            return
        if force:
            return
        if not base:
            raise Conflict(
                f"{path} already exists: read it with memory_read and pass its revision as base "
                "to replace it"
            )
        if not _base_matches(base, current):
            # Echo the base only if it looks like a revision: anything else (a cut secret
            # would not be recognised by the scanner) is not repeated back.
            given = base.strip()
            shown = repr(given) if re.fullmatch(r"[0-9A-Fa-f]{1,64}", given) else "given"
            raise Conflict(f"{path} {CONFLICT_MESSAGE} (your base {shown} is not its "
                           f"current revision)")

    def _audit_sink(self) -> AuditSink:
        if self._audit is None:
            from policy.audit import AuditLog

            self._audit = AuditLog(self.ws.audit_path, redact=self.scanner.redact)
        return self._audit

    # -- the writer ---------------------------------------------------------------------

    def write(self, path: str, content: str | bytes, base: str | None = None, *,
              force: bool = False, call: Call | None = None) -> WriteResult:
        """Create or replace one note (whole file), through assistant.gated_write (the module
        docstring there says the order).

        `base`: the revision memory_read returned; required to replace an existing note.
        `force`: the person (CLI) replacing a note without a base; still scanned and gated,
        and still refused if the note changes while the gate is deciding.
        `call`: the tool call this write belongs to (its gate view and cancellation);
        None for the person's own writes, ruled on by this Memory's gate.
        """
        with self._root() as root:
            return gated_write(self.rules, root, path, content, call=call or Call(self.gate),
                               scanner=self.scanner, audit=self._audit_sink(), run_id=self.run_id,
                               check_base=lambda p, current: self._check_base(p, current, base, force))

    def remove(self, path: str, base: str | None = None) -> RemoveResult:
        """Remove one note; gated like a write (kind memory). `base`, if given, must match."""
        path = self.check_path(path)
        with self._root() as root:
            current = self._current(root, path)
            if current is None:
                raise NotFound(f"no note at {path}")
            if base is not None:
                self._check_base(path, current, base, False)
            authorize(self.rules, Call(self.gate), path, b"", current,
                      f"memory remove {path} (revision {revision(current)})", self.scanner.redact)
            try:
                with self._lock():
                    still_current(self.rules, root, path, current, "removal")
                    try:
                        root.remove(path)
                    except OSError as exc:
                        raise NoteError(f"{path} could not be removed: {exc.strerror or exc}") from None
                    warning = audit_line(self._audit_sink(), {
                        "event": "removed", "run": self.run_id, "kind": "memory", "target": path,
                        "sha256": sha256_hex(current), "revision": revision(current),
                    })
            except LockTimeout as exc:
                raise Busy(f"{exc}; nothing was removed") from None
        return RemoveResult(path=path, revision=revision(current), warning=warning)

    # -- the reader ---------------------------------------------------------------------

    def read_raw(self, path: str) -> tuple[bytes, str]:
        """(exact bytes, text) of a note; ungated and unredacted: for the person's editor only."""
        path = self.check_path(path)
        with self._root() as root:
            data = self._current(root, path)
        if data is None:
            raise NotFound(f"no note at {path}")
        try:
            return data, data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unreadable(f"{path} is not UTF-8 text (byte {exc.start}); fix it in an editor") from None

    def read(self, path: str) -> Note:
        """The note, redacted, with the revision of its bytes on disk."""
        data, text = self.read_raw(path)
        return Note(path=path, content=self.scanner.redact(text), revision=revision(data))

    # -- the catalog --------------------------------------------------------------------

    def list(self, offset: int = 0, limit: int = 50) -> list[Entry]:
        return self.list_page(offset, limit)[1]

    def list_page(self, offset: int = 0, limit: int = 50) -> tuple[int, list[Entry]]:
        """(total, entries) in catalog order."""
        try:
            return _catalog.page(self.ws.memory_dir, self.settings, self.scanner, offset=offset, limit=limit)
        except ValueError as exc:
            raise NoteError(str(exc)) from None
        except OSError as exc:
            raise NoteError(f"memory cannot be listed: {exc.strerror or exc}") from None

    def entries(self) -> list[Entry]:
        """Every note in catalog order, with summaries (for `assistant memory ls`)."""
        try:
            return _catalog.all_entries(self.ws.memory_dir, self.settings, self.scanner)
        except OSError as exc:
            raise NoteError(f"memory cannot be listed: {exc.strerror or exc}") from None

    def catalog(self) -> str:
        """The catalog block, exactly as the model sees it."""
        try:
            return _catalog.render(self.ws.memory_dir, self.settings, self.scanner)
        except OSError as exc:
            raise NoteError(f"memory cannot be listed: {exc.strerror or exc}") from None


# --- plain-function API ------------------------------------------------------------------------
# memory_write(path, content[, base]) / memory_read(path) as the issue names them, for scripts
# and tests: each call opens the workspace (`workspace=`, else $ASSISTANT_WORKSPACE, else the
# default), unlocks the scanner the way a run would (a vault that cannot be unlocked fails
# closed) and goes through the same Memory writer as the model's tool. mode="watched" (the
# default: the caller is the person, as with `assistant memory write`) or "unattended" (asks
# out of band per [approvals], denies when nobody can answer).

def open_memory(workspace: "Workspace | str | os.PathLike[str] | None" = None, *, mode: str = "watched") -> Memory:
    """A Memory for the workspace, from a session opened at the composition root
    (assistant.session): the same scanner and gate as chat and run."""
    from .session import SessionError, open_session

    try:
        return open_session(workspace, mode, kind="api", transcript=False).memory
    except SessionError as exc:
        raise NoteError(str(exc)) from None


def memory_write(path: str, content: str | bytes, base: str | None = None, *, workspace: "Workspace | str | os.PathLike[str] | None" = None,
                 mode: str = "watched") -> WriteResult:
    """Create or replace one note (see Memory.write); raises a NoteError subclass on refusal."""
    return open_memory(workspace, mode=mode).write(path, content, base=base)


def memory_read(path: str, *, workspace: "Workspace | str | os.PathLike[str] | None" = None) -> Note:
    """The note, redacted, with its revision (Note: .path, .content, .revision)."""
    return open_memory(workspace).read(path)


def memory_list(offset: int = 0, limit: int = 50, *, workspace: "Workspace | str | os.PathLike[str] | None" = None) -> list[Entry]:
    """One page of catalog entries, in catalog order."""
    return open_memory(workspace).list(offset, limit)
