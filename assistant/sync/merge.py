"""The 3-way merge of a note both sides changed: `git merge-file` on the text, or a conflict.

Guards "nothing lost": a merge that git can make without a conflict region is a version; any
other outcome (a conflict, a side that is not UTF-8 text, git failing) is reported as a
conflict, so the caller keeps the local text and records the remote one beside it.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from assistant.sync.git import Git, GitError

__all__ = ["merge3"]


def merge3(git: Git, scratch: Path, base: bytes, local: bytes, remote: bytes) -> bytes | None:
    """The clean merge of local and remote from base, or None (a conflict)."""
    if local == remote or remote == base:
        return local
    if local == base:
        return remote
    scratch.mkdir(mode=0o700, exist_ok=True)
    tag = secrets.token_hex(8)
    names = [scratch / f"{tag}.{side}" for side in ("local", "base", "remote")]
    try:
        for path, data in zip(names, (local, base, remote)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with open(fd, "wb") as f:
                f.write(data)
        try:
            code, out = git.run(["merge-file", "-p", "-q", *map(str, names)], ok=tuple(range(0, 128)))
        except GitError:
            return None
        return out if code == 0 else None
    finally:
        for path in names:
            try:
                path.unlink()
            except FileNotFoundError:
                pass
