"""Model text on its way to a terminal: no line of it may wrap into column 0, where it could
pass for a line of the program's own (a ruling, a tool result, the prompt).

A newline in model text is followed by a continuation mark by the caller. Wrapping is the
terminal's doing, so here, when the output is a terminal: the cursor's column is followed
across writes and a line that would not fit is broken before the margin, going on after the
same mark. A line is broken at a word boundary (before the word that would not fit, which goes
on after the mark whole); only a word longer than a whole line is broken where the line ends.
A word is what lies between spaces, tabs and line breaks within one write: a word that a
stream writes in pieces (a reply, token by token) can still be broken inside. Widths err on the wide side (the larger of the C library's wcwidth and Unicode's
East Asian width; symbols count two), so a break comes early rather than late; tabs become
spaces to the next 8-column stop; the width is read from the terminal itself (not $COLUMNS)
at every write, so a resize counts from the next write. What this cannot see: a terminal that
draws a character wider than both the C library and Unicode say, and lines already on the
screen that a terminal re-flows when it is made narrower.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import unicodedata
from typing import Callable

MIN_WIDTH = 20                               # a narrower screen still gets lines this wide
TAB = 8

_SEQUENCE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")    # the program's own (colour, erase)
_WORD = re.compile(r"[^ \t\n\r]+")


@functools.cache
def _wcwidth() -> Callable[[str], int]:
    """The C library's wcwidth (already in the process: no library search), loaded on first use."""
    try:
        fn = ctypes.CDLL(None).wcwidth
        fn.argtypes = [ctypes.c_wchar]
        fn.restype = ctypes.c_int
        return lambda ch: int(fn(ch))
    except (OSError, AttributeError):
        return lambda ch: -1


@functools.lru_cache(maxsize=8192)
def cell_width(ch: str) -> int:
    """Columns a printable character may take on a terminal, erring on the wide side."""
    if " " <= ch <= "~":
        return 1
    if unicodedata.east_asian_width(ch) in ("W", "F") or unicodedata.category(ch) == "So":
        estimate = 2
    else:
        estimate = 0 if unicodedata.combining(ch) else 1
    return max(estimate, _wcwidth()(ch))


def terminal_columns(fd: int) -> int | None:
    """The terminal's own width (never $COLUMNS); None when fd is no terminal."""
    try:
        return max(MIN_WIDTH, os.get_terminal_size(fd).columns)
    except OSError:
        return None


class ScreenLines:
    """Feed every write to one terminal through `feed` (its column is followed across writes):
    lines that would not fit `width()` columns are broken and go on after `mark`."""

    def __init__(self, mark: str, width: Callable[[], int | None]) -> None:
        self.mark = mark
        self.width = width
        self.column = 0

    def feed(self, text: str) -> str:
        width = self.width()
        out: list[str] = []
        pos = 0
        for word in _WORD.finditer(text):
            out.append(self._cells(text[pos:word.start()], width))     # blanks and line breaks
            out.append(self._word(word.group(), width))
            pos = word.end()
        out.append(self._cells(text[pos:], width))
        return "".join(out)

    def _word(self, word: str, width: int | None) -> str:
        """One word: moved whole to a continuation line if it does not fit on this one but fits
        on that; broken where lines end only if it is longer than a whole line."""
        plain = _SEQUENCE.sub("", word)
        lead = ""
        if width is not None and self.column > len(self.mark):
            cells = sum(cell_width(ch) for ch in plain)
            if self.column + cells > width and len(self.mark) + cells <= width:
                lead = "\n" + self.mark
                self.column = len(self.mark)
        out = [lead]
        pos = 0
        for match in _SEQUENCE.finditer(word):
            out.append(self._cells(word[pos:match.start()], width))
            out.append(match.group())
            pos = match.end()
        out.append(self._cells(word[pos:], width))
        return "".join(out)

    def at_line_start(self) -> None:
        """The terminal moved to a new line without us (the person pressed Enter at a prompt)."""
        self.column = 0

    def _cells(self, text: str, width: int | None) -> str:
        out: list[str] = []
        for ch in text:
            if ch in "\n\r":
                out.append(ch)
                self.column = 0
                continue
            if ch == "\t":
                cells = TAB - self.column % TAB
                ch = " " * cells
            else:
                cells = cell_width(ch)
            if width is not None and self.column + cells > width and self.column > len(self.mark):
                out.append("\n" + self.mark)
                self.column = len(self.mark)
                if ch.startswith(" ") and len(ch) > 1:     # a tab at the break: to the next stop
                    cells = TAB - self.column % TAB
                    ch = " " * cells
            out.append(ch)
            self.column += cells
        return "".join(out)
