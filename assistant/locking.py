"""The memory writers' lock: one advisory `flock` on `state/memory.lock`.

Guards the short critical section of a memory write (re-check the revision, write, audit)
against other writers in other processes (a chat, a scheduled run, the CLI) and other threads.
`flock` locks belong to an open file description and vanish when the holder dies, so a stale
lock file left by a killed process never blocks anyone; a *live* holder that never lets go is
met with a bounded wait and a clear error naming the holder's pid, never a hang.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

DEFAULT_TIMEOUT = 10.0
_POLL_START = 0.001
_POLL_MAX = 0.05


class LockTimeout(TimeoutError):
    """The lock stayed held by a live process for the whole bounded wait."""


class FileLock:
    """`with FileLock(path, timeout=10):` holds an exclusive flock on `path` for the block.

    Re-entrant use of one instance is an error; use one instance per critical section.
    The lock file is created 0o600 (its parent must exist) and records the holder's pid
    for the error message only; the pid is never used to decide anything.
    """

    def __init__(self, path: str | os.PathLike[str], timeout: float = DEFAULT_TIMEOUT) -> None:
        self.path = Path(path)
        self.timeout = float(timeout)
        self._fd: int | None = None

    def acquire(self) -> None:
        if self._fd is not None:
            raise RuntimeError(f"{self.path}: already held by this FileLock")
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.path, flags, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LockTimeout(f"{self.path} is a symlink; refusing to use it as the memory lock") from None
            raise
        deadline = time.monotonic() + self.timeout
        delay = _POLL_START
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    now = time.monotonic()
                    if now >= deadline:
                        holder = _read_holder(fd)
                        who = f" by process {holder}" if holder else ""
                        raise LockTimeout(
                            f"memory is locked{who} (lock {self.path}); gave up after {self.timeout:g}s. "
                            "Another writer is busy; try again. A lock left by a process that has died "
                            "is released automatically."
                        ) from None
                    time.sleep(min(delay, max(0.0, deadline - now)))
                    delay = min(delay * 2, _POLL_MAX)
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except OSError:
                pass  # the pid is only for messages
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> "FileLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return raw if raw.isdigit() else ""

