"""Session transcripts: `state/transcripts/<session>.jsonl`, append-only, every event redacted.

Guards two things: a transcript never holds a secret value (every string in every event goes
through the leak scanner's redaction before it reaches disk), and it is only ever appended to
(O_APPEND, one whole JSON line per write, never rewritten).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import secrets
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from policy.fileio import open_folder

if TYPE_CHECKING:
    from assistant.secrets.scanner import Scanner

_SESSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$")


def new_session_id(kind: str) -> str:
    """e.g. 20261130T030500Z-chat-3f9a1c: sortable by time, unique, safe as a file name."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{kind}-{secrets.token_hex(3)}"


def redact_value(value: object, scanner: "Scanner | None") -> object:
    """value with every string in it redacted (dicts and lists walked, keys too: a key is as much
    the caller's input as a value); other values kept. Two keys redacted alike are both kept."""
    if isinstance(value, str):
        return scanner.redact_record(value) if scanner is not None else value
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for k, v in value.items():
            key = redact_value(str(k), scanner)
            n = 1
            while key in out:
                n += 1
                key = f"{redact_value(str(k), scanner)} #{n}"
            out[key] = redact_value(v, scanner)
        return out
    if isinstance(value, (list, tuple)):
        return [redact_value(v, scanner) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return redact_value(str(value), scanner)


class Transcript:
    """Append-only JSONL log of one session. Thread-safe; each event is one line."""

    def __init__(self, transcripts_dir: str | os.PathLike[str], session: str, scanner: "Scanner | None", *,
                 beneath: str | os.PathLike[str] | None = None):
        """`beneath`: the folder `transcripts_dir` is reached from without following a link at
        any level (default: its grandparent, the workspace of state/transcripts): a link planted
        at state/ or state/transcripts is refused (policy.fileio.LinkedFolder, with the fix)."""
        if not _SESSION_RE.match(session):
            raise ValueError(f"bad session id {session!r}: letters, digits, '.', '_' and '-' only")
        self.session = session
        self.scanner = scanner
        self.dir = Path(transcripts_dir)
        self.path = self.dir / f"{session}.jsonl"
        self._lock = threading.Lock()
        base = Path(beneath) if beneath is not None else self.dir.parent.parent
        dir_fd = open_folder(base, os.path.relpath(self.dir, base), create=True)
        # O_NOFOLLOW: a symlink planted at the path is refused; O_NONBLOCK: so is a FIFO (the
        # open would wait for a reader forever); anything but a regular file is refused.
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            fd = os.open(self.path.name, flags, 0o600, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(errno.EINVAL, f"{self.path.name} is not a regular file")
        self._fd = fd

    def append(self, event: str, **data: object) -> None:
        record = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "session": self.session,
                  "event": event}
        record.update(data)
        line = json.dumps(redact_value(record, self.scanner), ensure_ascii=False, sort_keys=True) + "\n"
        payload = line.encode("utf-8")
        with self._lock:
            if self._fd < 0:
                raise ValueError(f"transcript {self.path.name} is closed")
            # O_APPEND: one write per line, so concurrent writers never interleave inside a line.
            written = os.write(self._fd, payload)
            while written < len(payload):
                written += os.write(self._fd, payload[written:])

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> "Transcript":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_transcript(path: str | os.PathLike[str]) -> list[dict]:
    """All events of a transcript file, in order."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
