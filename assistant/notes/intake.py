"""Noticing hand edits: compare each note on disk with its newest recorded version.

Guards "a hand edit is captured when noticed" without making every session start read every
note: a small metadata cache (state/history-seen.json: per note its mtime, size and the sha256
that was last both on disk and in history) lets an unchanged note be skipped after one lstat.
The cache is rebuildable: lost or damaged, every note is read once and it is written again.
When anything changed, the work is done under the memory writers' lock (so a writer's own new
bytes are never mistaken for a hand edit), after finishing any writer's crashed commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from contextlib import nullcontext
from pathlib import Path

from policy.fileio import open_folder, read_regular, write_atomic

from assistant.confine import ConfinementError, Root
from assistant.notes import catalog as _catalog
from assistant.notes.history import Version
from assistant.notes.writer import GatedWriter

CACHE_NAME = "history-seen.json"
# The cache as this process last read or wrote it, by path: (the file's identity then, its
# decoded contents). A long-lived door (`mcp serve`, a chat) noticing one hand edit at 10,000
# notes would otherwise decode the whole cache again each time; the file is re-read whenever
# its identity (inode, size, mtime) differs, i.e. another process wrote it.
_memo: dict[str, tuple[tuple[int, int, int], dict]] = {}


def _identity(dfd: int, name: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None


def _load(path) -> dict:
    """The cache (a fresh copy: the caller changes it), {} when there is none or it is damaged."""
    try:    # no link followed (state/ included), no wait on a FIFO: a cache that is not a plain file is no cache
        dfd = open_folder(path.parent.parent, path.parent.name, create=False)
        try:
            ident = _identity(dfd, path.name)
            memo = _memo.get(str(path))
            if ident is not None and memo is not None and memo[0] == ident:
                return _copy(memo[1])
            data = json.loads(read_regular(path.name, dir_fd=dfd, max_bytes=16 << 20))
        finally:
            os.close(dfd)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _copy(data: dict) -> dict:
    """One level deeper than dict.copy: the "notes" and "heads" maps are changed in place."""
    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in data.items()}


def _save(path, data: dict) -> None:
    try:   # atomic, private, never through a link, state/ included (policy.fileio)
        dfd = open_folder(path.parent.parent, path.parent.name, create=True)
        try:
            write_atomic(path.name, json.dumps(data, separators=(",", ":")).encode("utf-8"), dir_fd=dfd, mode=0o600)
            ident = _identity(dfd, path.name)
            if ident is not None:
                _memo[str(path)] = (ident, _copy(data))
        finally:
            os.close(dfd)
    except OSError:
        pass   # a cache: losing it costs one re-read


def _log_signature(hist) -> list[int] | None:
    try:
        st = os.stat(hist.log_path, follow_symlinks=False)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def _on_disk(memory_dir: Path, max_bytes: int, paths: list[str] | None = None) -> dict[str, tuple[int, int]]:
    """Readable-looking notes under memory/: path -> (mtime_ns, size). With `paths` (what a
    watcher reported), just those are looked at, through the confined Root (no link followed,
    a refused name is no note), so a hand edit costs the same at 10 or 10,000 notes."""
    if paths is None:
        return {e.path: (e.mtime_ns, e.size) for e in _catalog.scan(memory_dir)
                if e.problem is None and e.size <= max_bytes}
    out: dict[str, tuple[int, int]] = {}
    try:
        root = Root(memory_dir)
    except (OSError, ConfinementError):
        return out
    with root:
        for p in paths:
            try:
                st = root.stat(p)
            except (OSError, ConfinementError, ValueError):
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size <= max_bytes:
                out[p] = (st.st_mtime_ns, st.st_size)
    return out


def notice_all(writer: GatedWriter, memory_dir: Path, state_dir: Path,
               paths: list[str] | None = None) -> list[Version]:
    """Record hand edits of `paths` (or of every note) since history last looked; returns the
    versions recorded. Lock-free and read-free when the cache says nothing changed.

    `writer` is memory/'s gated writer (Memory passes its own): its mount gives the root, the
    writers' lock, history, the size cap and the run id, and it reads and checks each note the
    way a write would. The note store itself is not needed here."""
    mount = writer.m
    hist = mount.history
    assert hist is not None
    cache_path = state_dir / CACHE_NAME
    cache = _load(cache_path)
    seen = cache.get("notes") if isinstance(cache.get("notes"), dict) else {}
    disk = _on_disk(memory_dir, mount.max_bytes, paths)
    # The newest sha256 of each note (None: removed). While the log is the file the cache saw,
    # the cached heads stand in for reading the whole log at every session start.
    cached_heads = cache.get("heads")
    if cache.get("log") == _log_signature(hist) and isinstance(cached_heads, dict):
        heads: dict = cached_heads
    else:
        heads = hist.heads()
    wanted = set(disk) | {p for p, sha in heads.items() if sha} if paths is None else set(paths)

    def unchanged(p: str) -> bool:
        head = heads.get(p)
        st = disk.get(p)
        if st is None:
            return head is None
        cached = seen.get(p)
        return (head is not None and isinstance(cached, list) and len(cached) == 3
                and cached[0] == st[0] and cached[1] == st[1] and cached[2] == head)

    if not hist.intent_pending() and all(unchanged(p) for p in wanted):
        return []
    recorded: list[Version] = []
    with mount.lock() if mount.lock is not None else nullcontext():
        with mount.root() as root:
            def current(p: str) -> bytes | None:
                return writer.current(root, p)

            hist.recover(current)
            heads = hist.heads()
            disk = _on_disk(memory_dir, mount.max_bytes, paths)
            if paths is None:
                wanted = set(disk) | {p for p, sha in heads.items() if sha}
            run = mount.run_id
            first = not hist.log_path.exists()    # an existing workspace's first open: baseline
            pending: list[tuple[Version, bytes | None]] = []
            for p in sorted(wanted):
                st = disk.get(p)
                if unchanged(p):
                    continue
                try:
                    writer.check_path(p)
                    now = current(p)
                except Exception:   # noqa: BLE001 - not a readable note right now: nothing to record
                    seen.pop(p, None)
                    continue
                v = hist.noticed(p, now, run=run, baseline=first)
                if v is not None:
                    pending.append((v, now))
                if st is not None and now is not None:
                    seen[p] = [st[0], st[1], hashlib.sha256(now).hexdigest()]   # as of this stat
                else:
                    seen.pop(p, None)
            recorded = hist.record_many(pending)
            for p in [p for p in (seen if paths is None else wanted) if p not in disk]:
                seen.pop(p, None)
            heads = hist.heads()
            signature = _log_signature(hist)
    _save(cache_path, {"notes": seen, "log": signature, "heads": heads})
    return recorded
