"""Files the person keeps out of the file tools' sight: `[files] hidden` in config.toml.

Gitignore-style patterns (via pathspec, so the person's patterns mean exactly what they mean
in a .gitignore): `*.key` anywhere, `private/` a folder and all below it. A hidden path is
refused by file_read/file_write and left out of file_list.

This is a visibility preference layered on top of the confinement, not the confinement itself:
what the file tools can reach at all is decided by the descriptor-relative `Root` at files/
(symlinks and multiply-linked files are refused there), never by these string patterns.
"""

from __future__ import annotations

from typing import Iterable

import pathspec

DEFAULT_HIDDEN = ["*.key", "*.pem", "id_rsa*", "id_ed25519*", "*.kdbx"]


class HiddenPatternError(ValueError):
    """A [files] hidden entry that is not a usable pattern."""


class HiddenFiles:
    def __init__(self, patterns: Iterable[str] = ()):
        pats = list(patterns)
        for p in pats:
            if not isinstance(p, str) or not p.strip():
                raise HiddenPatternError(f"files.hidden: every entry must be a non-empty pattern, got {p!r}")
        try:
            self._spec = pathspec.GitIgnoreSpec.from_lines(pats)
        except Exception as exc:   # pathspec raises various errors for malformed patterns
            raise HiddenPatternError(f"files.hidden: bad pattern: {exc}") from None
        self.patterns = pats

    def hides(self, rel: str, *, is_dir: bool = False) -> bool:
        """True if `rel` (relative to files/) or any folder above it is hidden."""
        if not self.patterns or not rel:
            return False
        if self._spec.match_file(rel + "/" if is_dir else rel):
            return True
        parts = rel.split("/")
        return any(self._spec.match_file("/".join(parts[:i]) + "/") for i in range(1, len(parts)))
