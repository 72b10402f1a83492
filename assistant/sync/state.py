"""state/sync/: what this device keeps about sync, never synced itself.

Guards that authority stays per device: the enrolled devices (devices.json), this device's key
(device.key), the last integrated head of each device's branch (integrated.json), what was
exported (exported.json), changes kept aside (aside.json), refused branches (refused.json), the
integration journal (journal.json) and the tombstones applied (forgotten.json) live in state/,
which no sync ever writes from outside.
Every file is written atomically (policy.fileio), reached without following a link; a file that
cannot be read is a SyncStateError naming it, never an empty "no devices" or "nothing integrated".
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from policy.fileio import FileLock, LinkedFolder, open_folder, read_regular, write_atomic

__all__ = ["SyncState", "SyncStateError", "Settings", "SYNC_DIR", "MAX_STATE_BYTES"]

SYNC_DIR = "sync"                    # state/sync
MAX_STATE_BYTES = 256 * 1024 * 1024
LOCK_TIMEOUT = 10.0


class SyncStateError(Exception):
    """state/sync cannot be read or written; the message names the file and the fix."""


@dataclass(frozen=True)
class Settings:
    """sync.json: this device's name and the remote (`assistant sync init`)."""

    name: str
    remote: str


class SyncState:
    def __init__(self, state_dir: Path) -> None:
        self.dir = Path(state_dir) / SYNC_DIR
        self.repo = self.dir / "repo.git"
        self.home = self.dir / "home"

    # -- files ------------------------------------------------------------------------------

    @contextmanager
    def _folder(self, create: bool = True) -> Iterator[int]:
        try:
            fd = open_folder(self.dir.parent, self.dir.name, create=create)
        except (LinkedFolder, OSError, ValueError) as exc:
            raise SyncStateError(f"{self.dir} cannot be opened: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            yield fd
        finally:
            os.close(fd)

    def exists(self) -> bool:
        return (self.dir / "sync.json").is_file()

    def read(self, name: str, default: object) -> object:
        if not os.path.lexists(self.dir / name):
            return default
        with self._folder(create=False) as fd:
            try:
                raw = read_regular(name, max_bytes=MAX_STATE_BYTES, dir_fd=fd)
                return json.loads(raw)
            except FileNotFoundError:
                return default
            except (OSError, ValueError) as exc:
                raise SyncStateError(f"{self.dir / name} cannot be read ({getattr(exc, 'strerror', None) or exc}); "
                                     "fix or remove it") from None

    def write(self, name: str, value: object) -> None:
        data = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
        with self._folder() as fd:
            try:
                write_atomic(name, data, dir_fd=fd, mode=0o600)
            except OSError as exc:
                raise SyncStateError(f"{self.dir / name} cannot be written: {exc.strerror or exc}") from None

    def remove(self, name: str) -> None:
        with self._folder() as fd:
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                pass

    def lock(self) -> FileLock:
        """One sync at a time on this workspace (bounded wait)."""
        with self._folder():
            pass
        return FileLock(self.dir / ".lock", LOCK_TIMEOUT, what="sync")

    # -- typed views ------------------------------------------------------------------------

    def settings(self) -> Settings:
        raw = self.read("sync.json", None)
        if raw is None:
            raise SyncStateError("sync is not set up on this workspace: run `assistant sync init REMOTE` first")
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not isinstance(raw.get("remote"), str):
            raise SyncStateError(f"{self.dir / 'sync.json'} is damaged; run `assistant sync init REMOTE` again")
        return Settings(name=raw["name"], remote=raw["remote"])

    def devices(self) -> list[dict[str, str]]:
        raw = self.read("devices.json", [])
        if not isinstance(raw, list) or not all(isinstance(d, dict) and isinstance(d.get("name"), str)
                                                and isinstance(d.get("key"), str) for d in raw):
            raise SyncStateError(f"{self.dir / 'devices.json'} is damaged; no device is trusted until it is fixed")
        return raw

    def mapping(self, name: str) -> dict:
        raw = self.read(name, {})
        if not isinstance(raw, dict):
            raise SyncStateError(f"{self.dir / name} is damaged; fix or remove it")
        return raw

    def listing(self, name: str) -> list:
        raw = self.read(name, [])
        if not isinstance(raw, list):
            raise SyncStateError(f"{self.dir / name} is damaged; fix or remove it")
        return raw
