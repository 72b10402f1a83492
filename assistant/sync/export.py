"""Outgoing: this device's notes and their history as a signed commit on its own branch.

Guards what leaves the device. Only notes and their versions travel (never vault.enc,
grants.json, config.toml or state/), and files/ where `[sync] files = true`: the commit's tree
holds `notes/<path>` (each note's current bytes), `sync/events.jsonl` (the versions since the
last sync, with their provenance), `sync/versions/<n>` (those versions' bytes) and
`files/<path>` (assistant.sync.files decides and scans what of files/ goes). Every version that would be pushed is scanned
with this device's scanner first: a hit names the note and stops before anything is committed
or pushed. No event carries a digest of its bytes (history's sha256 or keyed revision): the
only ids that travel are git's, of bytes that travel themselves. Versions that came in by sync
are not sent back out (each device publishes only what was made on it).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Iterable

from assistant.notes.history import History, Version
from assistant.secrets.scanner import VAULT_RULE, Scanner
from assistant.sync.git import Git
from assistant.sync.keys import DeviceKey
from assistant.sync.state import SyncState

__all__ = ["Exported", "Outgoing", "SecretInNote", "export", "branch_of", "blob_id", "version_key", "open_conflicts",
           "last_sent",
           "EVENTS", "VERSIONS", "NOTES"]

NOTES = "notes/"
FILES = "files/"          # [sync] files = true: files/<path>, a regular file of files/ (assistant.sync.files)
EVENTS = "sync/events.jsonl"
VERSIONS = "sync/versions/"
BUILD_REF = "refs/sync/build"
RESOLVING = ("person", "revert", "hand-edit")     # a later version from these resolves a conflict


class SecretInNote(Exception):
    """A version to be pushed holds a secret: names the note (never the value); nothing pushed."""


@dataclass(frozen=True)
class Exported:
    commit: str | None       # the new commit, None if nothing changed
    versions: int
    notes: int
    check_seconds: float
    files: int = 0           # changes of files/ sent ([sync] files = true)
    unsent: tuple[tuple[str, str], ...] = ()    # (path, why) of files/ that cannot travel


@dataclass(frozen=True)
class Outgoing:
    """What of files/ goes in this commit ([sync] files = true; made and scanned by
    assistant.sync.files.outgoing)."""

    changed: dict[str, bytes]               # path -> the bytes to send
    gone: list[str]                         # sent before, no longer in files/
    book: dict[str, list]                   # path -> [blob id, size, mtime_ns, ctime_ns, inode] of what the branch holds
    unsent: list[tuple[str, str]]           # (path, why) of files that cannot go


def branch_of(device: str) -> str:
    return f"refs/heads/devices/{device}"


def blob_id(data: bytes) -> str:
    """git's id of these bytes as a blob (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def version_key(v: Version) -> str:
    """A version's identity in this device's own bookkeeping (state/sync/exported.json)."""
    return f"{v.time}|{v.path}|{v.sha256}|{v.source}|{int(v.removed)}"


def open_conflicts(versions: Iterable[Version]) -> dict[str, list[Version]]:
    """path -> its conflict versions not yet resolved (no later version by the person)."""
    found: dict[str, list[Version]] = {}
    for v in versions:
        if v.conflict:
            found.setdefault(v.path, []).append(v)
        elif v.path in found and v.source in RESOLVING and not v.imported:
            del found[v.path]
    return found


def last_sent(book: dict) -> dict[str, str]:
    """path -> sha256 of the bytes this device last sent of that note (exported.json: "heads"
    for the notes its branch holds, "removed" for those it sent and removed since)."""
    found = {}
    for key in ("removed", "heads"):
        part = book.get(key)
        if isinstance(part, dict):
            found.update({p: sha for p, sha in part.items() if isinstance(p, str) and isinstance(sha, str)})
    return found


def _arrived(v: Version) -> bool:
    """A version that came from another device (imported, or written or removed here by a sync):
    never sent back out."""
    return v.imported or bool(v.device) or v.source.startswith("device:")


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _data(out: list[bytes], payload: bytes) -> None:
    out.append(b"data %d\n" % len(payload))
    out.append(payload)
    out.append(b"\n")


def _scan(scanner: Scanner, path: str, data: bytes, what: str) -> None:
    text = data.decode("utf-8", errors="replace")
    hits = scanner.find(text)
    if hits:
        kind = "a value from the vault" if any(h.rule == VAULT_RULE for h in hits) else "a credential"
        raise SecretInNote(
            f"{path} holds {kind} in {what}; nothing was pushed. Remove it from the note "
            f"(`assistant memory edit {path}`) and drop the versions that held it "
            f"(`assistant memory forget {path}`), then sync again")


def export(git: Git, state: SyncState, history: History, scanner: Scanner, key: DeviceKey,
           device: str, parent: str | None, files: Outgoing | None = None) -> Exported:
    """Commit what changed since the last export onto refs/heads/devices/DEVICE (signed; PARENT:
    the branch's head now, None for none), or nothing. SecretInNote before anything is written
    if any version to go holds a secret. FILES: what of files/ goes too (assistant.sync.files,
    already scanned); None ([sync] files = false): the branch's files/ is left as it was."""
    started = time.monotonic()
    versions = history.versions()
    book = state.mapping("exported.json")
    done = set(book.get("versions", []))
    sent_heads: dict[str, str] = dict(book.get("heads", {}))
    new = [v for v in versions if not _arrived(v) and version_key(v) not in done]
    heads: dict[str, Version] = {}
    for v in versions:            # (what history.head gives, from the one read of the log)
        if not v.imported:
            heads[v.path] = v
    now = {p: v.sha256 for p, v in heads.items() if not v.removed}
    changed = sorted(p for p, sha in now.items() if sent_heads.get(p) != sha)
    gone = sorted(p for p in sent_heads if p not in now)
    tombstones = [t for t in state.listing("tombstones.json") if isinstance(t, str)]
    # a tombstone for a name holding a secret that never travelled (no version of it was ever
    # exported): no other device holds anything to forget, and its name must not go either
    unsent = [t for t in tombstones if (scanner.find(t) or scanner.find(t.replace("/", "")))
              and not any(f"|{t}|" in k for k in done)]
    if unsent:
        tombstones = [t for t in tombstones if t not in unsent]
        state.write("tombstones.json", tombstones)
    unsent = tuple(files.unsent) if files is not None else ()
    if not new and not changed and not gone and not tombstones and not (files and (files.changed or files.gone)):
        if files is not None and files.book != book.get("files", {}):
            book["files"] = files.book          # (only sizes and times moved: nothing to send)
            state.write("exported.json", book)
        return Exported(None, 0, 0, time.monotonic() - started, unsent=unsent)

    # every byte that would go is read and scanned before anything is written, names too
    for p in sorted({*changed, *gone, *tombstones, *(v.path for v in new)}):
        if scanner.find(p) or scanner.find(p.replace("/", "")):
            # named redacted; a value split across folder names is not named at all (its halves would show)
            shown = f" ({scanner.redact(p)})" if scanner.find(p) else " (split across its folder names)"
            raise SecretInNote(f"a note's name{shown} holds a secret; nothing was pushed. "
                               "Rename the note (`assistant memory rename`) and drop the versions under the old "
                               "name (`assistant memory forget`), then sync again")
    contents: dict[str, bytes] = {}
    for p in changed:
        contents[now[p]] = data = history.object_bytes(now[p])
        _scan(scanner, p, data, "its current text")
    events: list[dict] = [{"op": "forget", "path": p} for p in tombstones]
    out: list[bytes] = []
    n = 0
    open_now: dict[str, list[Version]] = {}    # a resolving version says what it resolved (blob ids)
    newkeys = {version_key(v) for v in new}
    for v in versions:
        if v.conflict:
            open_now.setdefault(v.path, []).append(v)
        if version_key(v) not in newkeys or _arrived(v):
            if v.source in RESOLVING and not v.imported:
                open_now.pop(v.path, None)
            continue
        event = {"op": "version", "path": v.path, "time": v.time, "source": v.source, "run": v.run,
                 "approval": v.approval, "scope": v.scope, "grant": v.grant, "model": v.model,
                 "sources": list(v.sources), "removed": v.removed, "baseline": v.baseline, "bytes": v.bytes}
        for text in (v.run, v.grant or "", v.model, *v.sources):
            if text:
                _scan(scanner, v.path, text.encode("utf-8"), "a version's provenance")
        if v.source in RESOLVING and v.path in open_now:
            event["resolves"] = sorted({blob_id(history.object_bytes(c.sha256)) for c in open_now.pop(v.path)})
        if not v.removed:
            data = contents.get(v.sha256)
            if data is None:
                data = contents[v.sha256] = history.object_bytes(v.sha256)
            _scan(scanner, v.path, data, f"its version of {v.time}")
            event["v"] = n
            out.append(b"M 100644 inline " + _quote(f"{VERSIONS}{n}").encode("utf-8") + b"\n")
            _data(out, data)
            n += 1
        events.append(event)
    checked = time.monotonic() - started

    # the tree, built on the last commit by one fast-import, then signed
    ref = branch_of(device)
    stream: list[bytes] = [f"reset {BUILD_REF}\n".encode(), f"commit {BUILD_REF}\n".encode(),
                           f"committer sync <sync@{device}> {int(time.time())} +0000\n".encode()]
    _data(stream, b"build\n")
    if parent:
        stream.append(f"from {parent}\n".encode())
    stream.append(b"D sync\n")
    for p in changed:
        stream.append(b"M 100644 inline " + _quote(NOTES + p).encode("utf-8") + b"\n")
        _data(stream, contents[now[p]])
    for p in gone:
        stream.append(b"D " + _quote(NOTES + p).encode("utf-8") + b"\n")
    if files is not None:
        for p in files.gone:            # (removals first: a file may take the place of a folder)
            stream.append(b"D " + _quote(FILES + p).encode("utf-8") + b"\n")
        for p, data in sorted(files.changed.items()):
            stream.append(b"M 100644 inline " + _quote(FILES + p).encode("utf-8") + b"\n")
            _data(stream, data)
    stream.extend(out)
    stream.append(b"M 100644 inline " + _quote(EVENTS).encode() + b"\n")
    _data(stream, "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in events).encode("utf-8"))
    stream.append(b"\n")
    git.run(["fast-import", "--quiet", "--force", "--done"], input=b"".join(stream) + b"done\n")
    tree = git.out("rev-parse", f"{BUILD_REF}^{{tree}}")
    signature = key.sign(device, tree, parent)
    message = f"sync from {device}\n\nSync-Device: {device}\nSync-Signature: {signature}\n"
    args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
    commit = _commit_tree(git, args, device)
    git.run(["update-ref", ref, commit, parent or "0" * 40])     # (BUILD_REF is reset by the next build)
    book["versions"] = sorted(done | newkeys)
    for p in changed:
        sent_heads[p] = now[p]
    # what was last sent of a note this commit removes stays known ("removed"): a device that
    # took the note from here may push its unchanged copy only afterwards, and that copy is
    # still an echo of this device's own (last_sent); a note sent again leaves "removed"
    old_removed = book.get("removed")
    removed = {p: sha for p, sha in old_removed.items() if p not in changed} if isinstance(old_removed, dict) else {}
    for p in gone:
        sha = sent_heads.pop(p, None)
        if isinstance(sha, str):
            removed[p] = sha
    book["heads"] = sent_heads
    if removed or "removed" in book:
        book["removed"] = removed
    if files is not None:
        # the same for files/ ("files_removed": path -> blob id of the bytes last sent of a file
        # this commit removes), dropped once the path is sent again
        old_files = book.get("files") if isinstance(book.get("files"), dict) else {}
        old_gone = book.get("files_removed")
        files_removed = ({p: b for p, b in old_gone.items() if p not in files.changed and p not in files.book}
                         if isinstance(old_gone, dict) else {})
        for p in files.gone:
            entry = old_files.get(p)
            if isinstance(entry, list) and entry and isinstance(entry[0], str):
                files_removed[p] = entry[0]
        if files_removed or "files_removed" in book:
            book["files_removed"] = files_removed
        book["files"] = files.book
    state.write("exported.json", book)
    if tombstones:
        state.remove("tombstones.json")
    n_files = len(files.changed) + len(files.gone) if files is not None else 0
    return Exported(commit, len(new), len(changed) + len(gone), checked, files=n_files, unsent=unsent)


def _commit_tree(git: Git, args: list[str], device: str) -> str:
    """`git commit-tree` with a fixed identity (no user config is read)."""
    return git.run(["-c", "user.name=sync", "-c", f"user.email=sync@{device}", *args])[1].decode().strip()
