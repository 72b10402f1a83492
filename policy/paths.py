"""The one grammar for model-facing paths (notes under memory/, files under files/).

Guards that every layer gives a path the same answer: the policy kinds (policy.kinds), the
memory writer, the file tools and the confined `Root` (assistant.confine) all call `check`
here, so a path one layer accepts is never refused by another for a different reason. `Root`
adds only what the kernel decides (links, mounts, file types); memory adds only ".md".

A path is relative and forward-slashed; its components are never empty, `.`, `..` or
dot-leading (dot-leading names are reserved for the assistant's own temp files); no NUL,
backslash, control, format/bidi, invisible (default-ignorable, by policy.visible's table: U+034F,
variation selectors, Hangul fillers...), line/paragraph-separator or unpaired-surrogate character, and
no character that reads as a slash or a dot (`／`, `∕`, `．`, and anything NFKC folds into one).
Bounds: at most `MAX_DEPTH` (32) components of at most `MAX_COMPONENT_BYTES` (255) UTF-8 bytes;
in total at most `MAX_PATH_CHARS` characters and `MAX_PATH_BYTES` bytes (32 full components).
Nothing is decoded: `%2e%2e%2f` is a literal name.
"""

from __future__ import annotations

import unicodedata

from policy.visible import invisible_name

__all__ = ["MAX_DEPTH", "MAX_COMPONENT_BYTES", "MAX_PATH_BYTES", "MAX_PATH_CHARS",
           "PathGrammarError", "check", "component_problem", "show"]

MAX_DEPTH = 32
MAX_COMPONENT_BYTES = 255
MAX_PATH_BYTES = MAX_DEPTH * (MAX_COMPONENT_BYTES + 1) - 1   # 8191: 32 full components and 31 slashes
MAX_PATH_CHARS = MAX_PATH_BYTES   # checked first (before any encoding), so a huge string costs nothing


class PathGrammarError(ValueError):
    """A path the grammar refuses. The message names the component (1-based) and the rule."""


# Characters that render like a path separator or a dot. A name containing them is not an
# escape (the kernel sees one literal component), but it would mislead a person reading an
# approval request ("a／..／b" looks like a path), so such names are refused outright.
_LOOKALIKES = {
    "\u2215": "division slash",
    "\u2044": "fraction slash",
    "\u29f8": "big solidus",
    "\uff0f": "fullwidth solidus",
    "\u29f5": "reverse solidus operator",
    "\u2216": "set minus",
    "\ufe68": "small reverse solidus",
    "\uff3c": "fullwidth reverse solidus",
    "\u2024": "one dot leader",
    "\u2025": "two dot leader",
    "\u2026": "horizontal ellipsis",
    "\uff0e": "fullwidth full stop",
    "\ufe52": "small full stop",
    "\u3002": "ideographic full stop",
    "\u2571": "box drawings light diagonal",
    "\u2572": "box drawings light diagonal (reverse)",
    "\u27cb": "mathematical rising diagonal",
    "\u27cd": "mathematical falling diagonal",
    "\u29f9": "big reverse solidus",
    "\uff61": "halfwidth ideographic full stop",
}


def _char_problem(ch: str) -> str | None:
    if ch == "\x00":
        return "contains NUL"
    if ch == "\\":
        return "contains a backslash (use forward slashes)"
    if ch in _LOOKALIKES:
        return f"contains {_LOOKALIKES[ch]} U+{ord(ch):04X}, which looks like a path character"
    cat = unicodedata.category(ch)
    hidden = invisible_name(ch) if cat != "Cf" else None   # Cf has its own message below
    if hidden:
        return f"contains {hidden} U+{ord(ch):04X}, which is invisible (two names would look the same)"
    if cat == "Cc":
        return f"contains control character U+{ord(ch):04X}"
    if cat == "Cf":
        return f"contains format/bidi character U+{ord(ch):04X} (bidirectional or invisible)"
    if cat in ("Zl", "Zp"):
        return f"contains line/paragraph separator U+{ord(ch):04X}"
    if cat == "Cs":
        return f"contains unpaired surrogate U+{ord(ch):04X}"
    return None


def component_problem(comp: str) -> str | None:
    """Why the grammar refuses this one component, or None."""
    if comp == "":
        return "is empty (an empty component: a doubled or trailing slash)"
    if comp.startswith("."):
        if comp in (".", ".."):
            return f"({'the current folder' if comp == '.' else 'the parent folder'}) is never allowed"
        return "starts with a dot (dot-leading names are reserved)"
    if comp.isascii() and comp.isprintable() and "\\" not in comp:
        return None if len(comp) <= MAX_COMPONENT_BYTES else f"is longer than {MAX_COMPONENT_BYTES} bytes"
    for ch in comp:
        problem = _char_problem(ch)
        if problem:
            return problem
    # compatibility forms the table above does not list: "℀" is "a/c", "︰" is ".."
    folded = unicodedata.normalize("NFKC", comp)
    if "/" in folded or "\\" in folded:
        return f"reads as {folded!r} once normalised (NFKC), which looks like a path"
    if folded.startswith("."):
        return f"reads as {folded!r} once normalised (NFKC): a dot-leading name"
    if len(comp.encode("utf-8")) > MAX_COMPONENT_BYTES:
        return f"is longer than {MAX_COMPONENT_BYTES} bytes"
    return None


def show(text: str, limit: int = 80) -> str:
    """A path fragment fit for a message: repr (control characters escaped), bounded."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def check(path: object) -> list[str]:
    """The components of a model-facing path, or PathGrammarError saying which rule it breaks."""
    if not isinstance(path, str):
        raise PathGrammarError(f"path must be a str, not {type(path).__name__}")
    if path == "":
        raise PathGrammarError("path is empty")
    if len(path) > MAX_PATH_CHARS:
        raise PathGrammarError(f"path is {len(path)} characters; at most {MAX_PATH_CHARS} are allowed")
    if path.startswith("/"):
        raise PathGrammarError(f"path {show(path)} is absolute; paths are relative to the root")
    if path.endswith("/"):
        raise PathGrammarError(f"path {show(path)} has a trailing slash (an empty component)")
    parts = path.split("/")
    if len(parts) > MAX_DEPTH:
        raise PathGrammarError(f"path has {len(parts)} components; at most {MAX_DEPTH} are allowed "
                               f"(it is nested deeper than {MAX_DEPTH} levels)")
    for i, comp in enumerate(parts, 1):
        problem = component_problem(comp)
        if problem:
            raise PathGrammarError(f"path component {i} {show(comp)} {problem}")
    size = len(path.encode("utf-8"))   # every component encodes (no lone surrogates left)
    if size > MAX_PATH_BYTES:
        raise PathGrammarError(f"path is {size} bytes; at most {MAX_PATH_BYTES} are allowed")
    return parts
