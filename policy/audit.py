"""state/audit.jsonl: one JSON line per ruling, answer and write; append-only and hash-chained.

Guards the record of who allowed what, and makes editing it evident. Every line starts
`{"seq":N,"prev":"<sha256 of line N-1>",...}` (N is its 1-based line number), so a changed
byte, a removed, inserted or reordered line breaks the chain at a place `verify` can name.
Truncating the last lines leaves a shorter but valid chain, so the chain's head (line count,
hash of the last line, where the chain starts) is kept in a second file, `audit.head` beside
the log, and compared. An existing log written before the chain keeps its lines; the chain
starts after them (its first line's `prev` is the hash of the last old line) and `verify`
says which lines are not protected.

Appends from several processes take a lock with a bounded wait (`audit.lock` beside the log);
each line is one `write()` on a descriptor opened `O_APPEND | O_NOFOLLOW` (0o600). Content is
never logged, only its sha256; keys that would carry content are refused, and an optional
`redact` is applied to every string value. The chain is tamper-*evident* against editing the
files, not a signature: whoever can write both files can forge a consistent pair.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from policy.fileio import (
    FileLock, LockTimeout, NotRegularFile, check_in_place, open_regular, read_upto,
)

# Keys that would put note text (possibly a secret) into the log.
_FORBIDDEN = frozenset({"content", "current", "proposed", "value", "secret", "text"})
_RESERVED = frozenset({"seq", "prev"})
ZERO = "0" * 64
LOCK_TIMEOUT = 10.0
_CHAINED = re.compile(rb'^\{"seq":(\d+),"prev":"([0-9a-f]{64})"')


class AuditError(Exception):
    """The audit log could not be written or read."""


def timestamp(t: float | None = None) -> str:
    """UTC, millisecond precision: 2026-11-30T03:04:05.678Z."""
    t = time.time() if t is None else t
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def line_hash(line: bytes) -> str:
    """The hash the next line carries as `prev`: sha256 of the line's bytes without its newline."""
    return hashlib.sha256(line).hexdigest()


def head_path(log_path: str | os.PathLike[str]) -> Path:
    return Path(log_path).with_suffix(".head")


@dataclass(frozen=True)
class Head:
    """The chain's head as last appended: lines in the file, hash of the last line, the file's
    size, and the line where the chain starts (1 unless older unchained lines precede it)."""

    lines: int
    hash: str
    bytes: int
    start: int

    def to_json(self) -> dict[str, Any]:
        return {"lines": self.lines, "hash": self.hash, "bytes": self.bytes, "start": self.start}


def read_head(path: str | os.PathLike[str]) -> Head | None:
    """The head file, or None if missing; AuditError if unreadable or malformed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AuditError(f"cannot read the chain head {path}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise AuditError(f"the chain head {path} is not a regular file")
        raw = os.read(fd, 4096)
    finally:
        os.close(fd)
    try:
        d = json.loads(raw)
        head = Head(int(d["lines"]), str(d["hash"]), int(d["bytes"]), int(d["start"]))
    except (ValueError, KeyError, TypeError):
        raise AuditError(f"the chain head {path} is damaged (not the JSON this program writes)") from None
    if head.lines < 0 or head.start < 1 or not re.fullmatch(r"[0-9a-f]{64}", head.hash):
        raise AuditError(f"the chain head {path} is damaged (impossible values)")
    return head


HEAD_BYTES = 256


def _write_head(path: Path, head: Head) -> None:
    """Overwrite the head in place with one fixed-size pwrite (a rename-over costs a data flush
    on ext4 at every append). A head torn by a crash reads as damaged: the next append rescans
    the log, and verify says so."""
    body = json.dumps(head.to_json()).encode("ascii")
    record = body + b" " * (HEAD_BYTES - 1 - len(body)) + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)
    try:
        try:
            st = check_in_place(fd, f"the chain head {path}")
        except NotRegularFile as exc:
            raise AuditError(exc.strerror) from None
        os.pwrite(fd, record, 0)
        if st.st_size != HEAD_BYTES:    # (a truncate costs a data flush on ext4: only when needed)
            os.ftruncate(fd, HEAD_BYTES)
    finally:
        os.close(fd)


def _scan_tail(data: bytes) -> Head:
    """Recompute the head from the whole file (an old log, or a head that lags after a crash)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    start = len(lines) + 1
    for i, ln in enumerate(lines, 1):
        if _CHAINED.match(ln):
            start = i
            break
    last = line_hash(lines[-1]) if lines else ZERO
    return Head(len(lines), last, len(data), start)


class _Lock:
    """The flock on `audit.lock` beside the log (policy.fileio.FileLock, no pid recorded: it is
    taken on every append), waited for at most `timeout` seconds; a timeout is an AuditError."""

    def __init__(self, path: Path, timeout: float) -> None:
        self._lock = FileLock(path, timeout, what="the audit log", record_pid=False)

    def __enter__(self) -> "_Lock":
        try:
            self._lock.acquire()
        except LockTimeout as exc:
            raise AuditError(str(exc)) from None
        except OSError as exc:
            raise AuditError(f"cannot open the audit lock {self._lock.path}: {exc.strerror or exc}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


class AuditLog:
    def __init__(self, path: str | os.PathLike[str], *, redact: Callable[[str], str] | None = None,
                 lock_timeout: float = LOCK_TIMEOUT) -> None:
        self.path = Path(path)
        self.redact = redact
        self.head_path = head_path(self.path)
        self.lock_path = self.path.with_suffix(".lock")
        self.lock_timeout = lock_timeout

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        """Append one chained line; returns the record written (its `seq` is its line number).
        AuditError if it cannot be written."""
        bad = _FORBIDDEN.intersection(event)
        if bad:
            raise AuditError(f"refusing to log content-bearing field(s) {sorted(bad)}; log a sha256 instead")
        reserved = _RESERVED.intersection(event)
        if reserved:
            raise AuditError(f"field(s) {sorted(reserved)} are the chain's own; name them otherwise")
        body: dict[str, Any] = {"time": timestamp()}
        for key, value in event.items():
            if isinstance(value, str) and self.redact is not None:
                value = self.redact(value)
            body[key] = value
        try:
            rest = json.dumps(body, ensure_ascii=False, sort_keys=False, default=str)
        except (TypeError, ValueError) as exc:
            raise AuditError(f"audit event is not serialisable: {exc}") from None
        with _Lock(self.lock_path, self.lock_timeout):
            try:
                # O_NONBLOCK: a FIFO here must be an error, not a gate that never returns.
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                             | os.O_NONBLOCK, 0o600)
            except OSError as exc:
                raise AuditError(f"cannot open audit log {self.path}: {exc.strerror or exc}") from None
            try:
                try:
                    st = check_in_place(fd, f"audit log {self.path}")
                except NotRegularFile as exc:
                    raise AuditError(exc.strerror) from None
                head = self._current_head(fd, st.st_size)
                lead = b""
                if st.st_size and os.pread(fd, 1, st.st_size - 1) != b"\n":
                    lead = b"\n"   # a torn last line stays a line of its own (verify names it)
                seq = head.lines + 1
                line = (f'{{"seq":{seq},"prev":"{head.hash}",' + rest[1:]).encode("utf-8")
                payload = lead + line + b"\n"
                written = os.write(fd, payload)
                if written != len(payload):
                    raise AuditError(f"short write to audit log {self.path} ({written} of {len(payload)} bytes)")
                start = head.start if head.start <= head.lines else seq
                _write_head(self.head_path, Head(seq, line_hash(line), st.st_size + len(payload), start))
            except OSError as exc:
                raise AuditError(f"cannot write audit log {self.path}: {exc.strerror or exc}") from None
            finally:
                os.close(fd)
        return {"seq": seq, "prev": head.hash, **body}

    def _current_head(self, fd: int, size: int) -> Head:
        try:
            head = read_head(self.head_path)
        except AuditError:
            head = None
        if head is not None and head.bytes == size:
            return head
        chunks, pos = [], 0
        while pos < size:
            chunk = os.pread(fd, min(1 << 22, size - pos), pos)
            if not chunk:
                break
            chunks.append(chunk)
            pos += len(chunk)
        return _scan_tail(b"".join(chunks))

    def read(self) -> list[dict[str, Any]]:
        """All records (for tests and tooling); a missing log is empty."""
        raw = read_log(self.path).decode("utf-8")
        return [json.loads(line) for line in raw.splitlines() if line.strip()]


def read_log(path: str | os.PathLike[str]) -> bytes:
    """The whole log, b"" if missing; AuditError if it is not a regular file (a symlink is not
    followed, a FIFO planted at the name cannot make a reader wait forever) or cannot be read."""
    try:
        fd, st = open_regular(path, shown=f"audit log {os.fspath(path)}")
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise AuditError(f"cannot read audit log {path}: {exc.strerror or exc}") from None
    try:
        data = read_upto(fd, st.st_size)
        while True:      # appended to meanwhile: read on to the end
            more = read_upto(fd, 1 << 20)
            if not more:
                return data
            data += more
    except OSError as exc:
        raise AuditError(f"cannot read audit log {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


# --- verifying ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    """What `verify` found. `line` is the first line at fault (1-based) when not intact."""

    intact: bool
    lines: int
    start: int                      # first chained line (lines before it are not protected)
    problem: str | None = None
    line: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def _seq(line: bytes) -> int | None:
    m = _CHAINED.match(line)
    return int(m.group(1)) if m else None


def verify(path: str | os.PathLike[str]) -> Verdict:
    """Check the chain of the log at `path` against itself and its head file."""
    path = Path(path)
    data = read_log(path)
    head = read_head(head_path(path))
    lines = data.split(b"\n")
    torn = bool(lines) and lines[-1] != b""
    if lines and lines[-1] == b"":
        lines.pop()
    n = len(lines)
    notes: list[str] = []

    def bad(i: int, problem: str) -> Verdict:
        return Verdict(False, n, start, problem, i, tuple(notes))

    start = next((i for i, ln in enumerate(lines, 1) if _CHAINED.match(ln)), n + 1)
    if head is not None and head.start != start and head.start <= n:
        i = min(head.start, start)
        return bad(i, f"line {i} was changed or removed: the chain starts at line {head.start} "
                      f"(state of the head file), but the log's first chained line is {start}")
    if start > 1:
        last_old = min(start - 1, n)
        notes.append(f"lines 1-{last_old} predate the hash chain and are not protected by it"
                     if last_old > 1 else "line 1 predates the hash chain and is not protected by it")
    prev = (line_hash(lines[start - 2]) if start >= 2 and start - 2 < n else ZERO).encode("ascii")
    matches = [_CHAINED.match(ln) for ln in lines]
    seqs = [int(m.group(1)) if m else None for m in matches]

    def seq_at(pos: int) -> int | None:      # 1-based position; None past the end
        return seqs[pos - 1] if 1 <= pos <= n else None

    sha = hashlib.sha256
    for i in range(start, n + 1):
        seq = seqs[i - 1]
        if seq == i:
            m = matches[i - 1]
            if m.group(2) == prev:        # the common case: in place, chained to the line before
                prev = sha(lines[i - 1]).hexdigest().encode("ascii")
                continue
        ln = lines[i - 1]
        m = matches[i - 1]
        nxt, after = seq_at(i + 1), seq_at(i + 2)
        if seq != i:
            if seq == i + 1 and nxt == i and (after == i + 2 or i + 1 == n):
                return bad(i, f"lines {i} and {i + 1} were swapped (reordered)")
            if nxt == i:
                return bad(i, f"line {i} was inserted (it is not this place's line of the chain)")
            if seq is not None and seq > i and (nxt == seq + 1 or i == n):
                gone = seq - i
                return bad(i, f"line {i} was removed" if gone == 1 else
                           f"lines {i}-{seq - 1} were removed ({gone} lines)")
            if seq is None or nxt == i + 1:
                return bad(i, f"line {i} was changed (it no longer carries its place in the chain)")
            return bad(i, f"line {i} is out of order (it says it is line {seq}): lines were inserted or reordered")
        assert m is not None
        recorded = m.group(2).decode("ascii")
        if recorded != prev.decode("ascii"):
            # Was line i-1 changed, or line i's own `prev`? The line after i (or the head)
            # recorded line i's hash: if that still matches, line i is as written.
            mine = line_hash(ln)
            if i < n:
                nm = _CHAINED.match(lines[i])
                later = nm.group(2).decode("ascii") if nm else None
            else:
                later = head.hash if head is not None and head.lines == n else None
            j = i if (later is not None and later != mine) or i == 1 else i - 1
            return bad(j, f"line {j} was changed (its hash no longer matches the chain)")
    if torn:
        notes.append(f"the last line ({n}) has no newline: an append was cut short")
    if head is None:
        if start <= n:
            return bad(n, f"the chain head file {head_path(path).name} is missing: the last lines "
                          "may have been removed; the chain itself is intact up to line "
                          f"{n}")
    else:
        if n < head.lines:
            gone = head.lines - n
            return bad(n + 1, f"the last {gone} line(s) were removed: the log ends at line {n}, "
                              f"the chain head says {head.lines}")
        if head.lines >= start and line_hash(lines[head.lines - 1]) != head.hash:
            return bad(head.lines, f"line {head.lines} was changed (it no longer matches the chain head)")
        if n > head.lines:
            notes.append(f"lines {head.lines + 1}-{n} chain correctly but were appended after the head "
                         "was last saved (a writer stopped between the two)")
    return Verdict(True, n, start, None, None, tuple(notes))


__all__ = ["AuditLog", "AuditError", "Head", "Verdict", "verify", "read_head", "read_log", "head_path", "request_lines",
           "line_hash", "timestamp", "ZERO"]


def request_lines(path: str | os.PathLike[str], request_id: str, *, run: str, target: str,
                  sha256: str) -> list[tuple[int, str]]:
    """Where an approval request sits in the chain: (line number, event) of the ruling that
    asked (same run, target and content hash) and of every answer naming the request."""
    try:
        data = read_log(path)
    except AuditError:
        return []
    out: list[tuple[int, str]] = []
    needle = request_id.encode("utf-8")
    sha = sha256.encode("ascii", "replace")
    for i, ln in enumerate(data.split(b"\n"), 1):
        if needle not in ln and sha not in ln:
            continue
        try:
            rec = json.loads(ln)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        if rec.get("request") == request_id:
            out.append((i, str(rec.get("event", "answer"))))
        elif (rec.get("event") == "ruling" and rec.get("verdict") == "ask" and rec.get("run") == run
              and rec.get("target") == target and rec.get("sha256") == sha256):
            out.append((i, "ruling"))
    return out
