"""The per-workspace revision key (state/revision.key): what makes a shown revision keyed.

Guards revisions against being an oracle. A note's revision is shown to the model, to
approvers and in logs while the note itself may be shown redacted; a plain hash of the real
bytes would let anyone holding the redacted text test guesses of the secret offline. Revisions
are therefore HMAC-SHA256 under this key (assistant.notes.frontmatter.revision). The key is 32 random
bytes, mode 0600, created on first use without following links and without ever replacing a
key another process created first. It guards nothing else: losing or damaging it only changes
every revision, which costs a re-read ("changed since you read it"); a damaged key file is
replaced by a new key.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from policy.fileio import LinkedFolder, open_folder, write_atomic

KEY_FILE = "revision.key"
KEY_BYTES = 32


class RevisionKeyError(OSError):
    """state/ cannot hold the revision key (not writable, not a folder...)."""


def _read(dfd: int, name: str = KEY_FILE) -> bytes | None:
    """The key on file, None if there is none or it is not a usable key file."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError:
        return None          # a link, a FIFO...: replaced below, never followed
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            return None
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    return data if len(data) == KEY_BYTES else None


def _write_new(dfd: int, *, replace: bool, name: str = KEY_FILE) -> None:
    """A fresh key, written atomically (policy.fileio). replace=False never replaces a key
    another process made first: that one wins."""
    try:
        write_atomic(name, secrets.token_bytes(KEY_BYTES), dir_fd=dfd, mode=0o600, replace=replace)
    except FileExistsError:
        pass


def load_key(state_dir: str | os.PathLike[str], *, name: str = KEY_FILE, what: str = "revision key") -> bytes:
    """The workspace's revision key, created (0600) on first use. RevisionKeyError if state/
    cannot hold one. `name`/`what`: another key of the same kind in state/ (the approval-link
    key, state/approval_links.key, is one: its loss costs only a re-sent link)."""
    path = Path(state_dir)
    try:   # state/ reached from the workspace without following a link (LinkedFolder says the fix)
        dfd = open_folder(path.parent, path.name, create=True)
    except LinkedFolder as exc:
        raise RevisionKeyError(f"the {what} cannot be kept: {exc.strerror}") from None
    except OSError as exc:
        raise RevisionKeyError(f"{path}: cannot open state/ for the {what}: {exc.strerror or exc}") from None
    try:
        for attempt in range(3):
            key = _read(dfd, name)
            if key is not None:
                return key
            exists = True
            try:
                os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                exists = False
            _write_new(dfd, replace=exists, name=name)
        raise RevisionKeyError(f"{path / name}: the {what} cannot be created or read")
    except OSError as exc:
        if isinstance(exc, RevisionKeyError):
            raise
        raise RevisionKeyError(f"{path / name}: {exc.strerror or exc}") from None
    finally:
        os.close(dfd)


__all__ = ["KEY_BYTES", "KEY_FILE", "RevisionKeyError", "load_key"]
