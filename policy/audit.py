"""state/audit.jsonl: one JSON line per ruling, answer and write; append-only and chained.

Guards the record of who allowed what, and makes editing it evident. Every line starts
`{"seq":N,"prev":"<digest of line N-1>","chain":"KIND","time":"...",` (N is its 1-based line
number), so a changed byte, a removed, inserted or reordered line breaks the chain at a place
`verify` can name. KIND is how `prev` was made: "hmac-sha256" (HMAC-SHA256 of line N-1 under the
audit key, which the vault holds: writing state/ does not give it, so nobody without it can add
or change a line that verifies) or "sha256" (a workspace with no vault: tamper-evident against
editing, not against forging). Lines written before the chain kind was recorded carry no
`chain` and are sha256-chained. Truncating the last lines leaves a shorter but valid chain, so
the chain's head (line count, file size, where the chain starts, and a digest of the last line,
keyed as the last line is, over all of them) is kept in a second file, `audit.head` beside the
log, and compared. An existing log written before the chain keeps its lines; the chain starts
after them and `verify` says which lines are not protected.

Appends from several processes take a lock with a bounded wait (`audit.lock` beside the log),
and each line's time is taken under that lock, so times never run backwards in a genuine log;
each line is one `write()` on a descriptor opened `O_APPEND | O_NOFOLLOW` (0o600). Content is
never logged, only its sha256; keys that would carry content are refused, and an optional
`redact` is applied to every string value. What a forger who holds the key can still do is in
docs/history.md.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, runtime_checkable

from policy.fileio import (
    FileLock, LockTimeout, NotRegularFile, check_in_place, open_regular, read_upto,
)

# Keys that would put note text (possibly a secret) into the log.
_FORBIDDEN = frozenset({"content", "current", "proposed", "value", "secret", "text"})
_RESERVED = frozenset({"seq", "prev", "chain", "time"})
ZERO = "0" * 64
LOCK_TIMEOUT = 10.0
SHA256, HMAC = "sha256", "hmac-sha256"      # a line's chain kind (no `chain` at all: sha256, older)
_CHAINED = re.compile(rb'^\{"seq":(\d+),"prev":"([0-9a-f]{64})"'
                      rb'(?:,"chain":"(sha256|hmac-sha256)","time":"([0-9T:.Z-]{1,40})"'
                      rb'(?:,"head":"(missing|damaged|lagging|changed|gone)")?)?')
# Why a writer could not trust the head when it appended (the line then says so, in "head"):
# the log had chained lines but no head, a head it could not read, a head for a shorter file,
# a head whose digest no longer matched the last line, or no line at all although the key's
# source says a keyed log was started before (the log was deleted or emptied).
DOUBTS = ("missing", "damaged", "lagging", "changed", "gone")
_HEAD_DOMAIN = b"assistant audit.head v1\n"



@runtime_checkable
class KeySource(Protocol):
    """A key provider that also knows whether a keyed log was started before it was asked (the
    vault's audit key: the record exists, or this call made it). A writer given one marks a line
    that starts a keyed log over an empty or missing file `"head":"gone"` unless the key was
    made by that very call: a log deleted or emptied, then appended to, is not a fresh start."""

    def __call__(self) -> bytes: ...

    def made_now(self) -> bool:
        """True if the last call made the key (no keyed log existed before it)."""
        ...


Key = bytes | Callable[[], bytes]


class AuditError(Exception):
    """The audit log could not be written or read."""


def timestamp(t: float | None = None) -> str:
    """UTC, millisecond precision: 2026-11-30T03:04:05.678Z."""
    t = time.time() if t is None else t
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def line_hash(line: bytes) -> str:
    """The unkeyed `prev` of the next line: sha256 of the line's bytes without its newline."""
    return hashlib.sha256(line).hexdigest()


def line_digest(kind: str | None, key: bytes | None, line: bytes) -> str:
    """The `prev` a line of chain kind `kind` carries for the line before it."""
    if kind == HMAC:
        if key is None:
            raise AuditError("a keyed line cannot be checked without the audit key")
        return hmac.new(key, line, hashlib.sha256).hexdigest()
    return line_hash(line)


def head_digest(kind: str | None, key: bytes | None, lines: int, size: int, start: int, last: bytes) -> str:
    """The head's `hash`: for a keyed head an HMAC over its counts and the last line (so a head
    for a log cut short cannot be made without the key, and it never equals the `prev` a line
    appended after the last one needs); unkeyed, the sha256 of the last line, as before."""
    if kind == HMAC:
        if key is None:
            raise AuditError("a keyed head cannot be checked without the audit key")
        msg = _HEAD_DOMAIN + f"{lines}\n{size}\n{start}\n".encode("ascii") + last
        return hmac.new(key, msg, hashlib.sha256).hexdigest()
    return line_hash(last)


def head_path(log_path: str | os.PathLike[str]) -> Path:
    return Path(log_path).with_suffix(".head")


@dataclass(frozen=True)
class Head:
    """The chain's head as last appended: lines in the file, digest of the last line, the
    file's size, the line where the chain starts (1 unless older unchained lines precede it)
    and the chain kind of the writer that saved it."""

    lines: int
    hash: str
    bytes: int
    start: int
    chain: str = SHA256

    def to_json(self) -> dict[str, Any]:
        return {"lines": self.lines, "hash": self.hash, "bytes": self.bytes, "start": self.start,
                "chain": self.chain}


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
        head = Head(int(d["lines"]), str(d["hash"]), int(d["bytes"]), int(d["start"]), str(d.get("chain", SHA256)))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise AuditError(f"the chain head {path} is damaged (not the JSON this program writes)") from None
    if (head.lines < 0 or head.start < 1 or not re.fullmatch(r"[0-9a-f]{64}", head.hash)
            or head.chain not in (SHA256, HMAC)):
        raise AuditError(f"the chain head {path} is damaged (impossible values)")
    return head


HEAD_BYTES = 256


def _write_head(path: Path, head: Head) -> None:
    """Overwrite the head in place with one fixed-size pwrite (a rename-over costs a data flush
    on ext4 at every append). A head torn by a crash reads as damaged: the next append rescans
    the log, and verify says so."""
    body = json.dumps(head.to_json(), separators=(",", ":")).encode("ascii")
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


def _split_lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _scan(data: bytes) -> tuple[int, int]:
    """(lines, first chained line) of the whole file (an old log, or a head that cannot be
    trusted: lagging after a crash, written by another kind of writer, or edited)."""
    lines = _split_lines(data)
    start = next((i for i, ln in enumerate(lines, 1) if _CHAINED.match(ln)), len(lines) + 1)
    return len(lines), start


def _last_line(fd: int, size: int) -> bytes:
    """The file's last line (without its newline), read backwards in chunks from the end."""
    if size == 0:
        return b""
    end = size - 1 if os.pread(fd, 1, size - 1) == b"\n" else size
    buf, pos = b"", end
    while pos > 0:
        step = min(1 << 16, pos)
        pos -= step
        buf = os.pread(fd, step, pos) + buf
        nl = buf.rfind(b"\n")
        if nl >= 0:
            return buf[nl + 1:]
    return buf


def _read_all(fd: int, size: int) -> bytes:
    chunks, pos = [], 0
    while pos < size:
        chunk = os.pread(fd, min(1 << 22, size - pos), pos)
        if not chunk:
            break
        chunks.append(chunk)
        pos += len(chunk)
    return b"".join(chunks)


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
    """Appends to the log at `path`. `key`: the audit key (bytes, or a callable returning it,
    called once at the first append: the vault creates the key only when a keyed line is first
    written); None for an unkeyed (sha256) chain, as in a workspace with no vault."""

    def __init__(self, path: str | os.PathLike[str], *, redact: Callable[[str], str] | None = None,
                 lock_timeout: float = LOCK_TIMEOUT, key: Key | None = None) -> None:
        self.path = Path(path)
        self.redact = redact
        self.head_path = head_path(self.path)
        self.lock_path = self.path.with_suffix(".lock")
        self.lock_timeout = lock_timeout
        self._key_source = key
        self._key: bytes | None = key if isinstance(key, bytes) else None
        # A KeySource tells whether a keyed log existed before this writer's first append: then
        # an empty log is one deleted or emptied, and its new first line says so. (Plain bytes or
        # a plain callable cannot tell, and start a keyed log unmarked, as before.)
        self._key_began_log = not isinstance(key, KeySource)

    @property
    def keyed(self) -> bool:
        """Does this log write keyed (hmac-sha256) lines?"""
        return self._key_source is not None

    def _get_key(self) -> bytes | None:
        if self._key is None and self._key_source is not None:
            try:
                key = self._key_source() if callable(self._key_source) else self._key_source
            except Exception as exc:   # noqa: BLE001 - whatever the provider raised, the line is not written
                raise AuditError(f"the audit key cannot be had: {exc}") from None
            if not isinstance(key, bytes) or len(key) < 16:
                raise AuditError("the audit key is not a key (at least 16 bytes)")
            if isinstance(self._key_source, KeySource):
                try:
                    self._key_began_log = bool(self._key_source.made_now())
                except Exception:   # noqa: BLE001 - cannot tell: the key existed (an empty log is marked)
                    self._key_began_log = False
            self._key = key
        return self._key

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        """Append one chained line; returns the record written (its `seq` is its line number).
        AuditError if it cannot be written."""
        bad = _FORBIDDEN.intersection(event)
        if bad:
            raise AuditError(f"refusing to log content-bearing field(s) {sorted(bad)}; log a sha256 instead")
        reserved = _RESERVED.intersection(event)
        if reserved:
            raise AuditError(f"field(s) {sorted(reserved)} are the chain's own; name them otherwise")
        body: dict[str, Any] = {}
        for key, value in event.items():
            if isinstance(value, str) and self.redact is not None:
                value = self.redact(value)
            body[key] = value
        try:
            rest = json.dumps(body, ensure_ascii=False, sort_keys=False, default=str)
        except (TypeError, ValueError) as exc:
            raise AuditError(f"audit event is not serialisable: {exc}") from None
        key = self._get_key()
        kind = HMAC if key is not None else SHA256
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
                size = st.st_size
                last = _last_line(fd, size)
                lines, start, doubt = self._count(fd, size, last, key)
                if lines == 0 and key is not None and not self._key_began_log:
                    doubt = "gone"     # a keyed log was started before: this file was deleted or emptied
                lead = b""
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    lead = b"\n"   # a torn last line stays a line of its own (verify names it)
                seq = lines + 1
                prev = line_digest(kind, key, last) if lines else ZERO
                when = timestamp()   # under the lock: a genuine log's times never run backwards
                prefix = f'{{"seq":{seq},"prev":"{prev}","chain":"{kind}","time":"{when}"'
                if doubt is not None:    # the lines before this one are not vouched for: say so, inside the chain
                    prefix += f',"head":"{doubt}"'
                line = (prefix + ("}" if rest == "{}" else "," + rest[1:])).encode("utf-8")
                payload = lead + line + b"\n"
                written = os.write(fd, payload)
                if written != len(payload):
                    raise AuditError(f"short write to audit log {self.path} ({written} of {len(payload)} bytes)")
                start = start if start <= lines else seq
                new_size = size + len(payload)
                _write_head(self.head_path, Head(seq, head_digest(kind, key, seq, new_size, start, line),
                                                 new_size, start, kind))
            except OSError as exc:
                raise AuditError(f"cannot write audit log {self.path}: {exc.strerror or exc}") from None
            finally:
                os.close(fd)
        if isinstance(self._key_source, KeySource):
            self._key_began_log = False    # only the append that made the key may start a keyed log unmarked
        return {"seq": seq, "prev": prev, "chain": kind, "time": when,
                **({"head": doubt} if doubt is not None else {}), **body}

    def _count(self, fd: int, size: int, last: bytes, key: bytes | None) -> tuple[int, int, str | None]:
        """(lines, chain start, doubt) of the log as it is. From the head when it vouches for this
        very file (its size, and its digest of the last line checked the way its writer made
        it); else by a rescan, and `doubt` names why the head did not vouch (None when there is
        nothing it should vouch for: an empty or wholly unchained log, or a keyed head this
        unkeyed writer cannot check)."""
        try:
            head = read_head(self.head_path)
            damaged = False
        except AuditError:
            head, damaged = None, True
        if head is not None and head.bytes == size and head.lines >= 1:
            if head.chain == HMAC and key is None:
                lines, start = _scan(_read_all(fd, size))
                return lines, start, None           # (the unkeyed line itself is what verify names)
            if hmac.compare_digest(head.hash, head_digest(head.chain, key, head.lines, size, head.start, last)):
                m = _CHAINED.match(last)
                if not (head.chain == SHA256 and m is not None and m.group(3) == HMAC.encode()):
                    return head.lines, head.start, None
        lines, start = _scan(_read_all(fd, size))
        if start > lines:
            return lines, start, None
        if damaged:
            return lines, start, "damaged"
        if head is None:
            return lines, start, "missing"
        return lines, start, "lagging" if head.bytes < size and head.lines < lines else "changed"

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
    """What `verify` found. `line` is the first line at fault (1-based) when not intact (None
    when no line is: a keyed log whose files are both gone). `keyed_from`: the first keyed line."""

    intact: bool
    lines: int
    start: int                      # first chained line (lines before it are not protected)
    problem: str | None = None
    line: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    keyed_from: int | None = None


def _span(numbers: list[int]) -> str:
    shown = ", ".join(str(i) for i in numbers[:10]) + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")
    return f"line {shown}" if len(numbers) == 1 else f"lines {shown}"


def verify(path: str | os.PathLike[str], *, key: bytes | None = None) -> Verdict:
    """Check the chain of the log at `path` against itself and its head file. `key`: the audit
    key the vault holds (None: no vault, or it never keyed a line). Given a key, the vault says a
    keyed log was started, so a log with no keyed line, or no log at all, is a failure."""
    path = Path(path)
    data = read_log(path)
    head = read_head(head_path(path))
    lines = data.split(b"\n")
    torn = bool(lines) and lines[-1] != b""
    if lines and lines[-1] == b"":
        lines.pop()
    n = len(lines)
    notes: list[str] = []
    matches = [_CHAINED.match(ln) for ln in lines]
    seqs = [int(m.group(1)) if m else None for m in matches]
    kinds = [(m.group(3).decode("ascii") if m.group(3) else SHA256) if m else None for m in matches]
    start = next((i for i, m in enumerate(matches, 1) if m), n + 1)
    keyed_from = next((i for i, k in enumerate(kinds, 1) if k == HMAC), None)

    def bad(i: int | None, problem: str) -> Verdict:
        return Verdict(False, n, start, problem, i, tuple(notes), keyed_from)

    if key is not None and n == 0:
        if head is None:
            return bad(None, "the audit log and its chain head are both gone, but the vault records that a keyed "
                             "log was started (it holds the audit key): they were deleted")
    elif key is not None and keyed_from is None:
        return bad(min(start, n), "no line is keyed, but the vault records that a keyed log was started (it holds "
                                  "the audit key): the keyed lines were removed, or the log was replaced")
    if keyed_from is not None and key is None:
        return bad(keyed_from, f"lines from {keyed_from} on are keyed with the vault's audit key, but there is no "
                               "key to check them with (the vault is missing, or holds no audit key)")
    if head is not None and head.start != start and head.start <= n:
        i = min(head.start, start)
        return bad(i, f"line {i} was changed or removed: the chain starts at line {head.start} "
                      f"(state of the head file), but the log's first chained line is {start}")
    if start > 1:
        last_old = min(start - 1, n)
        notes.append(f"lines 1-{last_old} predate the hash chain and are not protected by it"
                     if last_old > 1 else "line 1 predates the hash chain and is not protected by it")
    if keyed_from is not None and keyed_from > start:
        notes.append(f"lines {start}-{keyed_from - 1} were chained without a key, before the vault held the audit "
                     f"key: line {keyed_from} seals them against any later change, not against lines forged "
                     "before it" if keyed_from - 1 > start else
                     f"line {start} was chained without a key, before the vault held the audit key: line "
                     f"{keyed_from} seals it against any later change, not against forging before it")

    def digest_for(pos: int, line: bytes) -> str:    # the `prev` line `pos` carries for `line`
        return line_digest(kinds[pos - 1], key, line)

    def seq_at(pos: int) -> int | None:      # 1-based position; None past the end
        return seqs[pos - 1] if 1 <= pos <= n else None

    def head_vouches(last: bytes) -> bool:
        assert head is not None
        return hmac.compare_digest(head.hash, head_digest(head.chain, key, head.lines, head.bytes, head.start, last))

    for i in range(start, n + 1):
        seq = seqs[i - 1]
        m = matches[i - 1]
        ln = lines[i - 1]
        if seq == i:
            assert m is not None
            expected = ZERO if i == 1 else digest_for(i, lines[i - 2])
            if hmac.compare_digest(m.group(2).decode("ascii"), expected):
                continue                 # the common case: in place, chained to the line before
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
        # Was line i-1 changed, or line i's own `prev`? The line after i (or the head) recorded
        # line i's digest: if that still matches, line i is as written.
        if i < n:
            nm = matches[i]
            known = nm is not None
            vouched = known and hmac.compare_digest(nm.group(2).decode("ascii"), digest_for(i + 1, ln))
        else:
            known = head is not None and head.lines == n
            vouched = known and head_vouches(ln)
            if head is not None and head.lines == i - 1 and head_vouches(lines[i - 2]):
                # the head vouches for the line before: this last line, past the head, does not chain on
                return bad(i, f"line {i} does not chain on from line {i - 1} (its prev is not line {i - 1}'s "
                              "digest) and was appended after the chain head was saved: added by someone "
                              "without the key")
        j = i if (known and not vouched) or i == 1 else i - 1
        if j == i - 1 and kinds[i - 1] == HMAC:
            return bad(j, f"line {j} was changed (its digest no longer matches the chain), or line {i} was "
                          f"written by someone without the key (its prev is not line {j}'s digest)")
        return bad(j, f"line {j} was changed (its digest no longer matches the chain)")
    if keyed_from is not None:
        plain = [i for i in range(keyed_from + 1, n + 1) if kinds[i - 1] != HMAC]
        if plain:
            return bad(plain[0], f"{_span(plain)} {'is' if len(plain) == 1 else 'are'} not keyed, but the keyed "
                                 f"chain began at line {keyed_from}: added by someone who can write state/ "
                                 "without the key, or by `assistant approvals approve|deny|serve` when it could "
                                 "not unlock the vault (it warns when it writes such a line)")
    doubted = [i for i in range(start, n + 1) if matches[i - 1] is not None and matches[i - 1].group(5)]
    if doubted:
        i = doubted[0]
        why = matches[i - 1].group(5).decode("ascii")
        if why == "gone":
            return bad(i, f"line {i} was written to a missing or empty log, but the vault records that a keyed log "
                          "was started before it (it holds the audit key): the log was deleted or emptied, and "
                          "the lines it held are gone")
        said = {"missing": "there was no chain head", "damaged": "the chain head was damaged",
                "lagging": "lines had been appended after the chain head was saved",
                "changed": "the chain head no longer matched the last line"}[why]
        return bad(i, f"line {i} was appended when {said}: the lines before it were added or changed without "
                      "going through this program, or a writer stopped between a line and its head")
    for i in range(start + 1, n + 1):
        now, before = matches[i - 1], matches[i - 2]
        if now is not None and before is not None and now.group(4) and before.group(4) and now.group(4) < before.group(4):
            return bad(i, f"line {i}'s time ({now.group(4).decode()}) is earlier than line {i - 1}'s "
                          f"({before.group(4).decode()}): each line's time is taken under the log's lock, so "
                          "lines were changed, inserted or reordered, or the clock was set back")
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
        if head.lines >= start:
            last_kind = HMAC if kinds[head.lines - 1] == HMAC else SHA256
            if head.chain != last_kind:
                return bad(head.lines, f"the chain head was not saved the way line {head.lines} was written "
                                       f"({head.chain} head, {last_kind} line): the head was replaced, and the "
                                       "last lines may have been cut off")
            if not head_vouches(lines[head.lines - 1]):
                return bad(head.lines, f"line {head.lines} was changed (it no longer matches the chain head)")
        if n > head.lines:
            first = head.lines + 1
            return bad(first, f"{'line' if first == n else 'lines'} {first if first == n else f'{first}-{n}'} "
                              "chain on but were appended after the chain head was last saved: added without "
                              "going through this program, or a writer stopped between a line and its head")
    return Verdict(True, n, start, None, None, tuple(notes), keyed_from)


__all__ = ["AuditLog", "AuditError", "DOUBTS", "HMAC", "Head", "KeySource", "SHA256", "Verdict", "verify", "read_head",
           "read_log", "head_path", "request_lines", "line_digest", "head_digest", "line_hash", "timestamp",
           "ZERO"]


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
