"""history/: every version of every note, with who wrote it, why, and from what.

Guards "nothing the assistant or the person wrote is ever lost". The workspace folder
`history/` (a sibling of memory/, outside the file tools' mount, 0700) holds:

    history/objects/ab/cdef...   the exact bytes of a version, named by their sha256
                                 (plain files: `cat` prints a note as it was)
    history/log.jsonl            one JSON object per version, oldest first, append-only
    history/intent.json          its first line: the version a writer is committing right now
                                 (crash recovery); an empty first line: none
    history/.lock                the log's lock (bounded wait)

Crash safety, in this order: the object is created O_EXCL at its final name, written and
fsynced, then its folder (the fan-out folder itself only when new), before its log line is even
written (O_APPEND, fsync, under the lock): whatever prefix of the log survives a crash names only
objects on disk. No temp file and rename for objects: an existing file at an object's name is
used only if its bytes hash to that name (it is then fsynced too), else replaced as a directory
entry. A torn last line (a crash mid-append) is ignored by readers and cut off by the next
append. A writer of memory/ also leaves an intent before it replaces a note, and the note is
durable before its line is appended (the log never claims bytes the note never held), so a
crash between the note and its log line is recovered with the right source (`recover`); a lost
intent only makes that version a hand edit. docs/history.md "Crash safety" has the argument in
full. Every mutation of the log is done by a caller holding the memory writers' lock; only
`prune` and `forget` ever shrink it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import queue
import re
import stat
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable

from policy.audit import timestamp
from policy.fileio import FileLock, LinkedFolder, NotRegularFile, check_in_place, open_folder, write_all

from assistant.confine import Root
from assistant.notes.locking import LockTimeout

__all__ = [
    "History", "HistoryError", "Origin", "AllowedBy", "Version", "PruneResult", "SOURCES",
    "LOG_NAME", "OBJECTS", "object_relpath", "parse_time",
]

LOG_NAME = "log.jsonl"
OBJECTS = "objects"
INTENT = "intent.json"
LOCK = ".lock"
SOURCES = ("assistant", "person", "hand-edit", "revert", "removal")   # and "mcp:<client name>", "device:<name>"
DEVICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}").fullmatch   # a sync device's name
MAX_LOG_LINE = 64 * 1024
_SHA = re.compile(r"[0-9a-f]{64}").fullmatch
_new = object.__new__


STORE_TIMEOUT = 30.0   # seconds the object of a version may take to reach the disk

class HistoryError(Exception):
    """History could not be read or written; the message says what and where."""


def parse_time(text: str) -> float:
    """The epoch seconds of a `policy.audit.timestamp()` (the audit log's and history's time
    format); ValueError for anything else."""
    import calendar

    main, _, frac = text.rstrip("Z").partition(".")
    return calendar.timegm(time.strptime(main, "%Y-%m-%dT%H:%M:%S")) + (int(frac) / 1000 if frac else 0.0)


def object_relpath(sha256: str) -> str:
    """objects/ab/cdef... for a sha256 hex digest (relative to history/)."""
    return f"{OBJECTS}/{sha256[:2]}/{sha256[2:]}"


def valid_source(source: str) -> bool:
    if source in SOURCES:
        return True
    if source.startswith("mcp:"):
        name = source[4:]
        return 0 < len(name) <= 100 and name.isprintable() and "\n" not in name
    if source.startswith("device:"):      # a change that came in by sync from an enrolled device
        return DEVICE_NAME(source[7:]) is not None
    return False


@dataclass(frozen=True)
class Origin:
    """Who is writing: the source (`assistant`, `person`, `revert`, `mcp:<client name>`...), the
    model, and what the turn had read from untrusted places before the write (`web:host`,
    `file:path`)."""

    source: str = "person"
    model: str = ""
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not valid_source(self.source):
            raise ValueError(f"unknown history source {self.source!r} (one of {', '.join(SOURCES)}, "
                             "or mcp:<client name>)")


@dataclass(frozen=True)
class AllowedBy:
    """What allowed a write: the approval request and the scope it was approved with, or the
    rule/grant that allowed it without asking (the gate's reason). Not policy.grants.Grant (a
    standing grant): this is what history records of the one ruling on one version."""

    approval: str | None = None
    scope: str | None = None
    grant: str | None = None


@dataclass(frozen=True)
class Version:
    """One line of history/log.jsonl. `seq` is its 1-based place in the log."""

    seq: int
    time: str
    path: str
    rev: str
    sha256: str
    bytes: int
    source: str
    run: str = ""
    approval: str | None = None
    scope: str | None = None
    grant: str | None = None
    model: str = ""
    sources: tuple[str, ...] = ()
    removed: bool = False
    baseline: bool = False
    # sync (assistant/sync/): the device a version came from (an imported version, and the
    # version a sync wrote or removed here: source `device:NAME` or `removal`); `imported`: a version of another
    # device logged for the record (its origin's source, run, approval and sources), never the
    # bytes of the note here, so never a note's head; `conflict`: an imported version that could
    # not be merged with this device's text (open until the person resolves it)
    device: str = ""
    imported: bool = False
    conflict: bool = False

    def to_record(self) -> dict:
        """The log line (without seq, which is its position)."""
        rec: dict = {"time": self.time, "path": self.path, "rev": self.rev, "sha256": self.sha256,
                     "bytes": self.bytes, "source": self.source, "run": self.run,
                     "approval": self.approval, "scope": self.scope, "grant": self.grant,
                     "model": self.model, "sources": list(self.sources)}
        if self.removed:
            rec["removed"] = True
        if self.baseline:
            rec["baseline"] = True
        if self.device:
            rec["device"] = self.device
        if self.imported:
            rec["imported"] = True
        if self.conflict:
            rec["conflict"] = True
        return rec

    def to_json(self) -> dict:
        return {"seq": self.seq, **self.to_record(), "removed": self.removed}

    @classmethod
    def from_record(cls, seq: int, rec: dict) -> "Version":
        """A Version from a log line's object; ValueError/TypeError/KeyError if it is not one."""
        get = rec.get
        sources = get("sources") or ()
        run, model, device = get("run") or "", get("model") or "", get("device") or ""
        approval, scope, grant = get("approval"), get("scope"), get("grant")
        time_, path, rev, sha, size, source = (rec["time"], rec["path"], rec["rev"], rec["sha256"],
                                               rec["bytes"], rec["source"])
        if (type(time_) is not str or type(path) is not str or type(rev) is not str
                or type(source) is not str or type(run) is not str or type(model) is not str
                or type(device) is not str
                or type(size) is not int or size < 0 or type(sha) is not str or not _SHA(sha)
                or type(sources) is not list and sources != ()
                or (approval is not None and type(approval) is not str)
                or (scope is not None and type(scope) is not str)
                or (grant is not None and type(grant) is not str)):
            raise ValueError("not a history log line")
        if sources:
            sources = tuple(sources)
            for x in sources:
                if type(x) is not str:
                    raise ValueError("not a history log line")
        # A log of many thousand lines is read at every `memory log`: skip the frozen dataclass's
        # field-by-field __init__ (the fields were just checked above).
        v = _new(cls)
        v.__dict__.update(seq=seq, time=time_, path=path, rev=rev, sha256=sha, bytes=size, source=source,
                          run=run, approval=approval, scope=scope, grant=grant, model=model,
                          sources=sources, removed=get("removed") is True, baseline=get("baseline") is True,
                          device=device, imported=get("imported") is True, conflict=get("conflict") is True)
        return v


@dataclass(frozen=True)
class PruneResult:
    versions: int      # log entries dropped
    notes: int         # notes they belonged to
    objects: int       # object files deleted
    freed: int         # bytes of those files


@dataclass
class _LogCache:
    """What has been read of the log so far, so a long-lived handle reads only new lines."""

    ino: int = -1
    offset: int = 0
    versions: list[Version] = field(default_factory=list)
    heads: dict[str, Version] = field(default_factory=dict)
    skipped: int = 0


class History:
    """The history of one workspace's notes. `revision` computes a shown revision
    (Memory.revision: the one way to compute one)."""

    overlap = True    # store the object in a thread while the note is written (bench/history.py)

    def __init__(self, directory: str | os.PathLike[str], *, revision: Callable[[bytes], str],
                 lock_timeout: float = 10.0) -> None:
        self.dir = Path(directory)
        self.revision = revision
        self.lock_timeout = lock_timeout
        self._cache = _LogCache()
        self._root: Root | None = None
        self._storing: _Job | None = None
        self._worker: _Worker | None = None

    def _has_object(self, sha256: str) -> bool:
        with contextlib.suppress(HistoryError):
            return self.object_bytes(sha256) is not None
        return False

    # -- setup ---------------------------------------------------------------------------

    def ensure(self) -> None:
        """Create history/ and history/objects/ (0700) if missing, each reached from the
        workspace folder without following a link (a link or a file at either is refused,
        with the fix)."""
        try:
            os.close(open_folder(self.dir.parent, f"{self.dir.name}/{OBJECTS}", create=True))
        except LinkedFolder as exc:
            raise HistoryError(exc.strerror) from None

    @property
    def log_path(self) -> Path:
        return self.dir / LOG_NAME

    def root(self) -> Root:
        """The confined Root of history/ (reached without following a link; every write of
        history goes through it, by descriptor)."""
        if self._root is None:
            self.ensure()
            try:
                self._root = Root.beneath(self.dir.parent, self.dir.name, create=False)
            except LinkedFolder as exc:
                raise HistoryError(exc.strerror) from None
        return self._root

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        if self._root is not None:
            self._root.close()
            self._root = None

    def _lock(self) -> FileLock:
        """The exclusive flock on history/.lock, waited for at most lock_timeout (LockTimeout);
        no pid recorded: it is taken on every append."""
        return FileLock(LOCK, self.lock_timeout, what="history's log", record_pid=False,
                        dir_fd=self.root().fileno())

    # -- objects -------------------------------------------------------------------------

    def put_object(self, data: bytes) -> str:
        """Store `data` (fsynced, entry made durable) unless an intact copy is there; its sha256.

        A new object is created O_EXCL at its final name and fsynced, then its folder: no
        rename is needed, because no log line names it until this returns, and a file left
        half-written by a crash is found damaged (its bytes do not hash to its name) and
        replaced the next time those bytes are stored."""
        sha = hashlib.sha256(data).hexdigest()
        try:
            self._create_object(sha, data)
        except OSError as exc:
            raise HistoryError(f"the version could not be stored in {self.dir}: {exc.strerror or exc}") from None
        return sha

    def _create_object(self, sha: str, data: bytes) -> None:
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        objects = os.open(OBJECTS, flags, dir_fd=self.root().fileno())
        try:
            try:
                sub = os.open(sha[:2], flags, dir_fd=objects)
            except FileNotFoundError:
                try:
                    os.mkdir(sha[:2], 0o700, dir_fd=objects)
                except FileExistsError:
                    pass
                sub = os.open(sha[:2], flags, dir_fd=objects)
                os.fsync(objects)     # the new fan-out folder is durable before anything in it
            try:
                try:
                    fd = os.open(sha[2:], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                 0o600, dir_fd=sub)
                except FileExistsError:   # stored before (or meanwhile): check, else replace
                    if self._intact(sub, sha):
                        # Intact, but maybe never fsynced (its writer was killed between its
                        # write and its fsync; the page cache kept the bytes): made durable
                        # here before any log line names it (nearly free if it already is).
                        os.fsync(sub)
                    else:
                        # damaged (a crash mid-write, an edit) or an odd entry (a link, a
                        # folder, a FIFO): replaced as a directory entry, never written through
                        self.root().write_bytes(object_relpath(sha), data)
                    return
                try:
                    write_all(fd, data)
                finally:
                    os.close(fd)
                os.fsync(sub)
            finally:
                os.close(sub)
        finally:
            os.close(objects)

    @staticmethod
    def _intact(sub: int, sha: str) -> bool:
        """Is objects/<sha[:2]>/<sha[2:]> (in folder `sub`) a regular file holding bytes that
        hash to its name? If so, it is fsynced."""
        try:
            fd = os.open(sha[2:], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=sub)
        except OSError:
            return False
        with open(fd, "rb") as f:
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return False
                if hashlib.sha256(f.read()).hexdigest() != sha:
                    return False
                os.fsync(fd)
                return True
            except OSError:
                return False

    def object_bytes(self, sha256: str) -> bytes:
        """The exact bytes of a stored version; HistoryError if missing or damaged."""
        rel = object_relpath(sha256)
        try:
            data = self.root().read_bytes(rel)
        except FileNotFoundError:
            raise HistoryError(f"history/{rel} is missing (removed by hand?)") from None
        except OSError as exc:
            raise HistoryError(f"history/{rel} cannot be read: {exc.strerror or exc}") from None
        if hashlib.sha256(data).hexdigest() != sha256:
            raise HistoryError(f"history/{rel} is damaged (its bytes no longer match its name)")
        return data

    # -- the log -------------------------------------------------------------------------

    def _open_log(self, flags: int) -> int:
        """history/log.jsonl, opened in the confined history/ (never through a link)."""
        if self._root is None and not (flags & os.O_CREAT) and not os.path.lexists(self.dir):
            raise FileNotFoundError(errno.ENOENT, "no history yet")   # a read makes no folder
        try:
            dir_fd = self.root().fileno()
        except HistoryError as exc:
            raise OSError(errno.ELOOP, str(exc)) from None
        return os.open(LOG_NAME, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600, dir_fd=dir_fd)

    def _refresh(self) -> _LogCache:
        """Read lines appended since the last call (all of them if the log was replaced)."""
        c = self._cache
        try:
            fd = self._open_log(os.O_RDONLY)
        except FileNotFoundError:
            self._cache = _LogCache()
            return self._cache
        except OSError as exc:
            raise HistoryError(f"{self.log_path} cannot be read: {exc.strerror or exc}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise HistoryError(f"{self.log_path} is not a regular file")
            if st.st_ino != c.ino or st.st_size < c.offset:
                c = self._cache = _LogCache(ino=st.st_ino)
            if st.st_size == c.offset:
                return c
            chunks = []
            pos = c.offset
            while True:
                chunk = os.pread(fd, 1 << 20, pos)
                if not chunk:
                    break
                chunks.append(chunk)
                pos += len(chunk)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        end = data.rfind(b"\n") + 1          # a torn last line is not read (nor consumed)
        raws = data[:end].split(b"\n")[:-1]
        try:    # one parse for the whole batch; a bad line sends us line by line
            records = json.loads(b"[" + b",".join(raws) + b"]") if raws else []
            if len(records) != len(raws):
                raise ValueError("a line held more than one value")
        except ValueError:
            records = []
            for raw in raws:
                try:
                    records.append(json.loads(raw))
                except ValueError:
                    records.append(None)
        versions, heads = c.versions, c.heads
        for rec in records:
            try:
                v = Version.from_record(len(versions) + 1, rec)
            except (ValueError, TypeError, AttributeError, KeyError):
                c.skipped += 1
                continue
            versions.append(v)
            if not v.imported:
                heads[v.path] = v
        c.offset += end
        return c

    def versions(self, path: str | None = None) -> list[Version]:
        """Versions oldest first (of one note, or of all)."""
        c = self._refresh()
        if path is None:
            return list(c.versions)
        return [v for v in c.versions if v.path == path]

    def head(self, path: str) -> Version | None:
        """The newest version of a note (a removal if it was removed last), or None."""
        return self._refresh().heads.get(path)

    def paths(self) -> list[str]:
        return sorted(self._refresh().heads)

    def heads(self) -> dict[str, str | None]:
        """Every note's newest sha256 (None: removed last), from one read of the log."""
        return {p: (None if v.removed else v.sha256) for p, v in self._refresh().heads.items()}

    def skipped_lines(self) -> int:
        return self._refresh().skipped

    def resolve(self, path: str, rev: str) -> Version:
        """The newest version of `path` whose revision starts with `rev` (any unique prefix)."""
        given = rev.strip().lower()
        if not given or any(c not in "0123456789abcdef" for c in given):
            raise HistoryError(f"{rev!r} is not a revision (hex digits, as `assistant memory log` shows)")
        found = [v for v in self.versions(path) if v.rev.startswith(given)]
        if not found:
            raise HistoryError(f"no version of {path} has a revision starting {given}; "
                               f"see `assistant memory log {path}`")
        revs = sorted({v.rev for v in found})
        if len(revs) > 1:
            raise HistoryError(f"revision {given} is ambiguous for {path}: {', '.join(revs)}; give more digits")
        return found[-1]

    def _append(self, versions: Iterable[Version]) -> list[Version]:
        """Append log lines (objects already stored) with one write + fsync under the lock."""
        recs = [v.to_record() for v in versions]
        if not recs:
            return []
        payload = b"".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
                           for r in recs)
        c = self._cache
        current = False     # the cache had read the whole log before this append
        try:
            with self._lock():
                fd = self._open_log(os.O_RDWR | os.O_APPEND | os.O_CREAT)
                try:
                    try:
                        st = check_in_place(fd, str(self.log_path))
                    except NotRegularFile as exc:
                        raise HistoryError(exc.strerror) from None
                    if st.st_size and os.pread(fd, 1, st.st_size - 1) != b"\n":
                        _cut_torn_tail(fd, st.st_size)
                    else:
                        current = c.ino == st.st_ino and c.offset == st.st_size
                    write_all(fd, payload)
                finally:
                    os.close(fd)
        except LockTimeout as exc:
            raise HistoryError(f"history is busy: {exc}") from None
        except OSError as exc:
            raise HistoryError(f"{self.log_path} could not be appended: {exc.strerror or exc}") from None
        if current and c is self._cache:
            # What a re-read would find: these lines, parsed from the same records (saves
            # opening and reading the log again on every write).
            try:
                first = len(c.versions) + 1
                logged = [Version.from_record(first + i, rec) for i, rec in enumerate(recs)]
            except (ValueError, TypeError, AttributeError, KeyError):
                logged = None
            if logged is not None:
                c.versions.extend(logged)
                for v in logged:
                    if not v.imported:
                        c.heads[v.path] = v
                c.offset += len(payload)
                return logged
        c = self._refresh()
        return c.versions[-len(recs):]

    def make_version(self, path: str, data: bytes, origin: Origin, *, run: str = "",
                     grant: AllowedBy | None = None, removed: bool = False, baseline: bool = False,
                     when: float | None = None) -> Version:
        """A Version for `data` at `path` (not yet stored or logged). A change that arrived by
        sync (origin `device:NAME`) records `device` NAME, a removal too (whose source is then
        `removal`): every version that came from another device says which one."""
        g = grant or AllowedBy()
        source = "removal" if removed else origin.source
        device = origin.source[len("device:"):] if origin.source.startswith("device:") else ""
        return Version(seq=0, time=timestamp(when), path=path, rev=self.revision(data),
                       sha256=hashlib.sha256(data).hexdigest(), bytes=len(data), source=source, run=run,
                       approval=g.approval, scope=g.scope, grant=g.grant, model=origin.model,
                       sources=tuple(origin.sources), removed=removed, baseline=baseline, device=device)

    def record(self, version: Version, data: bytes) -> Version:
        """Store the object, then its log line. Returns the logged Version (with its seq)."""
        self.put_object(data)
        return self._append([version])[0]

    # -- intents: a writer's crash between the note and its log line ---------------------

    def begin(self, version: Version, data: bytes) -> None:
        """Before replacing/removing a note: leave an intent naming the version, and start
        storing its object (in a thread, so its fsyncs overlap the note's own; `commit` waits
        for it). The intent needs no fsync: it only matters after a crash of this process, and
        a lost intent only means `recover` cannot tell the source (the bytes are still saved,
        as a hand edit).

        The intent is the first line of history/intent.json, written in place (pwrite at 0,
        no truncation) and cleared in place by `commit`/`abandon` (an empty first line): the
        file stays, so a write costs no truncate, create or unlink of it (on ext4 the
        truncate-then-rewrite and the unlink each forced block work: ~0.5 ms a write). What
        follows the first newline is stale bytes of a longer earlier intent, never read. A
        stale or torn intent after a crash is harmless for the same reason a lost one is:
        `recover` logs it only if the note holds exactly its bytes and the log does not
        already end with it."""
        line = json.dumps(version.to_record(), ensure_ascii=False).encode("utf-8") + b"\n"
        self._write_intent(line, create=True)
        job = _Job(lambda: self.put_object(data))
        if not self.overlap:
            job.run()
            job.result(STORE_TIMEOUT)
            return
        if self._worker is None:
            self._worker = _Worker()
        self._worker.submit(job)
        self._storing = job

    def _stored(self) -> None:
        job, self._storing = self._storing, None
        if job is not None:
            job.result(STORE_TIMEOUT)

    def commit(self, version: Version) -> Version:
        """After the note was written: wait for the object, then the log line, then the intent goes."""
        self._stored()
        logged = self._append([version])[0]
        self._clear_intent()
        return logged

    def abandon(self) -> None:
        """The note was not written after all: the intent goes (its object stays, harmless)."""
        try:
            self._stored()
        except HistoryError:
            pass
        self._clear_intent()

    def _write_intent(self, line: bytes, *, create: bool) -> None:
        """`line` over the start of history/intent.json (never through a hard link)."""
        flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | (os.O_CREAT if create else 0)
        try:
            try:
                fd = os.open(INTENT, flags, 0o600, dir_fd=self.root().fileno())
            except FileNotFoundError:
                if create:
                    raise
                return
            try:
                try:    # checked before writing: a hard link here must not change a file elsewhere
                    check_in_place(fd, f"history/{INTENT}")
                except NotRegularFile as exc:
                    raise HistoryError(exc.strerror) from None
                view = memoryview(line)
                at = 0
                while at < len(line):
                    at += os.pwrite(fd, view[at:], at)
            finally:
                os.close(fd)
        except OSError as exc:
            raise HistoryError(f"history/{INTENT} could not be written: {exc.strerror or exc}") from None

    def _clear_intent(self) -> None:
        """No write in progress: an empty first line (the file stays; see `begin`)."""
        self._write_intent(b"\n", create=False)

    def _read_intent(self) -> bytes | None:
        """The pending intent's line, or None if there is none; OSError if unreadable."""
        try:
            raw = self.root().read_bytes(INTENT, max_bytes=MAX_LOG_LINE)
        except FileNotFoundError:
            return None
        line = raw.split(b"\n", 1)[0]     # (an intent written before this format had no newline)
        return line if line.strip() else None

    def intent_pending(self) -> bool:
        """Did a writer leave an intent (a crash between its note and its log line, or a write
        going on right now)? Unreadable counts as pending: `recover` will look."""
        if self._root is None and not os.path.lexists(self.dir / INTENT):
            return False
        try:
            return self._read_intent() is not None
        except OSError:
            return True

    def _drop_intent(self) -> None:
        try:
            os.unlink(INTENT, dir_fd=self.root().fileno())
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise HistoryError(f"history/{INTENT} could not be removed: {exc.strerror or exc}") from None

    def recover(self, current: Callable[[str], bytes | None]) -> Version | None:
        """Finish a writer that died between its note and its log line: if the note now holds
        the intended bytes (or is gone, for a removal) the version is logged with its source;
        otherwise the write never happened and the intent is dropped. Caller holds the memory lock."""
        try:
            raw = self._read_intent()
        except OSError:
            self._drop_intent()
            return None
        if raw is None:
            return None
        try:
            v = Version.from_record(0, json.loads(raw))
        except (ValueError, TypeError, AttributeError, KeyError):
            self._drop_intent()
            return None
        try:
            now = current(v.path)
        except Exception:
            return None   # unreadable now: leave the intent for a later look
        happened = now is None if v.removed else (
            now is not None and hashlib.sha256(now).hexdigest() == v.sha256)
        head = self.head(v.path)
        done = head is not None and head.sha256 == v.sha256 and head.removed == v.removed \
            and head.time == v.time
        logged = None
        if happened and not done:
            if now is not None:
                self.put_object(now)    # the writer may have died before its object was stored
            elif not self._has_object(v.sha256):
                v = replace(v, grant=(v.grant or "") + " (removed bytes were not stored)")
            logged = self._append([v])[0]
        self._drop_intent()
        return logged

    # -- noticing hand edits -------------------------------------------------------------

    def noticed(self, path: str, now: bytes | None, *, run: str = "",
                baseline: bool = False) -> Version | None:
        """The version to record if `path` was changed behind the project's back: bytes that
        differ from the newest version (`hand-edit`), or a note that vanished (`removal`)."""
        head = self.head(path)
        if now is None:
            if head is None or head.removed:
                return None
            v = self.make_version(path, b"", Origin("hand-edit"), run=run, removed=True)
            return replace(v, rev=head.rev, sha256=head.sha256, bytes=head.bytes,
                           grant="noticed: removed outside the assistant")
        if head is not None and not head.removed and head.sha256 == hashlib.sha256(now).hexdigest():
            return None
        return self.make_version(path, now, Origin("hand-edit"), run=run, baseline=baseline)

    def notice(self, path: str, now: bytes | None, *, run: str = "", baseline: bool = False) -> Version | None:
        """Record what `noticed` finds, if anything. Caller holds the memory lock."""
        v = self.noticed(path, now, run=run, baseline=baseline)
        if v is None:
            return None
        if not v.removed:
            assert now is not None
            self.put_object(now)
        return self._append([v])[0]

    def record_many(self, items: list[tuple[Version, bytes | None]]) -> list[Version]:
        """Store every object, then all the log lines with one append (one fsync)."""
        blobs = {v.sha256: data for v, data in items if data is not None and not v.removed}
        if len(blobs) > 1:   # a first open stores every note: overlap their fsyncs
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(8, len(blobs))) as pool:
                for _ in pool.map(self.put_object, blobs.values()):
                    pass
        else:
            for data in blobs.values():
                self.put_object(data)
        return self._append([v for v, _ in items])

    # -- shrinking: the only two ways -----------------------------------------------------

    def prune(self, older_than: float, *, now: float | None = None) -> PruneResult:
        """Drop versions older than `older_than` seconds, except each note's newest version."""
        cutoff = (time.time() if now is None else now) - older_than
        heads = {v.seq for v in self._refresh().heads.values()}

        def keep(v: Version) -> bool:
            if v.seq in heads:
                return True
            try:
                return parse_time(v.time) >= cutoff
            except ValueError:
                return True
        return self._rewrite(keep)

    def forget(self, path: str) -> PruneResult:
        """Drop every version of one note, and the objects no other version uses."""
        return self._rewrite(lambda v: v.path != path)

    def _rewrite(self, keep: Callable[[Version], bool]) -> PruneResult:
        try:
            with self._lock():
                self._cache = _LogCache()
                everything = self.versions()
                kept = [v for v in everything if keep(v)]
                dropped = [v for v in everything if not keep(v)]
                if not dropped:
                    return PruneResult(0, 0, 0, 0)
                payload = b"".join(json.dumps(v.to_record(), ensure_ascii=False, separators=(",", ":"))
                                   .encode("utf-8") + b"\n" for v in kept)
                self.root().write_bytes(LOG_NAME, payload)
                self._cache = _LogCache()
                used = {v.sha256 for v in kept}
                gone = {v.sha256 for v in dropped} - used
                objects = freed = 0
                for sha in sorted(gone):
                    rel = object_relpath(sha)
                    try:
                        freed += self.root().stat(rel).st_size
                        self.root().remove(rel)
                        objects += 1
                    except FileNotFoundError:
                        pass
                return PruneResult(len(dropped), len({v.path for v in dropped}), objects, freed)
        except LockTimeout as exc:
            raise HistoryError(f"history is busy: {exc}") from None
        except OSError as exc:
            raise HistoryError(f"history could not be rewritten: {exc.strerror or exc}") from None

    def disk_usage(self) -> tuple[int, int]:
        """(object files, their bytes) plus nothing else: for reports and the bench."""
        count = size = 0
        base = self.dir / OBJECTS
        for sub in os.scandir(base) if base.is_dir() else ():
            if sub.is_dir(follow_symlinks=False):
                for f in os.scandir(sub.path):
                    if f.is_file(follow_symlinks=False):
                        count += 1
                        size += f.stat(follow_symlinks=False).st_blocks * 512
        return count, size


class _Job:
    """One object to store, run by a _Worker; `result` waits for it (bounded)."""

    def __init__(self, fn: Callable[[], object]) -> None:
        self._fn = fn
        self._done = threading.Event()
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            self._fn()
        except BaseException as exc:   # noqa: BLE001 - handed to the waiting writer
            self._error = exc
        finally:
            self._done.set()

    def result(self, timeout: float) -> None:
        if not self._done.wait(timeout):   # a disk that stopped answering: refused, never a hang
            raise HistoryError(f"storing the version took longer than {timeout:g}s; nothing was written")
        err = self._error
        if err is not None:
            raise err if isinstance(err, HistoryError) else HistoryError(str(err))


class _Worker:
    """The thread that stores a History's objects while the note is written (their fsyncs
    overlap the note's own). One daemon thread serves the handle's writes, not one per write
    (starting a thread cost about a tenth of a millisecond per write); it ends after IDLE
    seconds without work, or when the handle is closed, and the next write starts another."""

    IDLE = 10.0

    def __init__(self) -> None:
        self._jobs: "queue.SimpleQueue[_Job | None]" = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._running = False

    def submit(self, job: _Job) -> None:
        with self._lock:    # (the thread decides to end under this lock: no job is left behind)
            self._jobs.put(job)
            if not self._running:
                self._running = True
                threading.Thread(target=self._run, name="history-object", daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self.IDLE)
            except queue.Empty:
                with self._lock:
                    if self._jobs.empty():
                        self._running = False
                        return
                continue
            if job is None:
                return
            job.run()

    def stop(self) -> None:
        """The thread ends after the jobs already queued (it is a daemon: never waited for)."""
        with self._lock:
            if self._running:
                self._jobs.put(None)


def _cut_torn_tail(fd: int, size: int) -> None:
    """A crash mid-append left a line without its newline: cut it (readers never used it)."""
    pos = size
    step = 4096
    while pos > 0:
        start = max(0, pos - step)
        chunk = os.pread(fd, pos - start, start)
        nl = chunk.rfind(b"\n")
        if nl >= 0:
            os.ftruncate(fd, start + nl + 1)
            return
        pos = start
    os.ftruncate(fd, 0)


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EROFS):
            raise
    finally:
        os.close(fd)
