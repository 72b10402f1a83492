"""files/ with the notes (`[sync] files = true`): this device's regular files out, a device's in.

Guards files/ the way the notes are guarded, where it applies (files/ has no history):
  out: only regular files reached through the confined Root at files/ (no link followed, no
       hard-linked file, no dot-leading or unaddressable name, nothing the person hid from the
       file tools with `[files] hidden`), each at most MAX_FILE_BYTES, go as `files/<path>` in
       the device's signed commit; every one that changed is scanned (its name whole and with
       its `/` taken out, its bytes) with this device's scanner first: a hit names the file and
       stops the sync before anything is committed or pushed. A file that cannot go (too large,
       a link, a name the grammar refuses) is named, never dropped silently; what went before
       stays on the branch as it was sent. A name not in NFC is named too (every receiver
       refuses it). What was last sent of a removed file stays known (exported.json
       "files_removed") until the path is sent again, for the echo rule.
  in:  per changed file of an enrolled device's verified branch, with base = its bytes at the
       last head integrated for files, local = this device's, remote = the device's now: the
       path grammar (no `..`, no absolute path; a link or a submodule in the tree is no file),
       NFC, this device's hidden patterns, the size cap, this device's scanner (name and
       bytes), the gate ("sync from NAME", kind file), then a confined swap under the file
       writers' lock (state/files.lock) over exactly the bytes looked at (a save landing
       meanwhile wins; the next sync retries). No merge: when both changed, this device's file
       stays and the device's is kept as a copy under state/sync/conflicts/, named by `sync
       status` until the person removes the copy. A removal takes a file only if it still holds
       the bytes the device removed; an edit here beats a removal there, and a removal here
       against an edit there brings the edit back. A file that fails a check is kept aside
       (state/sync/files-aside.json), never written. A device's file that is what this device
       last sent of it ("files" or "files_removed"), on a branch whose new commits held no
       other bytes there than ones this device sent, is an echo: nothing is done. Removals go
       first; at most MAX_SYNC_FILES files and MAX_SYNC_BYTES bytes are taken per sync, one
       file's bytes read at a time (the rest: the next sync).
With `[sync] files = false` nothing of files/ is sent and a device's files/ is not written here
(the head integrated for files does not move, so turning it on later takes them then).
"""

from __future__ import annotations

import os
import stat as _stat
import unicodedata
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Callable

from policy.audit import timestamp
from policy.fileio import FileLock, LockTimeout
from policy.gate import Gate
from policy.paths import PathGrammarError
from policy.paths import check as check_grammar

from assistant.confine import ConfinementError, FileTooLargeError, Root
from assistant.gating.context import AuditSink
from assistant.secrets.scanner import VAULT_RULE, Scanner
from assistant.sync.export import FILES, Outgoing, blob_id
from assistant.sync.git import Git
from assistant.sync.integrate import SPLIT_SECRET_NAME, DeviceCall, audit_line, changed_entries, unsecret
from assistant.sync.state import SyncState
from assistant.workspace.hidden import HiddenFiles
from assistant.workspace.layout import Workspace

__all__ = ["FILES", "MAX_FILE_BYTES", "MAX_SYNC_FILES", "MAX_SYNC_BYTES", "FileMount", "Outgoing", "FilesIn", "SecretInFile", "file_mount",
           "outgoing", "integrate_files", "file_status"]

MAX_FILE_BYTES = 8 * 1024 * 1024        # one file of files/ that travels
MAX_SYNC_FILES = 200                    # files of one device's files/ written or removed per sync
MAX_SYNC_BYTES = 64 * 1024 * 1024       # bytes of one device's files/ read in per sync (the rest: next sync)
HEADS = "files-integrated.json"         # device -> the head of its branch integrated for files/
ASIDE = "files-aside.json"              # files kept aside, as aside.json is for notes
CONFLICTS = "files-conflicts.json"      # files both sides changed: the device's copy, kept aside
CONFLICT_DIR = "conflicts"              # state/sync/conflicts/<device>-<commit>/<path>


class SecretInFile(Exception):
    """A file to be pushed holds a secret: names the file (never the value); nothing pushed."""


@dataclass(frozen=True)
class FileMount:
    """files/ as sync reaches it: the session's confined Root, the file writers' lock and the
    person's hidden patterns."""

    root: Root
    lock: Callable[[], AbstractContextManager[object]]
    hidden: HiddenFiles
    max_bytes: int = MAX_FILE_BYTES


def file_mount(ws: Workspace, root: Root) -> FileMount:
    """The mount of workspace WS (its `[files] hidden`, its state/files.lock) on the Root at files/."""
    return FileMount(root=root, hidden=HiddenFiles(ws.config.files.hidden), max_bytes=MAX_FILE_BYTES,
                     lock=lambda: FileLock(os.path.relpath(ws.files_lock_path, ws.root), what="files/",
                                           beneath=ws.root))


# -- out -------------------------------------------------------------------------------------


def outgoing(mount: FileMount, scanner: Scanner, book: dict, scanned: set[str] | frozenset[str] = frozenset()
             ) -> Outgoing:
    """What of files/ changed since BOOK (exported.json's "files"), every changed byte and name
    scanned: SecretInFile before anything is written. A file unchanged since it was sent (same
    size, mtime, ctime and inode) is not read again. SCANNED: blob ids this same sync took in
    and scanned with this scanner (integrate_files): their bytes are not scanned again."""
    changed: dict[str, bytes] = {}
    keep: dict[str, list] = {}
    unsent: list[tuple[str, str]] = []
    present: set[str] = set()
    limit = mount.max_bytes
    book = {p: v for p, v in book.items() if isinstance(v, list) and len(v) in (3, 5)} if isinstance(book, dict) else {}
    for e in mount.root.scan():
        present.add(e.path)
        mode = e.stat.st_mode
        if _stat.S_ISDIR(mode):
            continue
        old = book.get(e.path)
        if old is not None:
            keep[e.path] = old               # whatever happens below, what was sent stays sent
        if e.problem is not None:
            unsent.append((e.path, f"its name cannot travel ({e.problem})"))
            continue
        if mount.hidden.hides(e.path):
            continue                         # hidden from the file tools: never travels
        if unicodedata.normalize("NFC", e.path) != e.path:
            # every receiver refuses such a name: said here, where the person can rename it
            unsent.append((e.path, "its name is not in Unicode NFC form (every receiver refuses it); rename it"))
            continue
        if not _stat.S_ISREG(mode):
            unsent.append((e.path, "it is not a regular file (a symbolic link?); only regular files travel"))
            continue
        if e.stat.st_size > limit:
            unsent.append((e.path, f"it is {e.stat.st_size} bytes; a file that travels is at most {limit}"))
            continue
        seen = [e.stat.st_size, e.stat.st_mtime_ns, e.stat.st_ctime_ns, e.stat.st_ino]
        if old is not None and old[1:] == seen:
            continue                         # (a tool can put an mtime back, never a ctime)
        try:
            data = mount.root.read_bytes(e.path, max_bytes=limit)
        except FileTooLargeError:
            unsent.append((e.path, f"it grew past {limit} bytes while being read"))
            continue
        except FileNotFoundError:
            present.discard(e.path)          # removed since the listing: gone
            keep.pop(e.path, None)
            continue
        except (ConfinementError, OSError) as exc:
            unsent.append((e.path, f"it cannot be read: {getattr(exc, 'strerror', None) or exc}"))
            continue
        blob = blob_id(data)
        keep[e.path] = [blob, *seen]
        if old is None or old[0] != blob:
            changed[e.path] = data
    gone = sorted(p for p in book if p not in present)
    for p in sorted(changed):     # (a removal sends no name: the new tree simply lacks it)
        if scanner.find(p) or scanner.find(p.replace("/", "")):
            shown = f" ({scanner.redact(p)})" if scanner.find(p) else " (split across its folder names)"
            raise SecretInFile(f"a file's name in files/{shown} holds a secret; nothing was pushed. Rename it, "
                               "or hide it from the file tools and sync ([files] hidden), then sync again")
    for p, data in sorted(changed.items()):
        if keep[p][0] in scanned:
            continue                 # (just taken in, scanned clean by this scanner: its copy goes back)
        hits = scanner.find(data.decode("utf-8", errors="replace"))
        if hits:
            kind = "a value from the vault" if any(h.rule == VAULT_RULE for h in hits) else "a credential"
            raise SecretInFile(f"files/{p} holds {kind}; nothing was pushed. Take it out of the file, or hide "
                               "the file from the file tools and sync ([files] hidden in config.toml), then sync again")
    # a name that cannot go is still named: in a form that does not carry a secret
    return Outgoing(changed=changed, gone=gone, book=keep, unsent=[unsecret(scanner, p, why) for p, why in unsent])


# -- in --------------------------------------------------------------------------------------


@dataclass
class FilesIn:
    """What integrating one device's files/ did."""

    device: str
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)   # (path, where the device's copy is)
    aside: list[tuple[str, str]] = field(default_factory=list)
    retry: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)   # past this sync's bounds: the next sync takes them
    scanned: set[str] = field(default_factory=set)      # blob ids this sync scanned clean and wrote here


def _path_problem(mount: FileMount, scanner: Scanner, path: str) -> str | None:
    try:
        check_grammar(path)
    except PathGrammarError as exc:
        return f"path refused: {exc}"
    if unicodedata.normalize("NFC", path) != path:
        return "its name is not in Unicode NFC form (every name here is)"
    if mount.hidden.hides(path):
        return "this device hides that name from the file tools ([files] hidden)"
    if scanner.find(path) or scanner.find(path.replace("/", "")):
        return "its name holds a secret"
    return None


def _local(mount: FileMount, path: str) -> bytes | None:
    """This device's bytes of PATH, None for none; ConfinementError/OSError/FileTooLargeError
    for one that is not a readable regular file here (a link, a folder, too large)."""
    try:
        return mount.root.read_bytes(path, max_bytes=mount.max_bytes)
    except FileNotFoundError:
        return None


def integrate_files(*, git: Git, state: SyncState, mount: FileMount, gate: Gate, audit: AuditSink | None,
                    scanner: Scanner, device: str, head: str, run_id: str = "", own: str | None = None) -> FilesIn:
    """Take device DEVICE's files/ up to HEAD, a head of its branch already verified and
    integrated (integrate_device): every commit up to it is signed by the device. OWN: this
    device's own branch (the files it sent before, for the echo rule). At most MAX_SYNC_FILES
    files and MAX_SYNC_BYTES bytes are taken per sync: the rest are `deferred` (the head for
    files then stays, and the next sync takes them)."""
    result = FilesIn(device)
    heads = state.mapping(HEADS)
    old = heads.get(device)
    if old == head:
        return result
    if old and not git.is_ancestor(old, head):
        old = None          # (no base: a file that differs here is a conflict, never overwritten)
    changes, odd = changed_entries(git, old, head, FILES, "regular")
    result.aside.extend(odd)
    paths = []
    for path in sorted(changes):
        why = _path_problem(mount, scanner, path)
        if why is None:
            paths.append(path)
        else:
            result.aside.append((path, why))
    # sizes only (`cat-file --batch-check`): the bytes of each file are read one file at a time,
    # only for a file that is to land here, within this sync's bounds
    sizes = git.blobs(sorted({changes[p][1] for p in paths if changes[p][1]}), limit=-1)
    call = DeviceCall(gate, device)
    exported = state.mapping("exported.json")
    sent: dict[str, str] = {}                 # path -> blob id of what this device last sent of it
    for key in ("files_removed", "files"):
        part = exported.get(key)
        if isinstance(part, dict):
            for p, v in part.items():
                oid = v[0] if isinstance(v, list) and v else v
                if isinstance(p, str) and isinstance(oid, str):
                    sent[p] = oid
    echoes = _echoes(git, old, head, own, {p: sent[p] for p in paths if changes[p][1] and sent.get(p) == changes[p][1]})
    taken_files = taken_bytes = 0
    # removals first: a file the device put where a folder was lands once the folder is empty
    for path in sorted(paths, key=lambda p: changes[p][1] is not None):
        base_id, remote_id = changes[path]
        if remote_id == base_id or path in echoes:
            # an echo: the device holds exactly what this device last sent of it (its copy of
            # this device's file) and never changed it itself: this device's own state since
            # (an edit, a removal) stands
            continue
        folder = False
        try:
            local = _local(mount, path)
        except (ConfinementError, FileTooLargeError, OSError) as exc:
            if not (remote_id and _empty_folder(mount, path)):
                result.aside.append((path, f"this device's file cannot be read: {getattr(exc, 'strerror', None) or exc}"))
                continue
            local, folder = None, True        # an empty folder where the device has a file: replaced
        local_id = blob_id(local) if local is not None else None
        if local_id == remote_id:
            continue                          # (already so here: nothing read, nothing scanned)
        if remote_id is None:
            if local_id != base_id:
                continue                    # an edit here beats the removal there
            how = "remove"
        elif local is None or local_id == base_id:
            how = "write"
        else:
            how = "conflict"
        remote = None
        if remote_id:
            size = sizes.get(remote_id)
            if size is None:
                result.aside.append((path, "its bytes are missing from the device's commit"))
                continue
            if size > mount.max_bytes:
                result.aside.append((path, f"it is larger than {mount.max_bytes} bytes, the most a file that travels may be"))
                continue
            if taken_files and (taken_files >= MAX_SYNC_FILES or taken_bytes + size > MAX_SYNC_BYTES):
                result.deferred.append(path)
                continue
            taken_bytes += size
            remote = git.blobs([remote_id], limit=mount.max_bytes).get(remote_id)
            if not isinstance(remote, bytes):
                result.aside.append((path, "its bytes are missing from the device's commit"))
                continue
            if scanner.find(remote.decode("utf-8", errors="replace")):
                result.aside.append((path, "it holds a secret of this device (a vault value or a credential)"))
                continue
        elif taken_files >= MAX_SYNC_FILES:
            result.deferred.append(path)
            continue
        taken_files += 1
        if how == "conflict":
            try:
                copy = _keep_copy(state, device, head, path, remote)
            except (ConfinementError, OSError) as exc:
                result.aside.append((path, f"both devices changed it and the device's copy cannot be kept "
                                           f"({getattr(exc, 'strerror', None) or exc}); this device's file stays"))
                continue
            result.conflicts.append((path, copy))
            continue
        what = (f"sync file {path} ({len(remote)} bytes, " + ("new file)" if local is None else
                                                              f"replaces {len(local)} bytes)")
                if remote is not None else f"sync removes file {path}")
        try:
            decision = call.authorize("file", path, content=remote, current=local, summary=what)
        except Exception as exc:   # noqa: BLE001 - every error in the gate is a deny
            decision = None
            denied = f"the gate failed ({type(exc).__name__})"
        else:
            denied = None if decision.allowed else scanner.redact(str(decision.reason or "not allowed"))
        if denied is not None:
            result.aside.append((path, f"denied: {denied}"))
            continue
        try:
            with mount.lock():
                if folder:
                    mount.root.remove(path)       # (an empty folder only: rmdir refuses any other)
                if how == "write":
                    done = mount.root.write_over(path, remote, expect=local, max_bytes=mount.max_bytes)
                else:
                    done = mount.root.remove_if(path, expect=local, max_bytes=mount.max_bytes)
        except (LockTimeout, TimeoutError):
            result.retry.append(path)
            continue
        except (ConfinementError, OSError) as exc:
            result.aside.append((path, f"it cannot be written here: {getattr(exc, 'strerror', None) or exc}"))
            continue
        if not done:                        # saved (or removed) here meanwhile: that stays
            result.retry.append(path)
            continue
        (result.written if how == "write" else result.removed).append(path)
        if how == "write":
            result.scanned.add(remote_id)
        audit_line(audit, {"event": "written" if how == "write" else "removed", "run": run_id, "kind": "file",
                           "target": path, "bytes": len(remote) if remote is not None else 0,
                           "source": f"device:{device}", "reason": f"sync from {device}"})
    # a refused name may hold this device's secret: kept and shown only in a form without it
    result.aside = [unsecret(scanner, p, why) for p, why in result.aside]
    result.aside = [(p if p == SPLIT_SECRET_NAME else FILES + p, why) for p, why in result.aside]
    for p, _ in result.aside:
        audit_line(audit, {"event": "sync_kept_aside", "device": device, "target": p, "head": head})
    _record(state, result, head)
    if not result.retry and not result.deferred:
        heads[device] = head
        state.write(HEADS, heads)
    return result


def _empty_folder(mount: FileMount, path: str) -> bool:
    try:
        return _stat.S_ISDIR(mount.root.stat(path).st_mode) and not mount.root.listdir(path)
    except (ConfinementError, OSError):
        return False


def _held(git: Git, revs: list[str], paths: list[str]) -> dict[str, set[str]]:
    """path -> every blob id files/PATH held in the commits REVS name (both sides of each change),
    by one `git log --raw` per 200 paths (literal pathspecs)."""
    found: dict[str, set[str]] = {}
    for i in range(0, len(paths), 200):
        chunk = paths[i:i + 200]
        _, raw = git.run(["--literal-pathspecs", "log", "--format=tformat:", "--raw", "-z", "--no-renames",
                          "--no-abbrev", *revs, "--", *(FILES + p for p in chunk)])
        items = raw.split(b"\0")
        k = 0
        while k < len(items):
            head = items[k].lstrip(b"\n")
            if head.startswith(b":") and k + 1 < len(items):
                parts = head.split(b" ")
                name = items[k + 1]
                k += 2
                if len(parts) < 5 or not name.startswith(FILES.encode()):
                    continue
                try:
                    path = name[len(FILES):].decode("utf-8")
                except UnicodeDecodeError:
                    continue
                found.setdefault(path, set()).update(x.decode() for x in parts[2:4] if set(x) != {ord("0")})
            else:
                k += 1
    return found


def _echoes(git: Git, old: str | None, head: str, own: str | None, candidates: dict[str, str]) -> set[str]:
    """Of CANDIDATES (path -> the blob this device last sent of it, which the device's branch now
    holds), those that are an echo of this device's own: in the device's new commits (OLD..HEAD)
    the path never held bytes other than ones this device itself sent (on its branch OWN). A
    device whose commits held other bytes there changed the file itself (a revert to what this
    device sent included): that change is taken as usual."""
    if not candidates:
        return set()
    held = _held(git, [head] + ([f"^{old}"] if old else []), sorted(candidates))
    extra = {p: held.get(p, set()) - {oid} for p, oid in candidates.items()}
    mine = (_held(git, [own], sorted(p for p, x in extra.items() if x))
            if own and any(extra.values()) and git.rev(own) is not None else {})
    return {p for p, x in extra.items() if x <= mine.get(p, set())}


def _keep_copy(state: SyncState, device: str, head: str, path: str, data: bytes) -> str:
    """The device's bytes of a file both sides changed, kept at state/sync/conflicts/ (confined,
    atomic); the path of the copy, relative to the workspace."""
    rel = f"{device}-{head[:12]}/{path}"
    with Root.beneath(state.dir, CONFLICT_DIR) as root:
        root.write_bytes(rel, data)
    return f"state/sync/{CONFLICT_DIR}/{rel}"


def _record(state: SyncState, result: FilesIn, head: str) -> None:
    """files-aside.json and files-conflicts.json, as aside.json is for notes (audited)."""
    before = state.listing(ASIDE)
    aside = {(a.get("device"), a.get("path")): a for a in before if isinstance(a, dict)}
    for path in result.written + result.removed:
        aside.pop((result.device, path), None)
    for path, why in result.aside:
        aside[(result.device, path)] = {"device": result.device, "path": path, "reason": why, "commit": head,
                                        "time": timestamp()}
    kept = sorted(aside.values(), key=lambda a: (str(a.get("device")), str(a.get("path"))))
    if kept != before:
        state.write(ASIDE, kept)
    if result.conflicts:
        conflicts = open_file_conflicts(state)
        known = {(c.get("device"), c.get("path"), c.get("copy")) for c in conflicts}
        conflicts += [{"device": result.device, "path": FILES + p, "copy": copy, "commit": head,
                       "time": timestamp()} for p, copy in result.conflicts
                      if (result.device, FILES + p, copy) not in known]     # (a retried integration)
        state.write(CONFLICTS, conflicts)


def open_file_conflicts(state: SyncState) -> list[dict]:
    """The files both sides changed whose kept copy the person has not removed yet."""
    found = []
    for c in state.listing(CONFLICTS):
        copy = c.get("copy") if isinstance(c, dict) else None
        if isinstance(copy, str) and copy.startswith("state/sync/") and \
                os.path.lexists(os.path.join(state.dir, copy[len("state/sync/"):])):
            found.append(c)
    return found


def file_status(state: SyncState, enabled: bool, git: Git, devices: list[str], prefix: str) -> dict[str, object]:
    """`sync status`'s "files": whether files/ travels here, the files kept aside, the open
    conflicts (a copy not yet removed by the person) and, with files off, how many files each
    enrolled device's branch (as last fetched) carries that are not taken here."""
    conflicts = open_file_conflicts(state)
    not_taken = []
    if not enabled:
        for name in devices:
            head = git.rev(prefix + name)
            if head is None:
                continue
            _, raw = git.run(["ls-tree", "-r", "-z", "--name-only", head, "--", FILES])
            count = len([n for n in raw.split(b"\0") if n])
            if count:
                not_taken.append({"device": name, "files": count})
    return {"travel": enabled, "aside": [a for a in state.listing(ASIDE) if isinstance(a, dict)],
            "conflicts": conflicts, "not_taken": not_taken}
