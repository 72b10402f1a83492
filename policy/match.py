"""Glob matching for grant targets, with Go `path.Match` semantics.

Guards the reach of a grant: `*` is any run of non-`/` characters (empty included) and `?` is
one non-`/` character, so `people/*` covers that folder and nothing below it. `[...]` is a
class with ranges, `^` negation and `\\` escapes; `\\c` outside a class is the literal `c`.
A malformed pattern is a `PatternError` whatever the name is (Go checks the whole pattern
before saying "no"), so a bad grant is reported when grants load, not silently never matched.

Differences from Python's `fnmatch` (where `*` crosses `/`, `[!a]` negates, `\\` is literal
and `[` unclosed is a literal) and `PurePath.match` (matches from the right, so `b/*.md`
matches `a/b/c.md`) are pinned by tests/test_policy_match.py.

Patterns compile once (cached) into Go's chunks (the text between stars), each a small regex
matched at one position; the walk over the chunks is Go's, so there is no backtracking.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["PatternError", "match", "compile_pattern", "literal_prefix", "literal_suffix", "escape", "is_literal"]

_META = frozenset("*?[\\")


class PatternError(ValueError):
    """A malformed glob pattern (Go's ErrBadPattern). The message says where and why."""


def _class_char(pattern: str, i: int, where: int) -> tuple[str, int]:
    """One possibly-escaped character inside a class; returns (char, next index)."""
    n = len(pattern)
    if i >= n:
        raise PatternError(f"unclosed character class starting at offset {where} in {pattern!r}")
    c = pattern[i]
    if c in "-]":
        raise PatternError(f"{c!r} must be escaped as a range end at offset {i} in {pattern!r}")
    if c == "\\":
        i += 1
        if i >= n:
            raise PatternError(f"trailing backslash inside a class in {pattern!r}")
        c = pattern[i]
    if i + 1 >= n:
        raise PatternError(f"unclosed character class starting at offset {where} in {pattern!r}")
    return c, i + 1


def _class(pattern: str, i: int) -> tuple[str, int]:
    """The regex for the class starting at pattern[i] == '[', and the index after its ']'."""
    start, n = i, len(pattern)
    i += 1
    negated = i < n and pattern[i] == "^"
    if negated:
        i += 1
    ranges: list[tuple[str, str]] = []
    while True:
        if i < n and pattern[i] == "]" and ranges:
            break
        lo, i = _class_char(pattern, i, start)
        hi = lo
        if pattern[i] == "-":
            hi, i = _class_char(pattern, i + 1, start)
        ranges.append((lo, hi))
    # Go accepts lo > hi and simply never matches that range.
    body = "".join(
        re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}"
        for lo, hi in ranges
        if lo <= hi
    )
    # (a class, as in Go, may match '/': only * and ? stop at it)
    if body:
        return f"[{'^' if negated else ''}{body}]", i + 1
    return ("(?s:.)" if negated else "(?!)"), i + 1


def _chunks(pattern: str) -> list[tuple[bool, str]]:
    """Go's scanChunk: (star before it, regex of the fixed-length chunk up to the next star).

    A chunk matches a fixed number of characters, so `re.match(name, pos)` tries it at one place.
    """
    out: list[tuple[bool, str]] = []
    i, n = 0, len(pattern)
    while i < n:
        star = False
        while i < n and pattern[i] == "*":
            star, i = True, i + 1
        parts: list[str] = []
        while i < n and pattern[i] != "*":
            c = pattern[i]
            if c == "?":
                parts.append("[^/]")
            elif c == "\\":
                i += 1
                if i >= n:
                    raise PatternError(f"trailing backslash in {pattern!r}")
                parts.append(re.escape(pattern[i]))
            elif c == "[":
                part, i = _class(pattern, i)
                parts.append(part)
                continue
            else:
                parts.append(re.escape(c))
            i += 1
        out.append((star, "".join(parts)))
    return out


class _GoPattern:
    """A compiled pattern, matched the way Go's path.Match walks it.

    Go matches each chunk that follows a star at the first place it fits and never goes back to
    try a later place (only the last chunk slides until it ends the name), and a star never
    skips a '/'. A backtracking regex of the whole pattern would match more: `*[^a]*` would take
    `x/y` by letting the class eat the '/', which Go refuses. So the walk below is Go's.
    """

    __slots__ = ("pattern", "chunks")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.chunks = [(star, re.compile(rx, re.DOTALL) if rx else None) for star, rx in _chunks(pattern)]

    def fullmatch(self, name: str) -> bool:
        pos, n, last = 0, len(name), len(self.chunks) - 1
        for k, (star, chunk) in enumerate(self.chunks):
            if chunk is None:                      # a trailing star: the rest, unless it has a '/'
                return name.find("/", pos) < 0
            m = chunk.match(name, pos)
            if m is not None and (m.end() == n or k < last):
                pos = m.end()
                continue
            if not star:
                return False
            i = pos
            while i < n and name[i] != "/":        # the star skips i+1 characters, never a '/'
                m = chunk.match(name, i + 1)
                if m is not None and (m.end() == n or k < last):
                    pos = m.end()
                    break
                i += 1
            else:
                return False
        return pos == n


@lru_cache(maxsize=65536)
def compile_pattern(pattern: str) -> _GoPattern:
    """The compiled form of a valid pattern (use `.fullmatch(name)`), or PatternError."""
    if not isinstance(pattern, str):
        raise PatternError(f"a pattern must be a string, got {type(pattern).__name__}")
    return _GoPattern(pattern)


def match(pattern: str, name: str) -> bool:
    """Whether name matches all of pattern (Go path.Match). Malformed pattern -> PatternError."""
    return compile_pattern(pattern).fullmatch(name)


def is_literal(pattern: str) -> bool:
    """True if pattern has no metacharacter (matches exactly one name: itself)."""
    return not any(c in _META for c in pattern)


def _literals(pattern: str) -> list[str | None]:
    """The pattern as one item per matched character: the literal, or None for * ? [...]."""
    out: list[str | None] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(pattern[i + 1])
            i += 2
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            first = j
            while j < n and not (pattern[j] == "]" and j > first):
                j += 2 if pattern[j] == "\\" else 1
            out.append(None)
            i = j + 1
        else:
            out.append(None if c in "*?" else c)
            i += 1
    return out


def literal_prefix(pattern: str) -> str:
    """The unescaped literal text every match must start with (for indexing grants)."""
    out = []
    for item in _literals(pattern):
        if item is None:
            break
        out.append(item)
    return "".join(out)


def literal_suffix(pattern: str) -> str:
    """The unescaped literal text every match must end with (`*.example.com` -> `.example.com`)."""
    out = []
    for item in reversed(_literals(pattern)):
        if item is None:
            break
        out.append(item)
    return "".join(reversed(out))


def escape(literal: str) -> str:
    """A pattern matching exactly `literal` (metacharacters escaped)."""
    return "".join("\\" + c if c in _META else c for c in literal)
