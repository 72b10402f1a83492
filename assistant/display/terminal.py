"""What reaches a terminal is what is there: escaping, length statements, paging, and answers.

Guards the watching person's screen. Every text that comes from the model, a note, a web page
or a file name goes through `escape()` (or `one_line()`) before it is printed: a control,
format (bidi, zero-width), separator or unassigned character, and every default-ignorable one
(variation selectors, U+034F, Hangul fillers, tag characters: policy.visible decides) is shown
as a visible escape (`\\x1b`, `\\u202e`, `\\ufe0f`, `\\U000e0100`), so an ANSI sequence or a
carriage return can never erase, move or reorder what the person reads, and no text hides in
characters that render as nothing. The one exception is a single U+FE0E/U+FE0F right after an
emoji (its presentation selector). `invisible_line()` states how many invisible characters a
text holds, once per text, and `hidden_text_warning()` flags content that could carry hidden
text (a run of two or more, or any tag character), above the approval question. `\\n` and `\\t` are kept (and the `\\r` of a CRLF line ending).
Nothing is cut silently: `one_line()` states the full length of what it cut, and `Pages`
shows a long text a page at a time with its full length and how to see the rest.
`read_answer()` reads a deliberate answer on a terminal: input typed ahead is discarded first
and the read can be cancelled (Ctrl-C) without consuming anything typed afterwards.
This module imports nothing from the rest of the assistant but the path grammar and
policy.visible.
"""

from __future__ import annotations

import collections
import difflib
import os
import select
import re
import shutil
import time
import unicodedata
from typing import Callable

from policy.visible import emoji_presentation_ok, invisible, is_tag, visible

from assistant.confine import ConfinementError, validate_relpath

_ORDINARY_SPACE = re.compile(r"(?:[ \t\n]|\r\n)+")


def _code(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escape(text: object, *, newlines: bool = True) -> str:
    """`text` safe to print: every character that could move the cursor, erase, recolour or
    reorder the screen is shown as an escape. Keeps `\\t`, and `\\n` unless newlines=False;
    a `\\r` is kept only as part of a CRLF line ending (when newlines are kept)."""
    s = str(text)
    if s.isascii() and s.isprintable():
        return s
    out = []
    n = len(s)
    for i, ch in enumerate(s):
        if ch == "\t" or (ch == "\n" and newlines):
            out.append(ch)
        elif ch == "\r" and newlines and i + 1 < n and s[i + 1] == "\n":
            out.append(ch)
        elif ch < " " or ch == "\x7f" or not (visible(ch) or emoji_presentation_ok(s, i)):
            out.append(_code(ch))
        else:
            out.append(ch)
    return "".join(out)


def _invisible_runs(text: str) -> tuple[int, int, bool]:
    """(invisible characters shown as escapes, longest run of them, any tag character)."""
    count = longest = run = 0
    tag = False
    for i, ch in enumerate(text):
        if invisible(ch) and not emoji_presentation_ok(text, i):
            count += 1
            run += 1
            longest = max(longest, run)
            tag = tag or is_tag(ch)
        else:
            run = 0
    return count, longest, tag


def characters(n: int) -> str:
    """"1 character", "2,048 characters": a length as a person reads it."""
    return f"{n:,} character{'' if n == 1 else 's'}"


def invisible_count(text: object) -> int:
    """How many characters of `text` render as nothing and are shown as escapes."""
    s = str(text)
    return 0 if s.isascii() else _invisible_runs(s)[0]


def invisible_line(text: object) -> str:
    """"(N invisible characters)" and a newline if `text` holds any, else "". Said once per text."""
    n = invisible_count(text)
    if not n:
        return ""
    return f"({n:,} invisible character{'' if n == 1 else 's'})\n"


def hidden_text_warning(text: object) -> str:
    """One warning line (newline-terminated) if note content could carry text a person cannot
    see: a run of two or more invisible characters, or any tag character. "" otherwise. It
    flags, it does not refuse: a person may keep emoji."""
    s = str(text)
    if s.isascii():
        return ""
    count, longest, tag = _invisible_runs(s)
    if longest < 2 and not tag:
        return ""
    what = "tag characters" if tag else f"a run of {longest:,} invisible characters"
    return (f"warning: this content holds {what} ({count:,} invisible in all), which can spell "
            "text you cannot see and that every future prompt would read; they are shown as "
            "escapes below.\n")


def one_line(text: object, limit: int | None = None) -> str:
    """`text` on one line (runs of spaces, tabs and line breaks become one space), escaped. If it
    is longer than `limit` characters it is cut, and the cut says how long the whole text was."""
    # only ordinary whitespace is joined: NEL, U+2028, FF, the information separators and the
    # like (all whitespace to str.split) are shown as escapes, never as a plain space
    flat = escape(" ".join(p for p in _ORDINARY_SPACE.split(str(text)) if p), newlines=False)
    if limit is None or len(flat) <= limit:
        return flat
    return f"{flat[: max(1, limit - 1)]}… ({len(flat):,} characters in all)"


def control_character(text: str) -> tuple[int, str] | None:
    """(index, character) of the first C0/C1 control or DEL in `text` that a note may not hold:
    everything but `\\n`, `\\t` and the `\\r` of a CRLF line ending. None if there is none."""
    n = len(text)
    for i, ch in enumerate(text):
        o = ord(ch)
        if o < 0x20 or 0x7F <= o <= 0x9F:
            if ch in "\n\t" or (ch == "\r" and i + 1 < n and text[i + 1] == "\n"):
                continue
            return i, ch
    return None


def char_name(ch: str) -> str:
    """`U+001B` plus its name where Unicode has one (controls have none: ESC, CR... by table)."""
    names = {0x00: "NUL", 0x07: "BEL", 0x08: "BACKSPACE", 0x0B: "VERTICAL TAB", 0x0C: "FORM FEED",
             0x0D: "CARRIAGE RETURN", 0x1B: "ESCAPE", 0x7F: "DELETE", 0x9B: "CSI"}
    code = ord(ch)
    name = names.get(code) or unicodedata.name(ch, "")
    return f"U+{code:04X}" + (f" ({name})" if name else "")


def shown_name(rel: str) -> str:
    """A name from disk as it may be shown to the model or a person: unchanged if it passes the
    path grammar, else every character outside printable ASCII escaped (a backslash cannot
    occur in a valid name, so an escaped name never looks like a real one)."""
    try:
        validate_relpath(rel)
    except ConfinementError:
        return rel.encode("unicode_escape", "backslashreplace").decode("ascii")
    return rel


# ------------------------------------------------------------------ diffs


def _lines(text: str) -> list[str]:
    """Lines split at "\\n" only (str.splitlines would also split at \\r, \\f, U+2028...)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


# A diff is bounded (difflib's matching is quadratic or worse in the line counts): past either
# bound, both texts are shown in full with a sentence saying that no diff was computed.
MAX_DIFF_LINE_PAIRS = 25_000_000    # lines of the current x lines of the proposed text (after the
                                    # common head and tail are set aside)
MAX_DIFF_MATCH_STEPS = 4_000_000    # equal line pairs difflib's first matching call would visit (the
                                    # clock is checked only between calls: one call must stay short)
DIFF_SECONDS = 2.0                  # wall-clock time the matching may take


class _DiffTooCostly(Exception):
    """The matching passed its time bound; the message says so."""


class _DeadlineMatcher(difflib.SequenceMatcher):
    """difflib's matcher, stopped at a deadline: every step of its matching starts with a clock check."""

    def __init__(self, a: list[str], b: list[str], deadline: float, seconds: float) -> None:
        self._deadline, self._seconds = deadline, seconds
        super().__init__(None, a, b)

    def find_longest_match(self, alo=0, ahi=None, blo=0, bhi=None):  # type: ignore[override]
        if time.monotonic() >= self._deadline:
            raise _DiffTooCostly(f"finding the differences took longer than {self._seconds:g} seconds")
        return super().find_longest_match(alo, ahi, blo, bhi)


class _KnownBlocks(difflib.SequenceMatcher):
    """Opcodes and hunks from matching blocks computed elsewhere (the bounded matching)."""

    def __init__(self, blocks: list) -> None:
        super().__init__(None, [], [])
        self._blocks = blocks

    def get_matching_blocks(self):  # type: ignore[override]
        return self._blocks


def _matching_blocks(a: list[str], b: list[str], *, max_pairs: int, seconds: float) -> list:
    """difflib's matching blocks of a and b, the common head and tail set aside first (an edit of a
    long note stays cheap). _DiffTooCostly past max_pairs line pairs or `seconds`."""
    la, lb = len(a), len(b)
    head = 0
    while head < la and head < lb and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < la - head and tail < lb - head and a[la - 1 - tail] == b[lb - 1 - tail]:
        tail += 1
    mid_a, mid_b = a[head:la - tail], b[head:lb - tail]
    if len(mid_a) * len(mid_b) > max_pairs:
        raise _DiffTooCostly(f"comparing {len(mid_a):,} by {len(mid_b):,} differing lines is past the bound of "
                             f"{max_pairs:,} line pairs")
    steps = _match_steps(mid_a, mid_b)
    if steps > MAX_DIFF_MATCH_STEPS:
        # one find_longest_match call visits every pair of equal lines (bar difflib's junk), and
        # the deadline is only checked between calls (review 23: 125,002 x 199 lines of one
        # repeated line took 5.8 s in one call against a 2 s bound)
        raise _DiffTooCostly(f"the texts hold {steps:,} pairs of equal lines to match, past the bound of "
                             f"{MAX_DIFF_MATCH_STEPS:,}")
    blocks = []
    if head:
        blocks.append((0, 0, head))
    if mid_a and mid_b:
        matcher = _DeadlineMatcher(mid_a, mid_b, time.monotonic() + seconds, seconds)
        blocks += [(i + head, j + head, n) for i, j, n in matcher.get_matching_blocks() if n]
    if tail:
        blocks.append((la - tail, lb - tail, tail))
    merged: list = []
    for i, j, n in blocks:
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + n)
        else:
            merged.append((i, j, n))
    return [difflib.Match(*m) for m in merged] + [difflib.Match(la, lb, 0)]


def _match_steps(a: list[str], b: list[str]) -> int:
    """How many (line of a, equal line of b) pairs difflib's first matching call visits: every
    line of a meets each equal line of b, but for the lines difflib's autojunk drops (in a b of
    200 lines or more, a line found more than 1% of len(b) + 1 times)."""
    counts = collections.Counter(b)
    if len(b) >= 200:
        popular = len(b) // 100 + 1
        counts = collections.Counter({k: n for k, n in counts.items() if n <= popular})
    return sum(counts[line] for line in a if line in counts)


def _unified_range(start: int, stop: int) -> str:
    # as difflib writes a hunk's range: "3" for one line, "3,0" for none, "3,4" otherwise
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start if not length else start + 1},{length}"


def _escaped_lines(lines: list[str], prefix: str) -> str:
    return "".join(escape(prefix + line) if line.endswith("\n")
                   else escape(prefix + line) + "\n\\ No newline at end of file\n" for line in lines)


def _both_texts(a: list[str], b: list[str], name: str, why: str) -> str:
    """No diff: both texts in full, escaped, every line after one space (a text's own `---`,
    `+++` or `@@` line cannot pass for a file header, a hunk or a change)."""
    return (f"(no diff was computed: {why}; both texts are shown in full below, each line after one space)\n"
            f"--- a/{name}: the current text ({len(a):,} lines)\n{_escaped_lines(a, ' ')}"
            f"+++ b/{name}: the proposed text ({len(b):,} lines)\n{_escaped_lines(b, ' ')}")


def unified_diff(current: str | None, proposed: str, name: str, *, max_pairs: int | None = None,
                 seconds: float | None = None) -> str:
    """The full unified diff of `current` (None: no such file yet) -> `proposed`, escaped. Bounded
    (MAX_DIFF_LINE_PAIRS, DIFF_SECONDS unless given): past a bound, both texts in full and a
    sentence saying no diff was computed, and why."""
    a, b = _lines(current or ""), _lines(proposed)
    fromfile = f"a/{name}" if current is not None else "/dev/null"
    try:
        blocks = _matching_blocks(a, b, max_pairs=MAX_DIFF_LINE_PAIRS if max_pairs is None else max_pairs,
                                  seconds=DIFF_SECONDS if seconds is None else seconds)
    except _DiffTooCostly as exc:
        return _both_texts(a, b, escape(name, newlines=False), str(exc)) + invisible_line("".join(a + b))
    out = []
    shown: list[str] = []    # the raw lines the diff shows: its invisible characters are counted once
    for group in _KnownBlocks(blocks).get_grouped_opcodes(3):
        if not out:
            out.append(escape(f"--- {fromfile}\n") + escape(f"+++ b/{name}\n"))
        first, last = group[0], group[-1]
        out.append(f"@@ -{_unified_range(first[1], last[2])} +{_unified_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.append(_escaped_lines(a[i1:i2], " "))
                shown.extend(a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                out.append(_escaped_lines(a[i1:i2], "-"))
                shown.extend(a[i1:i2])
            if tag in ("replace", "insert"):
                out.append(_escaped_lines(b[j1:j2], "+"))
                shown.extend(b[j1:j2])
    if not out:
        return "(no change: the proposed content equals the current content)\n"
    return "".join(out) + invisible_line("".join(shown))


def proposed_text(current: str | None, proposed: str, name: str) -> str:
    """What a person is shown of a write: the whole new text for a new file, else the full
    unified diff against the current text. Escaped; ends with a newline."""
    if current is None:
        body = escape(proposed)
        if not body.endswith("\n"):
            body += "\n\\ No newline at end of file\n"
        body += invisible_line(proposed)
        return f"new file {escape(name, newlines=False)} ({len(proposed.encode('utf-8', 'replace')):,} bytes):\n{body}"
    return unified_diff(current, proposed, name)


# ------------------------------------------------------------------ paging


def screen_rows(default: int = 24) -> int:
    return shutil.get_terminal_size((80, default)).lines or default


class Pages:
    """A long text shown a page at a time; every page says where it is and how long the whole is."""

    def __init__(self, text: str, rows: int, *, chars: int | None = None) -> None:
        self.lines = text.splitlines(keepends=True) or [""]
        self.rows = max(5, rows)
        self.chars = len(text) if chars is None else chars     # of what the text shows
        self.shown = 0          # lines shown so far

    @property
    def done(self) -> bool:
        return self.shown >= len(self.lines)

    def next(self) -> str:
        """The next page, and if more is left, the statement of what is left."""
        start = self.shown
        self.shown = min(len(self.lines), start + self.rows)
        page = "".join(self.lines[start:self.shown])
        if not page.endswith("\n"):
            page += "\n"
        if not self.done:
            left = len(self.lines) - self.shown
            page += (f"[lines {start + 1}-{self.shown} of {len(self.lines):,} shown; {left:,} more lines, "
                     f"{self.chars:,} characters of content in all: type `more` to see the next page]\n")
        return page


# ------------------------------------------------------------------ answers


def is_terminal(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def discard_pending_input(fd: int) -> None:
    """Throw away whatever was typed ahead (a line meant as a chat message must not answer a
    question that was not on the screen yet)."""
    import termios

    try:
        termios.tcflush(fd, termios.TCIFLUSH)
    except (termios.error, OSError):
        pass


def read_answer(fd: int, still_wanted: Callable[[], bool], *, timeout: float | None = None,
                poll: float = 0.1, limit: int = 4096) -> str | None:
    """One line from the terminal `fd` (canonical mode: the line discipline does the editing),
    read only once it is complete. Returns None (and discards what was typed) as soon as
    `still_wanted()` is False, e.g. after Ctrl-C: nothing typed afterwards is consumed. None at
    end of input, and after `timeout` seconds without an answer."""
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    buf = b""
    while True:
        if not still_wanted() or (deadline is not None and time.monotonic() >= deadline):
            discard_pending_input(fd)
            return None
        try:
            ready, _, _ = select.select([fd], [], [], poll)
        except InterruptedError:
            continue
        if not ready:
            continue
        if not still_wanted():
            discard_pending_input(fd)
            return None
        try:
            chunk = os.read(fd, limit)
        except (BlockingIOError, InterruptedError):
            continue
        if not chunk:
            return None if not buf else buf.decode("utf-8", "replace")
        buf += chunk
        if b"\n" in buf or len(buf) >= limit:
            return buf.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")


def url_rows(url: str) -> list[tuple[str, str]]:
    """A URL's parts as a person must see them before it is fetched: (label, value) for scheme,
    host, port, path, query (and a fragment, never sent but shown), each in full and unescaped;
    [("url", url)] when it cannot be split. The terminal (url_parts) and the approval page
    (assistant.web.pages) both show these rows."""
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url)
        port = str(parts.port or {"https": 443, "http": 80}.get(parts.scheme, ""))
    except ValueError:
        return [("url", url)]
    rows = [("scheme", parts.scheme), ("host", parts.hostname or ""), ("port", port),
            ("path", parts.path or "/"), ("query", parts.query)]
    if parts.fragment:
        rows.append(("fragment", parts.fragment))     # never sent, but shown: nothing is left out
    return rows


def url_parts(url: str) -> str:
    """A URL as a person must see it before it is fetched: scheme, host, port, path and query,
    each on its own line, in full, escaped, with its length (data can leave in a long query)."""
    rows = url_rows(url)
    if rows[0][0] == "url":
        return f"    url:    {escape(url, newlines=False)} ({characters(len(url))})\n"
    return "".join(f"    {label + ':':<9}{escape(value, newlines=False) or '(none)'} ({characters(len(value))})\n"
                   for label, value in rows)


__all__ = ["characters", "escape", "one_line", "invisible_count", "invisible_line", "hidden_text_warning", "control_character",
           "char_name", "shown_name", "unified_diff",
           "proposed_text", "MAX_DIFF_LINE_PAIRS", "MAX_DIFF_MATCH_STEPS", "DIFF_SECONDS", "Pages", "screen_rows", "is_terminal", "discard_pending_input",
           "read_answer", "url_parts", "url_rows"]
