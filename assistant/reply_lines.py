"""Model text as a terminal shows it: every line after the first starts with a continuation
mark, and on a terminal a line wider than the screen is broken here, mark included, before the
terminal would wrap it itself.

Guards the screen's own lines: a reply padded to the screen's width would otherwise wrap into
column 0, where its text could pass for a ruling, a tool result or the prompt. The text is
already escaped (assistant.terminal.escape), so every character left takes one or two cells,
or none (a combining mark).
"""

from __future__ import annotations

import shutil
import unicodedata

MIN_WIDTH = 20     # a narrower (or unknown) screen still gets lines this wide


def cell_width(ch: str) -> int:
    """Columns a printable character takes: 0 (combining), 2 (wide or fullwidth) or 1."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def screen_width(tty: bool) -> int | None:
    """The terminal's width when writing to one, else None (no breaks of our own)."""
    return max(MIN_WIDTH, shutil.get_terminal_size((80, 24)).columns) if tty else None


class ReplyLines:
    """Feed one text (in pieces, as it streams) written from `column`; `feed` returns it with
    the mark after every newline and, when `width` is known, a break and the mark wherever the
    next character would not fit."""

    def __init__(self, mark: str, width: int | None, column: int = 0) -> None:
        self.mark = mark
        self.width = width
        self.column = column

    def feed(self, text: str) -> str:
        out: list[str] = []
        for ch in text:
            if ch == "\n":
                out.append("\n" + self.mark)
                self.column = len(self.mark)
                continue
            cells = cell_width(ch)
            if self.width is not None and self.column + cells > self.width:
                out.append("\n" + self.mark)
                self.column = len(self.mark)
            out.append(ch)
            self.column += cells
        return "".join(out)
