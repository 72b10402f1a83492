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
import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from policy.gate import Gate
from policy.paths import PathGrammarError
from policy.paths import check as check_path

from . import catalog as _catalog
from . import notes as _notes

from .confine import ConfinementError, FileTooLargeError, Root
from .call_context import AuditSink, Authorizer, Call
from .history import Grant, History, HistoryError, Origin, Version
from .leaks import VAULT_RULE, Scanner
from .locking import FileLock, LockTimeout
from .names import clash_message, nfc, spelling_clash
from .notes import REVISION_CHARS
from .terminal import char_name, control_character

if TYPE_CHECKING:
    from .workspace import Workspace

__all__ = [
    "Memory", "Note", "WriteResult", "RemoveResult", "Entry", "REVISION_CHARS",
    "NoteError", "PathRefused", "ContentRefused", "SecretRefused", "SecretWouldBeLost", "Conflict",
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
    """The content (or path) carries a stored secret or a credential shape. Never asked about.

    The message (what the model is told) never names a vault secret or says where it was:
    a named refusal is an oracle (write half a word list, learn which half holds the value).
    `names` (vault names and rule ids) is for the person's own CLI and the audit log;
    `vault` says whether a vault value was among the hits (the agent ends the turn on it)."""

    def __init__(self, message: str, *, names: tuple[str, ...] = (), vault: bool = False) -> None:
        super().__init__(message)
        self.names = names
        self.vault = vault


class SecretWouldBeLost(NoteError):
    """The write would replace a note holding a secret (a vault value or a credential) with
    text that no longer holds it: the writer saw the note redacted, so the secret would be
    destroyed unseen (replaced by its "[redacted:...]" marker). Names neither the secret nor
    where it is."""


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

    # "memory_read returns the note with its revision": besides .content / .revision, a Note
    # unpacks as `content, revision = note` and answers note["content"] / note["revision"].
    def __iter__(self):
        return iter((self.content, self.revision))

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str) and key in ("path", "content", "revision"):
            return getattr(self, key)
        if isinstance(key, (int, slice)):
            return (self.content, self.revision)[key]
        raise KeyError(key)


@dataclass(frozen=True)
class WriteResult:
    path: str
    revision: str
    created: bool
    bytes: int = 0
    warning: str | None = None   # e.g. the audit line could not be appended


@dataclass(frozen=True)
class RemoveResult:
    path: str
    revision: str     # of the removed bytes
    warning: str | None = None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Memory:
    """The notes of one workspace. `gate` is a policy.gate.Gate (it carries the run mode)."""

    def __init__(self, ws: "Workspace", scanner: Scanner, gate: Authorizer, *, lock_timeout: float = 10.0,
                 audit: AuditSink | None = None, run_id: str = "", history: History | None = None) -> None:
        if scanner is None:
            raise ValueError("Memory needs a leak scanner (assistant.leaks.Scanner); none means no writes")
        self.ws = ws
        self.scanner = scanner
        self.gate = gate
        self.run_id = run_id or (gate.run_id if isinstance(gate, Gate) else "")
        self.settings = _catalog.CatalogSettings.from_config(ws.config.memory)
        self.max_note_bytes = self.settings.max_note_bytes
        self.lock_timeout = lock_timeout
        self._audit = audit
        self.history = history   # None: no versions kept (a bare Memory built by a test)
        self._revision_key: bytes | None = None

    # -- revisions ----------------------------------------------------------------------

    def revision(self, data: bytes) -> str:
        """THE way a revision the model, an approver or a log sees is computed: 12 hex chars
        of HMAC-SHA256 of the exact bytes under this workspace's key (state/revision.key,
        created on first use). Keyed, so a revision beside a redacted note is no offline
        oracle for the secret redacted out of it."""
        if self._revision_key is None:
            from .revision_key import RevisionKeyError, load_key

            try:
                self._revision_key = load_key(self.ws.state_dir)
            except RevisionKeyError as exc:
                raise NoteError(f"revisions cannot be computed: {exc}") from None
        return _notes.revision(data, self._revision_key)

    def _base_matches(self, base: str, current: bytes) -> bool:
        """`base` is the keyed revision of the current bytes (what memory_read gave). Nothing
        else is accepted: a plain sha256 (or a prefix of one) would make a right guess of a
        redacted secret succeed and a wrong one conflict."""
        return hmac.compare_digest(base.strip().lower().encode("ascii", "replace"),
                                   self.revision(current).encode("ascii"))

    # -- rules --------------------------------------------------------------------------

    def check_path(self, path: Any) -> str:
        """The note path, or PathRefused saying which rule and which component."""
        if not isinstance(path, str):
            raise PathRefused(f"path must be a string, not {type(path).__name__}")
        path = nfc(path)     # one spelling per name (see _check_spelling)
        try:
            check_path(path)   # the one grammar (policy.paths), as the gate and the Root apply it
        except PathGrammarError as exc:
            raise PathRefused(f"path refused: {exc}") from None
        if not path.endswith(".md"):
            raise PathRefused(f"path refused: {path!r} does not end in .md; notes are markdown files")
        return path

    def check_content(self, content: Any) -> bytes:
        """The exact bytes to write, or ContentRefused saying why."""
        if isinstance(content, (bytes, bytearray)):
            data = bytes(content)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ContentRefused(
                    f"content is not valid UTF-8 (byte {exc.start}: {exc.reason}); notes are UTF-8 text"
                ) from None
        elif isinstance(content, str):
            text = content
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ContentRefused(
                    f"content is not valid UTF-8 (character {exc.start} is a lone surrogate)"
                ) from None
        else:
            raise ContentRefused(f"content must be text, not {type(content).__name__}")
        nul = text.find("\x00")
        if nul >= 0:
            raise ContentRefused(f"content contains a NUL character (at character {nul}); notes are text")
        bad = control_character(text)
        if bad is not None:
            # an escape sequence or a bare carriage return could hide a line from whoever reads it
            raise ContentRefused(
                f"content contains the control character {char_name(bad[1])} at character {bad[0]}; "
                "notes are plain text: only line breaks (\\n, or \\r\\n) and tabs are allowed")
        if len(data) > self.max_note_bytes:
            raise ContentRefused(
                f"content is {len(data)} bytes; a note may be at most {self.max_note_bytes} bytes "
                "(memory.max_note_bytes). Split it into several notes, one topic each."
            )
        return data

    def check_secrets(self, path: str, data: bytes, *, kept: frozenset[str] = frozenset()) -> None:
        """Refuse at once if the content or the path carries a secret. Never asks anyone.

        A vault value: the message names neither the secret nor where it was (see
        SecretRefused). A credential shape alone: the message names the kind of credential.
        `kept`: exact secret texts already in the note (the person's editor puts them back);
        those may stay in the content, any other is refused."""
        names: list[str] = []
        vault = False
        for text, allowed in ((data.decode("utf-8"), kept), (path, frozenset())):
            for f in self.scanner.find(text):
                if text[f.start:f.end] in allowed:
                    continue
                vault = vault or f.rule == VAULT_RULE
                if f.name not in names:
                    names.append(f.name)
        if not names:
            return
        why = ("Secrets never go into memory, and this is not put to the person for approval "
               "(approving it would park the value in every future prompt).")
        if vault:
            raise SecretRefused(
                f"refused: the note would carry a secret stored in the person's vault. {why}",
                names=tuple(names), vault=True)
        raise SecretRefused(
            f"refused: the note would carry a secret ({', '.join(names)}, a credential). {why} Leave it out.",
            names=tuple(names))

    def secrets_in(self, data: bytes) -> frozenset[str]:
        """The exact texts in `data` that reading it would redact (vault values, credentials)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return frozenset()
        return frozenset(text[s:e] for s, e, _ in self.scanner.redaction_spans(text))

    def check_keeps_secrets(self, path: str, data: bytes, current: bytes | None) -> None:
        """Refuse a write that would drop a secret present in the current bytes: whoever wrote
        `data` saw the note redacted, so the secret would be lost unseen (replaced by its
        marker). The person's editor (`person_edit`) puts values back instead."""
        if current is None:
            return
        held = self.secrets_in(current)
        if not held:
            return
        text = data.decode("utf-8")
        if any(secret not in text for secret in held):
            raise SecretWouldBeLost(
                f"refused: {path} holds a secret (shown to you as a [redacted:...] marker); this text "
                "does not keep it, so writing it would destroy the secret unseen (the marker would "
                "replace it). A note holding a secret cannot be rewritten here: put the new text in "
                f"another note, or ask the person to change this one (`assistant memory edit {path}`).")

    # -- plumbing -----------------------------------------------------------------------

    @staticmethod
    def _check_spelling(root: Root, path: str) -> None:
        """Refuse a name whose NFC form is an entry on disk spelled with other code points."""
        on_disk = spelling_clash(root, path)
        if on_disk is not None:
            raise PathRefused(f"path refused: {clash_message(path, on_disk)}")

    def _root(self) -> Root:
        try:
            return Root(self.ws.memory_dir)
        except FileNotFoundError:
            raise NoteError(f"no memory folder at {self.ws.memory_dir}") from None

    def sweep_temp(self, older_than: float = 3600.0) -> int:
        """Remove temp files a crashed writer left in memory/ (dot-leading, so never a note),
        under the writers' lock so a write in progress is never touched. Returns how many.
        With none to remove, the lock is not taken (a read-only command leaves no lock file)."""
        with self._root() as root:
            if root.sweep_temp(older_than, dry_run=True) == 0:
                return 0
            with self._lock():
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

    def _check_base(self, path: str, current: bytes | None, base: Any, force: bool) -> None:
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
        if not self._base_matches(base, current):
            # Echo the base only if it looks like a revision: anything else (a cut secret
            # would not be recognised by the scanner) is not repeated back.
            given = base.strip()
            shown = repr(given) if re.fullmatch(r"[0-9A-Fa-f]{1,%d}" % REVISION_CHARS, given) else "given"
            raise Conflict(f"{path} {CONFLICT_MESSAGE} (your base {shown} is not its "
                           f"current revision)")

    def _audit_line(self, event: dict[str, Any]) -> str | None:
        """Append one audit event; returns a warning instead of raising (the write already happened)."""
        try:
            log = self._audit
            if log is None:
                from policy.audit import AuditLog

                log = self._audit = AuditLog(self.ws.audit_path, redact=self.scanner.redact)
            log.append(event)
            return None
        except Exception as exc:  # noqa: BLE001 - reported, never silently lost
            return f"the audit line could not be written ({type(exc).__name__})"

    def _run_id(self) -> str:
        return self.run_id

    def _authorize(self, gate: Authorizer, path: str, data: bytes, current: bytes | None, summary: str) -> Grant:
        try:
            decision = gate.authorize("memory", path, content=data, current=current, summary=summary)
        except Exception as exc:  # noqa: BLE001 - every error inside the gate is a deny
            raise Denied(f"denied: the gate failed ({type(exc).__name__}); nothing was written") from None
        if not decision.allowed:
            reason = self.scanner.redact(str(decision.reason or "not allowed"))
            raise Denied(f"denied: {reason}; nothing was written")
        if decision.sha256 and decision.sha256 != _sha256(data):
            raise Denied("denied: the approval was for different content; nothing was written")
        return Grant(approval=decision.request_id, scope=decision.remember,
                     grant=None if decision.request_id else self.scanner.redact(str(decision.reason or "allowed")))

    # -- the writer ---------------------------------------------------------------------

    def write(self, path: str, content: str | bytes, base: str | None = None, *,
              force: bool = False, origin: Origin | None = None, call: Call | None = None,
              person_edit: bool = False) -> WriteResult:
        """Create or replace one note (whole file). See the module docstring for the order.

        `base`: the revision memory_read returned; required to replace an existing note.
        `force`: the person (CLI) replacing a note without a base; still scanned and gated,
        and still refused if the note changes while the gate is deciding.
        `origin`: who writes (history's source, model, untrusted sources read); default the person.
        `call`: the tool call this write belongs to (its gate view and cancellation); None for
        the person's own writes, ruled on by this Memory's gate.
        `person_edit`: the person's editor (`assistant memory edit`), which put the original
        values back behind the markers left in place: secrets already in the note may stay,
        and one whose marker the person deleted may go. Any new secret is still refused.
        Without it, a write that would drop a secret held by the current note is refused
        (SecretWouldBeLost).
        """
        origin = origin or Origin("person")
        call = call or Call(self.gate)
        path = self.check_path(path)
        data = self.check_content(content)
        if not person_edit:
            self.check_secrets(path, data)
        new_revision = self.revision(data)     # (the key is loaded before anything is written)
        with self._root() as root:
            self._check_spelling(root, path)
            current = self._current(root, path)
            if person_edit:
                self.check_secrets(path, data, kept=self.secrets_in(current) if current is not None else frozenset())
            else:
                self.check_keeps_secrets(path, data, current)
            self._check_base(path, current, base, force)
            what = "new note" if current is None else f"replaces revision {self.revision(current)}"
            grant = self._authorize(call.gate, path, data, current,
                                    f"memory_write {path} ({len(data)} bytes, {what})")
            try:
                with self._lock():
                    now = self._current(root, path)
                    self._catch_up(root, path, now)   # unseen hand edits become versions first
                    if (now is None) != (current is None) or (now is not None and now != current):
                        if current is None:
                            raise Conflict(f"{path} was created by another writer meanwhile; "
                                           f"{CONFLICT_MESSAGE}")
                        raise Conflict(f"{path} {CONFLICT_MESSAGE} (it changed while the write "
                                       "was being decided)")
                    if call.cancel.cancelled():   # the agent gave up on this call meanwhile
                        raise Denied(f"the call ran out of time (limits.tool_timeout) before {path} "
                                     "was written; nothing was written")
                    version = self._begin(path, data, origin, grant, removed=False)
                    try:
                        root.write_bytes(path, data)
                    except ConfinementError as exc:
                        self._abandon()
                        raise PathRefused(f"path refused: {exc}") from None
                    except OSError as exc:
                        self._abandon()
                        raise NoteError(f"{path} could not be written: {exc.strerror or exc}") from None
                    history_warning = self._commit(version)
                    warning = self._audit_line({
                        "event": "written", "run": self._run_id(), "kind": "memory", "target": path,
                        "sha256": _sha256(data), "revision": new_revision, "bytes": len(data),
                        "base": self.revision(current) if current is not None else None,
                        "created": current is None, "source": origin.source,
                    }) or history_warning
            except LockTimeout as exc:
                raise Busy(f"{exc}; nothing was written") from None
        return WriteResult(path=path, revision=new_revision, created=current is None,
                           bytes=len(data), warning=warning)

    def remove(self, path: str, base: str | None = None, *, origin: Origin | None = None,
               call: Call | None = None) -> RemoveResult:
        """Remove one note; gated like a write (kind memory). `base`, if given, must match.
        History keeps every version: the removal is recorded (source `removal`).
        `call`: as for write (its gate view and cancellation); None: this Memory's gate."""
        origin = origin or Origin("person")
        call = call or Call(self.gate)
        path = self.check_path(path)
        with self._root() as root:
            self._check_spelling(root, path)
            current = self._current(root, path)
            if current is None:
                raise NotFound(f"no note at {path}")
            if base is not None:
                self._check_base(path, current, base, False)
            grant = self._authorize(call.gate, path, b"", current, f"memory remove {path} (revision {self.revision(current)})")
            try:
                with self._lock():
                    now = self._current(root, path)
                    self._catch_up(root, path, now)
                    if now != current:
                        raise Conflict(f"{path} {CONFLICT_MESSAGE} (it changed while the removal was "
                                       "being decided)")
                    if call.cancel.cancelled():   # the caller gave up on this call meanwhile
                        raise Denied(f"the call was given up on before {path} was removed; nothing was removed")
                    version = self._begin(path, current, origin, grant, removed=True)
                    try:
                        root.remove(path)
                    except OSError as exc:
                        self._abandon()
                        raise NoteError(f"{path} could not be removed: {exc.strerror or exc}") from None
                    history_warning = self._commit(version)
                    warning = self._audit_line({
                        "event": "removed", "run": self._run_id(), "kind": "memory", "target": path,
                        "sha256": _sha256(current), "revision": self.revision(current),
                        "source": origin.source,
                    }) or history_warning
            except LockTimeout as exc:
                raise Busy(f"{exc}; nothing was removed") from None
        return RemoveResult(path=path, revision=self.revision(current), warning=warning)

    # -- history ------------------------------------------------------------------------

    def _catch_up(self, root: Root, path: str, now: bytes | None) -> None:
        """Under the lock, before a write: finish a crashed writer's version, then save unseen
        hand edits of this note as a version. History that cannot be written stops the write."""
        if self.history is None:
            return
        try:
            self.history.recover(lambda p: self._current(root, p))
            self.history.notice(path, now, run=self._run_id())
        except HistoryError as exc:
            raise NoteError(f"history could not be recorded ({exc}); nothing was written") from None

    def _begin(self, path: str, data: bytes, origin: Origin, grant: Grant, *, removed: bool) -> Version | None:
        if self.history is None:
            return None
        try:
            version = self.history.make_version(path, data, origin, run=self._run_id(), grant=grant,
                                                removed=removed)
            self.history.begin(version, data)
            return version
        except HistoryError as exc:
            raise NoteError(f"history could not be recorded ({exc}); nothing was written") from None

    def _abandon(self) -> None:
        if self.history is not None:
            try:
                self.history.abandon()
            except HistoryError:
                pass   # a stale intent is dropped by the next writer (the note did not change)

    def _commit(self, version: Version | None) -> str | None:
        """The note changed: log its version. A failure is a warning (the write happened; the
        intent left behind logs it at the next write or session start)."""
        if self.history is None or version is None:
            return None
        try:
            self.history.commit(version)
            return None
        except HistoryError as exc:
            return f"the version was not logged yet ({exc}); it will be at the next session start"

    def notice(self, paths: list[str] | None = None) -> list[Version]:
        """Record hand edits (and removals) of these notes, or of every note, made outside the
        project since history last looked. Cheap when nothing changed (a stat cache in state/)."""
        if self.history is None:
            return []
        from .history_scan import notice_all

        try:
            return notice_all(self, paths)
        except LockTimeout as exc:
            raise Busy(f"{exc}; hand edits were not recorded this time") from None
        except HistoryError as exc:
            raise NoteError(f"history: {exc}") from None

    # -- the reader ---------------------------------------------------------------------

    def read_raw(self, path: str) -> tuple[bytes, str]:
        """(exact bytes, text) of a note; ungated and unredacted: for the person's editor only."""
        path = self.check_path(path)
        with self._root() as root:
            self._check_spelling(root, path)
            data = self._current(root, path)
        if data is None:
            raise NotFound(f"no note at {path}")
        try:
            return data, data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unreadable(f"{path} is not UTF-8 text (byte {exc.start}); fix it in an editor") from None

    def read(self, path: str) -> Note:
        """The note, redacted, with the revision of its bytes on disk."""
        path = self.check_path(path)
        data, text = self.read_raw(path)
        return Note(path=path, content=self.scanner.redact(text), revision=self.revision(data))

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

def open_memory(workspace: Any = None, *, mode: str = "watched") -> Memory:
    """A Memory for the workspace, from a session opened at the composition root
    (assistant.session): the same scanner and gate as chat and run."""
    from .session import SessionError, open_session

    try:
        return open_session(workspace, mode, kind="api", transcript=False).memory
    except SessionError as exc:
        raise NoteError(str(exc)) from None


def memory_write(path: str, content: str | bytes, base: str | None = None, *, workspace: Any = None,
                 mode: str = "watched") -> WriteResult:
    """Create or replace one note (see Memory.write); raises a NoteError subclass on refusal."""
    return open_memory(workspace, mode=mode).write(path, content, base=base)


def memory_read(path: str, *, workspace: Any = None) -> Note:
    """The note, redacted, with its revision (Note: .content, .revision; unpacks to both)."""
    return open_memory(workspace).read(path)


def memory_list(offset: int = 0, limit: int = 50, *, workspace: Any = None) -> list[Entry]:
    """One page of catalog entries, in catalog order."""
    return open_memory(workspace).list(offset, limit)
