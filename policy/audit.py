"""state/audit.jsonl: one JSON line per ruling and per answer, append-only.

Guards the record of who allowed what. Each line is written with one `write()` on a descriptor
opened `O_APPEND | O_NOFOLLOW` (0o600), so concurrent writers never interleave inside a line
and nothing earlier is ever rewritten. Content is never logged, only its sha256; keys that
would carry content are refused, and an optional `redact` is applied to every string value.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any, Callable

# Keys that would put note text (possibly a secret) into the log.
_FORBIDDEN = frozenset({"content", "current", "proposed", "value", "secret", "text"})


class AuditError(Exception):
    """The audit log could not be written or read."""


def timestamp(t: float | None = None) -> str:
    """UTC, millisecond precision: 2026-11-30T03:04:05.678Z."""
    t = time.time() if t is None else t
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


class AuditLog:
    def __init__(self, path: str | os.PathLike[str], *, redact: Callable[[str], str] | None = None) -> None:
        self.path = Path(path)
        self.redact = redact

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        """Append one line; returns the record written. AuditError if it cannot be written."""
        bad = _FORBIDDEN.intersection(event)
        if bad:
            raise AuditError(f"refusing to log content-bearing field(s) {sorted(bad)}; log a sha256 instead")
        record: dict[str, Any] = {"time": timestamp()}
        for key, value in event.items():
            if isinstance(value, str) and self.redact is not None:
                value = self.redact(value)
            record[key] = value
        try:
            line = (json.dumps(record, ensure_ascii=False, sort_keys=False, default=str) + "\n").encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise AuditError(f"audit event is not serialisable: {exc}") from None
        try:
            # O_NONBLOCK: a FIFO here must be an error, not a gate that never returns.
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                         | os.O_NONBLOCK, 0o600)
        except OSError as exc:
            raise AuditError(f"cannot open audit log {self.path}: {exc.strerror or exc}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise AuditError(f"audit log {self.path} is not a regular file")
            written = os.write(fd, line)
            if written != len(line):
                raise AuditError(f"short write to audit log {self.path} ({written} of {len(line)} bytes)")
        except OSError as exc:
            raise AuditError(f"cannot write audit log {self.path}: {exc.strerror or exc}") from None
        finally:
            os.close(fd)
        return record

    def read(self) -> list[dict[str, Any]]:
        """All records (for tests and tooling); a missing log is empty."""
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in raw.splitlines() if line.strip()]
