"""One name, one entry: note and file names are taken in Unicode NFC, and a name whose NFC form
matches an entry spelled differently on disk is refused.

Guards the approver against seeing two different notes (or files) under one name: `josé.md`
typed in NFC and a `josé.md` a sync client stored in NFD look identical on every screen but
are two directory entries. Names coming in (from the model or the person) are normalised to
NFC; before one is used, each of its components is compared with the entries of its folder on
disk, and an entry that differs in spelling but not in NFC form is a refusal that names both.
"""

from __future__ import annotations

import os
import unicodedata
from typing import Protocol

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class _Root(Protocol):
    def fileno(self) -> int: ...


def _names(root: _Root, parts: list[str]) -> list[str]:
    """Raw entry names of the folder `parts` below the root, walked descriptor by descriptor
    without following a link (the parts are components of a path the grammar accepted)."""
    fd = os.open(".", _DIR, dir_fd=root.fileno())
    try:
        for part in parts:
            sub = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = sub
        return os.listdir(fd)
    finally:
        os.close(fd)


def nfc(rel: str) -> str:
    """The name in Unicode normalisation form C (what every name is taken as)."""
    return unicodedata.normalize("NFC", rel) if isinstance(rel, str) and not rel.isascii() else rel


def spelling_clash(root: _Root, rel: str) -> str | None:
    """The on-disk spelling of the first component of `rel` (an NFC path) whose folder holds an
    entry with the same NFC form but different code points; None if there is none. A folder
    that does not exist or cannot be listed has no clash (the operation itself reports it)."""
    parts = rel.split("/")
    for i, part in enumerate(parts):
        try:
            names = _names(root, parts[:i])
        except OSError:
            return None
        for name in names:
            # only a name outside ASCII can have another spelling (NFC of "K" is "K", but
            # KELVIN SIGN U+212A is "K" too: the entry is the non-ASCII one)
            if name != part and not name.isascii() and unicodedata.normalize("NFC", name) == part:
                return "/".join([*parts[:i], name])
        if part not in names:
            return None
    return None


def clash_message(rel: str, on_disk: str) -> str:
    shown = on_disk.encode("unicode_escape").decode("ascii")
    return (f"{rel!r} is refused: an entry {shown!r} already exists that reads the same but is spelled "
            "with other Unicode code points (not NFC); two entries would show under one name. "
            "Use that entry's name as it is, or have the person rename it")
