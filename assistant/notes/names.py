"""One name, one entry: note and file names are taken in Unicode NFC, and a name whose NFC form
matches an entry spelled differently on disk is refused.

Guards the approver against seeing two different notes (or files) under one name: `josé.md`
typed in NFC and a `josé.md` a sync client stored in NFD look identical on every screen but
are two directory entries. Names coming in (from the model or the person) are normalised to
NFC; before one is used, each of its components is compared with the entries of its folder on
disk, and an entry that differs in spelling but not in NFC form is a refusal that names both.

An entry that exists only in another spelling (a note a sync tool stored in NFD) can still be
found for reading and renaming: `spelled_on_disk` gives its on-disk path when it is the one
entry of that NFC name (never when two spellings of one name are both there), and
`not_nfc` lists such entries for `doctor`.
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


class SpellingClash(ValueError):
    """Two entries of one folder read the same (one NFC form): neither is picked."""

    def __init__(self, rel: str, on_disk: str) -> None:
        super().__init__(f"{rel!r}: two entries read the same but are spelled with other Unicode code points "
                         f"({shown(rel)!r} and {shown(on_disk)!r}); rename one of them by hand first")
        self.rel, self.on_disk = rel, on_disk


def shown(rel: str) -> str:
    """A name with every non-ASCII character escaped (\\u0301): two spellings look different."""
    return rel.encode("unicode_escape").decode("ascii")


def spelled_on_disk(root: _Root, rel: str) -> str:
    """The path of the entry whose NFC form is `rel` (an NFC path), spelled as on disk: `rel`
    itself where it is there (or missing: the operation reports that), else the one entry of
    its folder with that NFC form. SpellingClash when a component is on disk in two spellings."""
    parts = rel.split("/")
    out: list[str] = []
    for part in parts:
        try:
            names = _names(root, out)
        except OSError:
            return "/".join([*out, *parts[len(out):]])
        others = [n for n in names if n != part and not n.isascii() and unicodedata.normalize("NFC", n) == part]
        if others and (part in names or len(others) > 1):
            raise SpellingClash(rel, "/".join([*out, others[0]]))
        out.append(others[0] if others else part)
    return "/".join(out)


def not_nfc(paths: list[str]) -> list[str]:
    """The paths (as found on disk) that are not in NFC: shown as they are, they look like their
    NFC form, yet no name typed or written in NFC reaches them without this lookup."""
    return [p for p in paths if not p.isascii() and unicodedata.normalize("NFC", p) != p]


def clash_message(rel: str, on_disk: str) -> str:
    shown = on_disk.encode("unicode_escape").decode("ascii")
    return (f"{rel!r}: an entry {shown!r} already exists that reads the same but is spelled "
            "with other Unicode code points (not NFC); two entries would show under one name. "
            "Use that entry's name as it is, or rename it to its NFC spelling "
            "(assistant memory rename OLD NEW)")
