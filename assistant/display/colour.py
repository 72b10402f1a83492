"""Colour on a terminal, and only there: status words, diff lines, the chat's speakers.

Guards two promises. Colour is only ever added for a person looking at a terminal: never when
the stream is piped or redirected (scripts and logs get the plain bytes), never when NO_COLOR
is set to any non-empty value (https://no-color.org), never for TERM=dumb. And colour can never
carry hostile text: every piece painted here goes through `terminal.escape()` first (which
leaves already escaped text as it is), and the colour codes are put AROUND the escaped text,
so a model, a note or a page can never start, stop or fake a colour.
"""

from __future__ import annotations

import os
from typing import IO

from assistant.display.terminal import escape

RESET = "\x1b[0m"
# what each kind of text looks like (SGR parameters)
STYLES = {
    "good": "32",        # green: done, allow, ok, approved
    "bad": "31",         # red: denied, failed, error, PROBLEM
    "warn": "33",        # yellow: pending, expired, stopped, a flag on a reply
    "add": "32",         # a diff's added line
    "remove": "31",      # a diff's removed line
    "hunk": "36",        # a diff's @@ line
    "file": "1",         # a diff's ---/+++ lines
    "you": "1;34",       # the person's prompt in the chat
    "assistant": "1;35", # the assistant's name in the chat
}
STATUS = {
    "done": "good", "allow": "good", "ok": "good", "approved": "good", "all good": "good",
    "denied": "bad", "deny": "bad", "failed": "bad", "error": "bad", "PROBLEM": "bad", "corrupt": "bad",
    "pending": "warn", "expired": "warn", "stopped": "warn", "interrupted": "warn", "warning": "warn",
    "ask": "warn",
}


def wanted(stream: IO[str] | None) -> bool:
    """True if text written to `stream` may be coloured: a terminal, NO_COLOR unset or empty,
    TERM not "dumb"."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def paint(text: str, style: str, *, on: bool) -> str:
    """`text` escaped, in `style` when `on` (else just escaped)."""
    safe = escape(text)
    if not on or not safe:
        return safe
    return f"\x1b[{STYLES[style]}m{safe}{RESET}"


def status(word: str, *, on: bool) -> str:
    """A status word (done, denied, failed, error, ...) in its colour; an unknown word is left plain."""
    style = STATUS.get(word.strip())
    return paint(word, style, on=on) if style else escape(word)


def status_line(line: str, *, on: bool) -> str:
    """A line that starts `WORD:` (`done: ...`, `error: ...`) with WORD in its colour (the line
    is escaped too, as every painted text is; off, it is returned as it is)."""
    word, sep, rest = line.partition(":")
    if not on or not sep or word not in STATUS:
        return line
    return status(word, on=True) + sep + escape(rest)


def diff_line(line: str, *, on: bool, prefix: str = "", header: bool = True) -> str:
    """One line of a unified diff (already escaped), coloured by its first character; `prefix` is
    a mark the caller put before each line (the chat's "   | ") and is kept uncoloured. header:
    the line may be a `---`/`+++` file line (before the first @@ only: later, it is a removed
    line that starts with "--")."""
    if not on:
        return line
    body = line[len(prefix):] if prefix and line.startswith(prefix) else line
    lead = line[: len(line) - len(body)]
    end = len(body.rstrip("\r\n"))
    text, newline = body[:end], body[end:]
    if header and text.startswith(("+++ ", "--- ")):
        style = "file"
    elif text.startswith("+"):
        style = "add"
    elif text.startswith("-"):
        style = "remove"
    elif text.startswith("@@"):
        style = "hunk"
    else:
        return escape(line)
    return escape(lead) + paint(text, style, on=True) + newline


def diff(text: str, *, on: bool, prefix: str = "") -> str:
    """Every line of a (possibly marked) unified diff, coloured by diff_line."""
    if not on:
        return text
    out, header = [], True
    for ln in text.splitlines(keepends=True):
        out.append(diff_line(ln, on=True, prefix=prefix, header=header))
        if ln[len(prefix):].startswith("@@") if ln.startswith(prefix) else ln.startswith("@@"):
            header = False
    return "".join(out)


def prompt(text: str, style: str, *, on: bool, readline: bool) -> str:
    """A prompt for input(): with readline active, the colour codes are marked as taking no
    width (\\x01 ... \\x02), so line editing keeps its place."""
    if not on:
        return text
    start, end = (f"\x01\x1b[{STYLES[style]}m\x02", f"\x01{RESET}\x02") if readline else (
        f"\x1b[{STYLES[style]}m", RESET)
    word = text.rstrip()
    return f"{start}{escape(word, newlines=False)}{end}{text[len(word):]}"


__all__ = ["wanted", "paint", "status", "status_line", "diff_line", "diff", "prompt", "STYLES", "STATUS"]
