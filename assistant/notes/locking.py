"""The memory writers' lock: `FileLock` on `state/memory.lock` (see policy.fileio, where it lives).

A thin re-export so `assistant.notes.locking.FileLock` / `LockTimeout` keep working; the one lock
implementation (bounded wait, never a hang) is `policy.fileio.FileLock`.
"""

from __future__ import annotations

from policy.fileio import DEFAULT_LOCK_TIMEOUT, FileLock, LockTimeout

__all__ = ["DEFAULT_LOCK_TIMEOUT", "FileLock", "LockTimeout"]
