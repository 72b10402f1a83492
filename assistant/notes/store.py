"""Memory: memory/'s mount of the one gated writer, the redacting reader, and the catalog.

Guards what the assistant will believe next time. Every write and removal of a note goes
through `assistant.notes.writer.GatedWriter` (path rules -> content rules -> leak scan ->
read-before-overwrite -> the policy gate -> under the writers' lock: recheck, history, the
confined atomic write -> an audit line), the same pipeline as the file tools; this module
says only what is memory's own: `.md` names, the size cap from [memory], keyed revisions, the
writers' lock and history. Whole-file replacement, and small edits (`Memory.edit`,
assistant.notes.edit) computed into one.

Reads are ungated (context, not reach) but confined, bounded, and redacted by the scanner.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

from policy.gate import Gate

from assistant.notes import catalog as _catalog
from assistant.notes import edit as _edit
from assistant.notes import frontmatter as _notes

from assistant.gating.context import AuditSink, Authorizer, Call, CallAuthority
from assistant.confine import Root
from assistant.notes.writer import (
    CONFLICT_MESSAGE, Busy, Conflict, ContentRefused, Denied, GatedWriter, Mount, NotFound,
    PathRefused, Refused, RemoveResult, RenameResult, SecretRefused, SecretWouldBeLost, Unreadable, WriteResult,
)
from assistant.notes.history import History, HistoryError, Origin, Version
from assistant.notes.intake import notice_all
from assistant.secrets.revision_key import RevisionKeyError, load_key
from assistant.secrets.scanner import Scanner
from assistant.notes.locking import FileLock, LockTimeout
from assistant.notes.frontmatter import REVISION_CHARS
from assistant.notes.edit import Edit, EditRefused, EditTouchesSecret

if TYPE_CHECKING:
    from assistant.workspace.layout import Workspace

__all__ = [
    "Memory", "Note", "WriteResult", "RemoveResult", "RenameResult", "Entry", "REVISION_CHARS",
    "NoteError", "PathRefused", "ContentRefused", "SecretRefused", "SecretWouldBeLost", "Conflict",
    "Denied", "NotFound", "Unreadable", "Busy", "CONFLICT_MESSAGE", "Edit", "EditRefused", "EditTouchesSecret",
]

# --- refusals (the one gated-write pipeline's; see assistant.notes.writer) -----------------------

NoteError = Refused   # the memory API's name for a refusal (its CLI and callers catch it)

Entry = _catalog.Entry


def _markdown_only(path: str) -> str | None:
    """memory/'s own path rule: notes are markdown files."""
    if path.endswith(".md"):
        return None
    return f"path refused: {path!r} does not end in .md; notes are markdown files"


@dataclass(frozen=True)
class Note:
    path: str
    content: str      # redacted
    revision: str     # of the bytes on disk (12 hex chars of sha256)

    # "memory_read returns the note with its revision": besides .content / .revision, a Note
    # unpacks as `content, revision = note` and answers note["content"] / note["revision"].
    def __iter__(self) -> Iterator[str]:
        return iter((self.content, self.revision))

    def __getitem__(self, key: str | int | slice) -> str | tuple[str, ...]:
        if isinstance(key, str) and key in ("path", "content", "revision"):
            return str(getattr(self, key))
        if isinstance(key, (int, slice)):
            return (self.content, self.revision)[key]
        raise KeyError(key)


class Memory:
    """The notes of one workspace. `gate` is a policy.gate.Gate (it carries the run mode)."""

    def __init__(self, ws: "Workspace", scanner: Scanner, gate: Authorizer, *, lock_timeout: float = 10.0,
                 audit: AuditSink | None = None, run_id: str = "", history: History | None = None) -> None:
        if scanner is None:
            raise ValueError("Memory needs a leak scanner (assistant.secrets.scanner.Scanner); none means no writes")
        self.ws = ws
        self.scanner = scanner
        self.gate = gate
        self.run_id = run_id or (gate.run_id if isinstance(gate, Gate) else "")
        self.settings = _catalog.CatalogSettings.from_config(ws.config.memory)
        self.max_note_bytes = self.settings.max_note_bytes
        self.lock_timeout = lock_timeout
        # the audit log the session built (its gate's, for a Memory built around a bare Gate)
        self._audit = audit if audit is not None else gate.audit if isinstance(gate, Gate) else None
        self.history = history   # None: no versions kept (a bare Memory built by a test)
        self._revision_key: bytes | None = None
        self._on_close: Callable[[], None] | None = None
        self._on_change: Callable[[list[str]], None] | None = None

    # -- lifetime -----------------------------------------------------------------------

    def on_close(self, close: Callable[[], None]) -> "Memory":
        """Make close() (and leaving `with`) call `close` once: the Memory that
        assistant.memory.open_memory returns closes the session it was opened from. Returns self."""
        self._on_close = close
        return self

    def on_change(self, changed: Callable[[list[str]], None]) -> "Memory":
        """Call `changed(paths)` after each write, edit, removal or rename this Memory made (the
        session tells its search index, so a search right after a write finds it). Returns self."""
        self._on_change = changed
        return self

    def _changed(self, *paths: str) -> None:
        if self._on_change is not None:
            self._on_change(list(paths))

    def close(self) -> None:
        """Close what this Memory was opened with (see on_close); a Memory of a session the
        door closes itself holds nothing of its own. A second close does nothing."""
        close, self._on_close = self._on_close, None
        if close is not None:
            close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- revisions ----------------------------------------------------------------------

    def revision(self, data: bytes) -> str:
        """THE way a revision the model, an approver or a log sees is computed: 12 hex chars
        of HMAC-SHA256 of the exact bytes under this workspace's key (state/revision.key,
        created on first use). Keyed, so a revision beside a redacted note is no offline
        oracle for the secret redacted out of it."""
        if self._revision_key is None:
            try:
                self._revision_key = load_key(self.ws.state_dir)
            except RevisionKeyError as exc:
                raise NoteError(f"revisions cannot be computed: {exc}") from None
        return _notes.revision(data, self._revision_key)

    # -- the mount: memory/'s side of the one gated-write pipeline -----------------------

    def _writer(self, tool: str = "memory_write") -> GatedWriter:
        return GatedWriter(Mount(
            kind="memory", tool=tool, noun="note", root=self._root, scanner=self.scanner,
            max_bytes=self.max_note_bytes, read_limit=self.max_note_bytes,
            size_setting="memory.max_note_bytes",
            too_large_hint="Split it into several notes, one topic each.",
            path_rule=_markdown_only, lock=self.writers_lock, history=self.history, revision=self.revision,
            edit_command="assistant memory edit", audit=self._audit, run_id=self.run_id))

    def check_path(self, path: object) -> str:
        """The note path, or PathRefused saying which rule and which component."""
        return self._writer().check_path(path)

    def check_write(self, path: object, content: object) -> str:
        """The checks a write of `content` at `path` takes before the gate (path grammar and
        memory's rule, text and the size cap, the leak scan), without writing anything: for
        bytes that would enter history by another way than a write (sync's imported versions).
        Returns the path in NFC; the refusal of the first check that fails."""
        writer = self._writer()
        path = writer.check_path(path)
        writer.check_secrets(path, writer.check_content(content))
        return path

    def secrets_in(self, data: bytes) -> frozenset[str]:
        """The exact texts in `data` that reading it would redact (vault values, credentials)."""
        return self._writer().secrets_in(data)

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
            with self.writers_lock():
                return root.sweep_temp(older_than)

    def writers_lock(self) -> FileLock:
        """The workspace's writers' lock, state/memory.lock (every write, removal and history change
        takes it; state/ reached without following a link); the person's history commands hold it
        while they prune or forget."""
        return FileLock(os.path.relpath(self.ws.lock_path, self.ws.root), timeout=self.lock_timeout,
                        beneath=self.ws.root)

    def _current(self, root: Root, path: str) -> bytes | None:
        """The note's bytes now, None if there is none; Unreadable if it is not a readable note."""
        return self._writer().current(root, path)

    def _run_id(self) -> str:
        return self.run_id

    # -- the writer ---------------------------------------------------------------------

    def write(self, path: str, content: str | bytes, base: str | None = None, *,
              force: bool = False, origin: Origin | None = None, call: CallAuthority | None = None,
              person_edit: bool = False) -> WriteResult:
        """Create or replace one note (whole file), through the one gated-write pipeline
        (assistant.notes.writer: see its docstring for the order).

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
        result = self._writer().write(path, content, base, call=call or Call(self.gate),
                                      origin=origin or Origin("person"), force=force, person_edit=person_edit)
        self._changed(result.path)
        return result

    def edit(self, path: str, change: Edit, base: str | None = None, *, origin: Origin | None = None,
             call: CallAuthority | None = None) -> WriteResult:
        """One small change of an existing note (assistant.notes.edit: matched in the redacted
        text the reader saw, applied to the raw bytes, refused if it touches a redaction),
        computed into a whole-note write through the same gated writer (the approver sees the
        diff; history, audit and the leak scan apply). `base`: the revision the editor read;
        a stale one is refused before anything is matched. None (the person's CLI only): the
        note as it is now. `origin`, `call`: as for write."""
        path = self.check_path(path)
        writer = self._writer("memory_edit")
        try:
            data, raw = self.read_raw(path)
        except NotFound:
            raise NotFound(f"no note at {path}: an edit changes an existing note (a new note is written "
                           "whole, with memory_write); nothing was written") from None
        if base is not None:
            writer.check_base(path, data, base, False)    # a stale base: refused before anything is matched
        current = self.revision(data)
        new_raw, expected = _edit.apply(_edit.view_of(raw, self.scanner), change, path)
        _edit.check_view(new_raw, expected, self.scanner, path)
        result = writer.write(path, new_raw, current, call=call or Call(self.gate),
                              origin=origin or Origin("person"), edit=True)
        self._changed(result.path)
        return result

    def remove(self, path: str, base: str | None = None, *, origin: Origin | None = None,
               call: CallAuthority | None = None) -> RemoveResult:
        """Remove one note; gated like a write (kind memory). `base`, if given, must match.
        History keeps every version: the removal is recorded (source `removal`).
        `call`: as for write (its gate view and cancellation); None: this Memory's gate."""
        result = self._writer().remove(path, base, call=call or Call(self.gate), origin=origin or Origin("person"))
        self._changed(result.path)
        return result

    def rename(self, old: str, new: str, *, origin: Origin | None = None, call: Call | None = None) -> RenameResult:
        """Give a note a new name: gated as a write of NEW and a removal of OLD (kind memory),
        done as one rename that never replaces; NEW must not exist. OLD may be a name stored in
        another Unicode spelling (NFD, as macOS or a sync tool writes it), found by its NFC name.
        History records NEW's version and OLD's removal."""
        result = self._writer().rename(old, new, call=call or Call(self.gate), origin=origin or Origin("person"))
        self._changed(result.old, result.new)
        return result

    # -- history ------------------------------------------------------------------------

    def notice(self, paths: list[str] | None = None) -> list[Version]:
        """Record hand edits (and removals) of these notes, or of every note, made outside the
        project since history last looked. Cheap when nothing changed (a stat cache in state/)."""
        if self.history is None:
            return []
        try:
            return notice_all(self._writer(), self.ws.memory_dir, self.ws.state_dir, paths)
        except LockTimeout as exc:
            raise Busy(f"{exc}; hand edits were not recorded this time") from None
        except HistoryError as exc:
            raise NoteError(f"history: {exc}") from None

    # -- the reader ---------------------------------------------------------------------

    def read_raw(self, path: str) -> tuple[bytes, str]:
        """(exact bytes, text) of a note; ungated and unredacted: for the person's editor only."""
        writer = self._writer()
        path = writer.check_path(path)
        with self._root() as root:
            data = writer.current(root, writer.on_disk(root, path))   # (a name stored in NFD is found too)
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

    def catalog(self, *, flagged: list[str] | None = None) -> str:
        """The catalog block, exactly as the model sees it (`flagged` receives the paths of the
        notes it shows flagged as reading like an instruction)."""
        try:
            return _catalog.render(self.ws.memory_dir, self.settings, self.scanner, flagged=flagged)
        except OSError as exc:
            raise NoteError(f"memory cannot be listed: {exc.strerror or exc}") from None
