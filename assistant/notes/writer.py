"""The one gated write: the sequence every write of a note (memory/) or a file (files/) takes.

Guards what lands on disk at a mount. `memory_write`, `file_write`, the person's memory CLI and
the Python API all write through `GatedWriter`, so the steps, their order and their refusals
are the same whoever asks; what differs between the mounts is spelled out in `Mount`.

In this order, and nowhere else:
  1. path: NFC, the one grammar (policy.paths), the mount's own rule (memory: `.md`; files: the
     person's hidden patterns)
  2. content: UTF-8 text, no NUL, no control characters on a plain-text mount, the size cap
  3. leak scan of content and path: a hit is refused at once, never put to a person, and the
     refusal names neither a vault secret nor where it was
  4. in the confined Root: one spelling per name (NFC clash), the current bytes (a link at the
     leaf is refused, never written through), a write that would drop a secret the writer only
     saw redacted is refused, read-before-overwrite (the base must be the current revision)
  5. the gate, asked through the call's own Authorizer (any error in it is a deny; an approval
     is bound to the sha256 of these exact bytes)
  6. under the mount's writers' lock (if it has one): the bytes are read again (a lost race is
     a refusal), history records unseen hand edits, the call must still be wanted, history's
     intent, the exact approved bytes written atomically through the Root, history's version
  7. one audit line (sha256 and size, never content)
Removal (memory only) takes steps 1, 4, 5, 6 and 7. A rename (memory only) is a write of the
new name with the old one's bytes and a removal of the old one, each asked of the gate, done
as one rename that never replaces (so nothing is ever half-done), and recorded as both.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import re
import stat
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Callable

from policy.paths import PathGrammarError
from policy.paths import check as check_grammar

from assistant.gating.context import AuditSink, CallAuthority
from assistant.confine import ConfinementError, FileTooLargeError, Root
from assistant.notes.history import AllowedBy, History, HistoryError, Origin, Version
from assistant.secrets.scanner import VAULT_RULE, Scanner
from assistant.notes.locking import LockTimeout
from assistant.notes.names import SpellingClash, clash_message, nfc, spelled_on_disk, spelling_clash
from assistant.notes.frontmatter import REVISION_CHARS
from assistant.display.terminal import char_name, control_character

__all__ = [
    "GatedWriter", "Mount", "WriteResult", "RemoveResult", "RenameResult", "CONFLICT_MESSAGE",
    "Refused", "PathRefused", "ContentRefused", "SecretRefused", "SecretWouldBeLost", "Conflict",
    "Denied", "NotFound", "Unreadable", "Busy",
]

CONFLICT_MESSAGE = "changed since you read it, read it again"


# --- refusals --------------------------------------------------------------------------------

class Refused(Exception):
    """A write (or a read of a note) refused, with a specific message safe to show the model
    (no secret). `assistant.memory.NoteError` is this class."""


class PathRefused(Refused):
    """The path breaks a path rule (the grammar, the mount's own rule, a spelling clash, a link)."""


class ContentRefused(Refused):
    """The content is not text for this mount: not UTF-8, carries NUL or a control character,
    or is over the size cap."""


class SecretRefused(Refused):
    """The content (or path) carries a stored secret or a credential shape. Never asked about.

    The message (what the model is told) never names a vault secret or says where it was:
    a named refusal is an oracle (write half a word list, learn which half holds the value).
    `names` (vault names and rule ids) is for the person's own CLI and the audit log;
    `vault` says whether a vault value was among the hits (the agent ends the turn on it)."""

    def __init__(self, message: str, *, names: tuple[str, ...] = (), vault: bool = False) -> None:
        super().__init__(message)
        self.names = names
        self.vault = vault


class SecretWouldBeLost(Refused):
    """The write would replace bytes holding a secret (a vault value or a credential) with
    text that no longer holds it: the writer saw them redacted, so the secret would be
    destroyed unseen (replaced by its "[redacted:...]" marker). Names neither the secret nor
    where it is."""


class Conflict(Refused):
    """Read-before-overwrite failed: the writer's base is not the current revision, or the
    bytes changed while the gate was deciding.

    The message is worded for the model (its tools: memory_read, `base`); `why` and `given` let
    a person's door word it for the person (`assistant memory write --base REV`):
    why: "exists" (no base, the note exists), "changed" (the base is not the current revision),
    "removed" (a base for a note that is gone), "raced" (changed while the write was decided),
    "created" (created by another writer meanwhile), "not-text" (base is not a string).
    given: the base as given when it looks like a revision (anything else is never echoed)."""

    def __init__(self, message: str, *, path: str = "", why: str = "changed", given: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.why = why
        self.given = given


class Denied(Refused):
    """The gate did not allow the write (deny, no approver, timeout, approval for other bytes),
    or the call was given up on before it was written."""


class NotFound(Refused, FileNotFoundError):
    """Nothing at that path (also a FileNotFoundError)."""


class Unreadable(Refused):
    """The entry exists but cannot be read as text (FIFO, folder, not UTF-8, too large)."""


class Busy(Refused):
    """Another writer held the mount's writers' lock for the whole bounded wait."""


# --- results ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class WriteResult:
    path: str
    revision: str     # keyed revision of the new bytes ("" on a mount without revisions)
    created: bool
    bytes: int = 0
    warning: str | None = None   # e.g. the audit line could not be appended


@dataclass(frozen=True)
class RemoveResult:
    path: str
    revision: str     # of the removed bytes
    warning: str | None = None


@dataclass(frozen=True)
class RenameResult:
    old: str          # as it was spelled on disk
    new: str
    revision: str     # of the bytes moved
    warning: str | None = None


# --- what differs between the mounts -----------------------------------------------------------

@dataclass(frozen=True)
class Mount:
    """One mount's side of the pipeline, every difference between the writers made explicit."""

    kind: str                                         # policy and audit kind: "memory" | "file"
    tool: str                                         # named in the approver's summary
    noun: str                                         # "note" | "file", in refusals
    root: Callable[[], AbstractContextManager[Root]]  # the confined Root at the mount
    scanner: Scanner
    max_bytes: int                                    # content cap
    read_limit: int                                   # cap on the current bytes (read-before-overwrite)
    size_setting: str = ""                            # where the cap is set, named in refusals
    too_large_hint: str = ""                          # said after the size refusal
    path_rule: Callable[[str], str | None] = lambda path: None   # the mount's own rule: a refusal or None
    plain_text: bool = True                           # control characters refused, not only NUL
    lock: Callable[[], AbstractContextManager[object]] | None = None   # the writers' lock
    history: History | None = None                    # None: no versions kept
    revision: Callable[[bytes], str] | None = None    # keyed revisions; None: the mount shows none
    edit_command: str = ""                            # the person's way to change a held secret
    audit: AuditSink | None = None
    run_id: str = ""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class GatedWriter:
    """The pipeline on one mount (see the module docstring for the order)."""

    def __init__(self, mount: Mount) -> None:
        self.m = mount

    # -- 1. path ----------------------------------------------------------------------------

    def check_path(self, path: object) -> str:
        """The path in NFC, or PathRefused saying which rule and which component."""
        if not isinstance(path, str):
            raise PathRefused(f"path must be a string, not {type(path).__name__}")
        path = nfc(path)     # one spelling per name (see check_spelling)
        try:
            check_grammar(path)   # the one grammar (policy.paths), as the gate and the Root apply it
        except PathGrammarError as exc:
            raise PathRefused(f"path refused: {exc}") from None
        refusal = self.m.path_rule(path)
        if refusal is not None:
            raise PathRefused(refusal)
        return path

    # -- 2. content -------------------------------------------------------------------------

    def check_content(self, content: object) -> bytes:
        """The exact bytes to write, or ContentRefused saying why."""
        noun = self.m.noun
        if isinstance(content, (bytes, bytearray)):
            data = bytes(content)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ContentRefused(
                    f"content is not valid UTF-8 (byte {exc.start}: {exc.reason}); {noun}s are UTF-8 text"
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
            raise ContentRefused(f"content contains a NUL character (at character {nul}); {noun}s are text")
        bad = control_character(text) if self.m.plain_text else None
        if bad is not None:
            # an escape sequence or a bare carriage return could hide a line from whoever reads it
            raise ContentRefused(
                f"content contains the control character {char_name(bad[1])} at character {bad[0]}; "
                f"{noun}s are plain text: only line breaks (\\n, or \\r\\n) and tabs are allowed")
        if len(data) > self.m.max_bytes:
            where = f" ({self.m.size_setting})" if self.m.size_setting else ""
            raise ContentRefused(
                f"content is {len(data)} bytes; a {noun} may be at most {self.m.max_bytes} bytes{where}."
                + (f" {self.m.too_large_hint}" if self.m.too_large_hint else ""))
        return data

    # -- 3. secrets -------------------------------------------------------------------------

    def check_secrets(self, path: str, data: bytes, *, kept: frozenset[str] = frozenset(),
                      person: bool = False) -> None:
        """Refuse at once if the content or the path carries a secret. Never asks anyone.

        A vault value: the message names neither the secret nor where it was (see
        SecretRefused). A credential shape alone: the message names the kind of credential.
        `kept`: exact secret texts already in the bytes (the person's editor puts them back);
        those may stay in the content, any other is refused."""
        names: list[str] = []
        vault = False
        # The path is scanned whole and with its separators taken out: a value split across
        # folder names (`Zq7-Plum-/Orbit-9931.md`) is still the value (review 2026-12-01).
        joined = path.replace("/", "")
        for text, allowed in ((data.decode("utf-8"), kept), (path, frozenset()), (joined, frozenset())):
            for f in self.m.scanner.find(text):
                if text[f.start:f.end] in allowed:
                    continue
                vault = vault or f.rule == VAULT_RULE
                if f.name not in names:
                    names.append(f.name)
        if not names:
            return
        noun = self.m.noun
        if person:     # the person's own write (their CLI, their script): said to them
            why = ("Secrets never go into memory or files: there every future prompt would read it. "
                   "Keep it in the vault only.")
            whose = "your vault"
        else:
            why = ("Secrets never go into memory or files, and this is not put to the person for approval "
                   "(approving it would park the value where every future prompt can read it).")
            whose = "the person's vault"
        if vault:
            raise SecretRefused(
                f"refused: the {noun} would carry a secret stored in {whose}. {why}",
                names=tuple(names), vault=True)
        raise SecretRefused(
            f"refused: the {noun} would carry a secret ({', '.join(names)}, a credential). {why} Leave it out.",
            names=tuple(names))

    def secrets_in(self, data: bytes) -> frozenset[str]:
        """The exact texts in `data` that reading it would redact (vault values, credentials)."""
        # Bytes that are not UTF-8 (a Latin-1 or binary file in files/) are read with U+FFFD for
        # the bytes that do not decode: a secret inside them is still text, and a write that
        # would drop it must be refused like one from a UTF-8 file (review 2026-12-01).
        text = data.decode("utf-8", errors="replace")
        return frozenset(text[s:e] for s, e, _ in self.m.scanner.redaction_spans(text))

    def check_edit_secrets(self, path: str, data: bytes, current: bytes | None) -> None:
        """An edit of a note holding secrets (`memory_edit`): each secret already there may stay,
        as often as it is there now and no more often (a copy would be a new one), none may go,
        and any other secret is refused as in any write."""
        before: dict[str, int] = {}
        if current is not None:
            old = current.decode("utf-8", errors="replace")
            for f in self.m.scanner.find(old):
                before[old[f.start:f.end]] = before.get(old[f.start:f.end], 0) + 1
        text = data.decode("utf-8")
        after: dict[str, int] = {}
        for f in self.m.scanner.find(text):
            after[text[f.start:f.end]] = after.get(text[f.start:f.end], 0) + 1
        self.check_secrets(path, data, kept=frozenset(t for t, n in after.items() if n <= before.get(t, 0)))
        self.check_keeps_secrets(path, data, current)

    def check_keeps_secrets(self, path: str, data: bytes, current: bytes | None) -> None:
        """Refuse a write that would drop a secret present in the current bytes: whoever wrote
        `data` saw them redacted, so the secret would be lost unseen (replaced by its marker).
        The person's editor (`person_edit`) puts values back instead."""
        if current is None:
            return
        held = self.secrets_in(current)
        if not held:
            return
        text = data.decode("utf-8")
        if any(secret not in text for secret in held):
            noun = self.m.noun
            how = f" (`{self.m.edit_command} {path}`)" if self.m.edit_command else ""
            raise SecretWouldBeLost(
                f"refused: {path} holds a secret (shown to you as a [redacted:...] marker); this text "
                "does not keep it, so writing it would destroy the secret unseen (the marker would "
                f"replace it). A {noun} holding a secret cannot be rewritten here: put the new text in "
                f"another {noun}, or ask the person to change this one{how}.")

    # -- 4. in the Root ---------------------------------------------------------------------

    @staticmethod
    def check_spelling(root: Root, path: str) -> None:
        """Refuse a name whose NFC form is an entry on disk spelled with other code points."""
        on_disk = spelling_clash(root, path)
        if on_disk is not None:
            raise PathRefused(f"path refused: {clash_message(path, on_disk)}")

    @staticmethod
    def on_disk(root: Root, path: str) -> str:
        """Where an existing entry of this NFC name is on disk: the name itself, or its one
        other spelling (a note a sync tool stored in NFD), for reading, removing and renaming
        it; a refusal if the name is on disk in two spellings."""
        try:
            return spelled_on_disk(root, path)
        except SpellingClash as exc:
            raise PathRefused(f"path refused: {clash_message(path, exc.on_disk)}") from None

    def current(self, root: Root, path: str) -> bytes | None:
        """The bytes now, None if there are none; a refusal if it is not a readable regular file."""
        noun = self.m.noun
        try:
            return root.read_bytes(path, max_bytes=self.m.read_limit)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise PathRefused(f"path refused: a folder on the way to {path!r} is a file") from None
        except FileTooLargeError:
            where = f" ({self.m.size_setting})" if self.m.size_setting else ""
            raise Unreadable(
                f"{path} is larger than {self.m.read_limit} bytes{where}, so it "
                "cannot be read or replaced here; the person can fix it by hand or remove it"
            ) from None
        except ConfinementError as exc:
            if self._is_link(root, path):
                # A symlink planted at the leaf (e.g. files/x.md -> ../memory/x.md) is refused,
                # not replaced: the model never learns where it points and the person's link stays.
                raise Unreadable(
                    f"refused: {path} is a symbolic link; {noun}s are never read or written through "
                    f"a symlink (the person can remove it by hand if it should become a {noun})") from None
            raise Unreadable(f"refused: {path} cannot be read as a {noun}: {exc}") from None
        except IsADirectoryError:
            raise Unreadable(f"{path} is a folder, not a {noun}") from None
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise PathRefused(f"path refused: a folder on the way to {path!r} is a file") from None
            raise Unreadable(f"{path} cannot be read: {exc.strerror or type(exc).__name__}") from None

    @staticmethod
    def _is_link(root: Root, path: str) -> bool:
        try:
            return stat.S_ISLNK(root.stat(path).st_mode)
        except OSError:
            return False

    def check_base(self, path: str, current: bytes | None, base: object, force: bool) -> None:
        """Read-before-overwrite: replacing existing bytes needs their current revision."""
        if base is not None and not isinstance(base, str):
            raise Conflict(f"base must be the revision string memory_read gave for {path}", path=path,
                           why="not-text")
        if current is None:
            if base:
                raise Conflict(f"{path} no longer exists: it was removed since you read it; "
                               "read the catalog again (write without base to create it)", path=path,
                               why="removed")
            return
        if force:
            return
        if not base:
            raise Conflict(
                f"{path} already exists: read it with memory_read and pass its revision as base "
                "to replace it", path=path, why="exists"
            )
        if not self._base_matches(base, current):
            # Echo the base only if it looks like a revision: anything else (a cut secret
            # would not be recognised by the scanner) is not repeated back.
            given = base.strip()
            looks = re.fullmatch(r"[0-9A-Fa-f]{1,%d}" % REVISION_CHARS, given) is not None
            shown = repr(given) if looks else "given"
            raise Conflict(f"{path} {CONFLICT_MESSAGE} (your base {shown} is not its "
                           f"current revision)", path=path, why="changed", given=given if looks else None)

    def _base_matches(self, base: str, current: bytes) -> bool:
        """`base` is the keyed revision of the current bytes (what memory_read gave). Nothing
        else is accepted: a plain sha256 (or a prefix of one) would make a right guess of a
        redacted secret succeed and a wrong one conflict."""
        return hmac.compare_digest(base.strip().lower().encode("ascii", "replace"),
                                   self._revision(current).encode("ascii"))

    def _revision(self, data: bytes) -> str:
        return self.m.revision(data) if self.m.revision is not None else ""

    # -- 5. the gate ------------------------------------------------------------------------

    def authorize(self, call: CallAuthority, path: str, data: bytes, current: bytes | None, summary: str) -> AllowedBy:
        try:
            decision = call.authorize(self.m.kind, path, content=data, current=current, summary=summary)
        except Exception as exc:  # noqa: BLE001 - every error inside the gate is a deny
            raise Denied(f"denied: the gate failed ({type(exc).__name__}); nothing was written") from None
        if not decision.allowed:
            reason = self.m.scanner.redact(str(decision.reason or "not allowed"))
            raise Denied(f"denied: {reason}; nothing was written")
        if decision.sha256 and decision.sha256 != _sha256(data):
            raise Denied("denied: the approval was for different content; nothing was written")
        return AllowedBy(approval=decision.request_id, scope=decision.remember,
                     grant=None if decision.request_id else self.m.scanner.redact(str(decision.reason or "allowed")))

    # -- the write --------------------------------------------------------------------------

    def write(self, path: object, content: object, base: object = None, *, call: CallAuthority, origin: Origin,
              force: bool = False, person_edit: bool = False, edit: bool = False) -> WriteResult:
        """Create or replace one entry (whole file), in the order of the module docstring.

        `base`: the revision the writer read; required to replace existing bytes unless
        `force` (the person's CLI, and the file tools, which have no revisions).
        `person_edit`: the person's editor, which put the original values back behind the
        markers left in place: secrets already there may stay, and one whose marker the person
        deleted may go. Any new secret is still refused. The person replacing a whole note with
        `force` (`assistant memory write --force`: they typed the new text, not an edit of a
        redacted view) may drop a secret it held; history keeps the version that had it.
        `edit`: a small edit computed from the current bytes (assistant.notes.edit): the
        secrets they hold may stay (as often as they are there, no more), none may go."""
        path = self.check_path(path)
        data = self.check_content(content)
        if not person_edit and not edit:
            self.check_secrets(path, data, person=origin.source == "person")
        new_revision = self._revision(data)     # (the key is loaded before anything is written)
        with self.m.root() as root:
            self.check_spelling(root, path)
            current = self.current(root, path)
            if person_edit:
                self.check_secrets(path, data, kept=self.secrets_in(current) if current is not None else frozenset())
            elif edit:
                self.check_edit_secrets(path, data, current)
            elif not (force and origin.source == "person"):
                self.check_keeps_secrets(path, data, current)
            self.check_base(path, current, base, force)
            what = (f"new {self.m.noun}" if current is None
                    else f"replaces revision {self._revision(current)}" if self.m.revision is not None
                    else f"replaces {len(current)} bytes")
            grant = self.authorize(call, path, data, current,
                                   f"{self.m.tool} {path} ({len(data)} bytes, {what})")
            try:
                with self._lock():
                    self._recheck(root, path, current, "write")
                    if not call.commit():   # its caller gave up on this call meanwhile
                        raise Denied(f"the call was given up on (it ran out of time, or its caller cancelled "
                                     f"it) before {path} was written; nothing was written")
                    version = self._begin(path, data, origin, grant, removed=False)
                    try:
                        # swapped in over exactly the bytes just checked: a save that lands
                        # after the recheck is swapped back, never overwritten unseen
                        written = root.write_over(path, data, expect=current, keep=self._keeper(path),
                                                  max_bytes=self.m.read_limit)
                    except ConfinementError as exc:
                        self._abandon()
                        raise PathRefused(f"path refused: {exc}") from None
                    except HistoryError as exc:     # a save that landed meanwhile could not be kept
                        self._abandon()
                        raise Refused(f"history could not be recorded ({exc}); nothing was written") from None
                    except OSError as exc:
                        self._abandon()
                        raise Refused(f"{path} could not be written: {exc.strerror or exc}") from None
                    if not written:
                        self._abandon()
                        raise Conflict(f"{path} {CONFLICT_MESSAGE} (it was saved by someone else while this write "
                                       "was being made; that save is kept, and nothing was written)",
                                       path=path, why="raced")
                    history_warning = self._commit(version)
                    event: dict[str, object] = {
                        "event": "written", "run": self.m.run_id, "kind": self.m.kind, "target": path,
                        "sha256": _sha256(data), "bytes": len(data), "created": current is None,
                        "source": origin.source}
                    if self.m.revision is not None:
                        event["revision"] = new_revision
                        event["base"] = self._revision(current) if current is not None else None
                    warning = self._audit_line(event) or history_warning
            except LockTimeout as exc:
                raise Busy(f"{exc}; nothing was written") from None
        return WriteResult(path=path, revision=new_revision, created=current is None,
                           bytes=len(data), warning=warning)

    def remove(self, path: object, base: object = None, *, call: CallAuthority, origin: Origin) -> RemoveResult:
        """Remove one entry; gated like a write. `base`, if given, must match. History
        records the removal (source `removal`)."""
        path = self.check_path(path)
        with self.m.root() as root:
            self.check_spelling(root, path)
            current = self.current(root, path)
            if current is None:
                raise NotFound(f"no {self.m.noun} at {path}")
            if base is not None:
                self.check_base(path, current, base, False)
            if origin.source != "person" and self.secrets_in(current):
                # whoever asks saw it redacted: removing it would destroy the secret unseen
                # (review 2026-12-01: an MCP client's memory_remove did, where its write could not)
                raise SecretWouldBeLost(
                    f"refused: {path} holds a secret (shown to you as a [redacted:...] marker), so removing "
                    f"it would destroy the secret unseen. A {self.m.noun} holding a secret can only be "
                    "removed by the person; nothing was removed.")
            revision = self._revision(current)
            grant = self.authorize(call, path, b"", current, f"{self.m.kind} remove {path} (revision {revision})")
            try:
                with self._lock():
                    self._recheck(root, path, current, "removal")
                    if not call.commit():   # the caller gave up on this call meanwhile
                        raise Denied(f"the call was given up on before {path} was removed; nothing was removed")
                    version = self._begin(path, current, origin, grant, removed=True)
                    try:
                        # removed only if it still holds the bytes just checked (see write)
                        removed = root.remove_if(path, expect=current, keep=self._keeper(path),
                                                 max_bytes=self.m.read_limit)
                    except HistoryError as exc:     # a save that landed meanwhile could not be kept
                        self._abandon()
                        raise Refused(f"history could not be recorded ({exc}); nothing was removed") from None
                    except OSError as exc:
                        self._abandon()
                        raise Refused(f"{path} could not be removed: {exc.strerror or exc}") from None
                    if not removed:
                        self._abandon()
                        raise Conflict(f"{path} {CONFLICT_MESSAGE} (it was saved by someone else while it was "
                                       "being removed; that save is kept, and nothing was removed)",
                                       path=path, why="raced")
                    history_warning = self._commit(version)
                    warning = self._audit_line({
                        "event": "removed", "run": self.m.run_id, "kind": self.m.kind, "target": path,
                        "sha256": _sha256(current), "revision": revision, "source": origin.source,
                    }) or history_warning
            except LockTimeout as exc:
                raise Busy(f"{exc}; nothing was removed") from None
        return RemoveResult(path=path, revision=revision, warning=warning)

    def rename(self, old: object, new: object, *, call: CallAuthority, origin: Origin) -> RenameResult:
        """Move one entry to a new name: gated as a write of NEW (the same bytes) and a removal
        of OLD. OLD may be on disk in another spelling (NFD): it is found by its NFC name.
        NEW must not exist (nor clash with another spelling). One rename that never replaces
        does it, under the lock, after the bytes are rechecked; history records NEW's version
        and OLD's removal. On any failure nothing has moved."""
        old = self.check_path(old)
        new = self.check_path(new)
        self.check_secrets(new, b"")            # a new name: scanned like any path written
        with self.m.root() as root:
            src = self.on_disk(root, old)
            clash = spelling_clash(root, new)
            if clash is not None and clash != src and not src.startswith(clash + "/"):
                # (a clash with OLD itself, or with a folder on OLD's way, is what the rename ends)
                raise PathRefused(f"path refused: {clash_message(new, clash)}")
            current = self.current(root, src)
            if current is None:
                raise NotFound(f"no {self.m.noun} at {old}")
            if src == new:
                raise Refused(f"{old} already has that name; nothing was renamed")
            if self.current(root, new) is not None:
                raise Refused(f"{new} already exists; nothing was renamed (remove it first, or choose "
                              "another name)")
            if origin.source != "person" and self.secrets_in(current):
                raise SecretWouldBeLost(f"refused: {src} holds a secret (shown to you as a [redacted:...] "
                                        f"marker); a {self.m.noun} holding a secret can only be renamed by the person")
            revision = self._revision(current)
            written = self.authorize(call, new, current, None,
                                     f"{self.m.tool} {new} ({len(current)} bytes, renamed from {src}, "
                                     f"revision {revision})")
            removed = self.authorize(call, src, b"", current,
                                     f"{self.m.kind} remove {src} (renamed to {new}, revision {revision})")
            try:
                with self._lock():
                    self._recheck(root, src, current, "rename")
                    self._recheck(root, new, None, "rename")
                    if not call.commit():
                        raise Denied(f"the call was given up on before {src} was renamed; nothing was renamed")
                    version = self._begin(new, current, origin, written, removed=False)
                    try:
                        root.rename(src, new, replace=False)
                    except FileExistsError:
                        self._abandon()
                        raise Conflict(f"{new} was created by another writer meanwhile; nothing was renamed",
                                       path=new, why="created") from None
                    except ConfinementError as exc:
                        self._abandon()
                        raise PathRefused(f"path refused: {exc}") from None
                    except OSError as exc:
                        self._abandon()
                        raise Refused(f"{src} could not be renamed: {exc.strerror or exc}") from None
                    if self.current(root, new) != current:     # a save landed in between: moved back
                        self._abandon()
                        try:
                            root.rename(new, src, replace=False)
                        except OSError:
                            pass    # (src was made again meanwhile: both stay, nothing is lost)
                        raise Conflict(f"{src} {CONFLICT_MESSAGE} (it was saved by someone else while it was "
                                       "being renamed; nothing was renamed)", path=src, why="raced")
                    warning = self._commit(version)
                    warning = self._record_removal(src, current, origin, removed) or warning
                    self._drop_empty_spellings(root, src, new)
                    warning = self._audit_line({
                        "event": "renamed", "run": self.m.run_id, "kind": self.m.kind, "target": new,
                        "from": src, "sha256": _sha256(current), "revision": revision, "source": origin.source,
                    }) or warning
            except LockTimeout as exc:
                raise Busy(f"{exc}; nothing was renamed") from None
        return RenameResult(old=src, new=new, revision=revision, warning=warning)

    @staticmethod
    def _drop_empty_spellings(root: Root, src: str, new: str) -> None:
        """After a rename out of folders spelled in another Unicode form (NFD): each such
        folder left empty is removed (rmdir: never one with anything in it), so no second
        spelling of the new name's folders stays behind."""
        parts = src.split("/")[:-1]
        keep = set(new.split("/")[:-1])
        for depth in range(len(parts), 0, -1):
            folder = "/".join(parts[:depth])
            if parts[depth - 1] in keep or nfc(parts[depth - 1]) == parts[depth - 1]:
                continue
            try:
                root.remove(folder)
            except OSError:
                return      # not empty (or gone): it and the folders above it stay

    def _record_removal(self, path: str, data: bytes, origin: Origin, grant: AllowedBy) -> str | None:
        """The old name's removal after a rename (its bytes are stored already, as the new name's)."""
        history = self.m.history
        if history is None:
            return None
        try:
            history.record(history.make_version(path, data, origin, run=self.m.run_id, grant=grant,
                                                removed=True), data)
            return None
        except HistoryError as exc:
            return f"the removal of {path} was not logged yet ({exc}); it will be at the next session start"

    # -- under the lock ---------------------------------------------------------------------

    def _lock(self) -> AbstractContextManager[object]:
        return self.m.lock() if self.m.lock is not None else nullcontext()

    def _recheck(self, root: Root, path: str, current: bytes | None, what: str) -> None:
        """The bytes the gate ruled on must still be there (another writer, or the person in
        an editor, may have changed them while the gate was deciding). Unseen hand edits
        become versions first."""
        now = self.current(root, path)
        self.catch_up(root, path, now)
        if now == current:
            return
        if current is None:
            raise Conflict(f"{path} was created by another writer meanwhile; {CONFLICT_MESSAGE}",
                           path=path, why="created")
        raise Conflict(f"{path} {CONFLICT_MESSAGE} (it changed while the {what} was being decided)",
                       path=path, why="raced")

    def _keeper(self, path: str) -> Callable[[bytes], None] | None:
        """What keeps a save displaced while the new bytes went in: a hand-edit version."""
        history = self.m.history
        if history is None:
            return None

        def keep(data: bytes) -> None:
            history.notice(path, data, run=self.m.run_id)
        return keep

    def catch_up(self, root: Root, path: str, now: bytes | None) -> None:
        """Under the lock, before a write: finish a crashed writer's version, then save unseen
        hand edits of this entry as a version. History that cannot be written stops the write."""
        history = self.m.history
        if history is None:
            return
        try:
            history.recover(lambda p: self.current(root, p))
            history.notice(path, now, run=self.m.run_id)
        except HistoryError as exc:
            raise Refused(f"history could not be recorded ({exc}); nothing was written") from None

    def _begin(self, path: str, data: bytes, origin: Origin, grant: AllowedBy, *, removed: bool) -> Version | None:
        history = self.m.history
        if history is None:
            return None
        try:
            version = history.make_version(path, data, origin, run=self.m.run_id, grant=grant, removed=removed)
            history.begin(version, data)
            return version
        except HistoryError as exc:
            raise Refused(f"history could not be recorded ({exc}); nothing was written") from None

    def _abandon(self) -> None:
        if self.m.history is not None:
            try:
                self.m.history.abandon()
            except HistoryError:
                pass   # a stale intent is dropped by the next writer (the entry did not change)

    def _commit(self, version: Version | None) -> str | None:
        """The entry changed: log its version. A failure is a warning (the write happened; the
        intent left behind logs it at the next write or session start)."""
        if self.m.history is None or version is None:
            return None
        try:
            self.m.history.commit(version)
            return None
        except HistoryError as exc:
            return f"the version was not logged yet ({exc}); it will be at the next session start"

    # -- 7. audit ---------------------------------------------------------------------------

    def _audit_line(self, event: dict[str, object]) -> str | None:
        """Append one audit event; returns a warning instead of raising (the write already happened)."""
        if self.m.audit is None:
            return None
        try:
            self.m.audit.append(event)
            return None
        except Exception as exc:  # noqa: BLE001 - reported, never silently lost
            return f"the audit line could not be written ({type(exc).__name__})"
