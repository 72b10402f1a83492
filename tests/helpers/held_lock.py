"""Test support (no tests here): a lock file held by the test, as another writer (a second
process of the assistant) would hold it, to slow a writer at a known step."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class HeldLock:
    """An exclusive flock on `path` held until release() or the end of the `with` block."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> "HeldLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
