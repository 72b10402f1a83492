"""The note format: markdown with optional `---`-fenced frontmatter of simple `key: value` pairs.

Guards two small facts everything else relies on: what a note's *revision* is (12 hex chars
of HMAC-SHA256 of its exact bytes under the workspace's revision key, so "read before
overwrite" compares bytes, not mtimes, and a revision shown beside a redacted note is no
offline oracle for the secret redacted out of it), and
how a summary is taken from a note's head (frontmatter `description:`, else the first
non-empty body line, cleaned of control characters and cut to a bounded width). A bare
`description:` line outside the fences is body text. Unknown frontmatter lines are kept as
they are.
"""

from __future__ import annotations

import hashlib
import hmac
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from policy.visible import invisible

if TYPE_CHECKING:
    from datetime import date

FENCE = "---"
REVISION_CHARS = 12
ELLIPSIS = "\u2026"


def revision(data: bytes, key: bytes) -> str:
    """The revision of a note: the first 12 hex characters of HMAC-SHA256(key, its exact bytes).

    `key` is the workspace's revision key (assistant.secrets.revision_key); callers go through
    `Memory.revision(data)`, the one way a shown revision is computed."""
    if not isinstance(key, bytes) or len(key) < 16:
        raise ValueError("a revision needs the workspace's revision key (16 bytes or more)")
    return hmac.new(key, data, hashlib.sha256).hexdigest()[:REVISION_CHARS]


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class ParsedNote:
    """A note split into frontmatter and body.

    `meta` holds the simple `key: value` pairs (first occurrence wins); `front_lines` holds
    every line between the fences exactly as written, so unknown lines survive a rewrite.
    `has_frontmatter` is False when there is no complete opening + closing fence pair.
    """

    meta: dict[str, str] = field(default_factory=dict)
    front_lines: list[str] = field(default_factory=list)
    body: str = ""
    has_frontmatter: bool = False


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _is_fence(line: str) -> bool:
    return line.rstrip("\r").rstrip() == FENCE


def _pair(line: str) -> tuple[str, str] | None:
    """`key: value` -> (key, value); keys are simple identifiers; anything else -> None."""
    line = line.rstrip("\r")
    key, sep, value = line.partition(":")
    if not sep:
        return None
    key = key.strip()
    if not key or not all(c.isalnum() or c in "_-" for c in key) or line[:1].isspace():
        return None
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return key, value


def parse(text: str) -> ParsedNote:
    """Split a whole note. Without a closing fence there is no frontmatter: it is all body."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _lines(text)
    if not lines or not _is_fence(lines[0]):
        return ParsedNote(body=text)
    for i in range(1, len(lines)):
        if _is_fence(lines[i]):
            front = lines[1:i]
            meta: dict[str, str] = {}
            for line in front:
                kv = _pair(line)
                if kv and kv[0] not in meta:
                    meta[kv[0]] = kv[1]
            return ParsedNote(meta=meta, front_lines=front, body="\n".join(lines[i + 1 :]), has_frontmatter=True)
    return ParsedNote(body=text)


def with_meta(text: str, key: str, value: str) -> str:
    """Return the note with frontmatter `key` set to `value`; every other line kept as written."""
    if "\n" in value or "\r" in value:
        raise ValueError("a frontmatter value must be one line")
    if _pair(f"{key}: x") is None:
        raise ValueError(f"not a simple frontmatter key: {key!r}")
    note = parse(text)
    new_line = f"{key}: {value}"
    if not note.has_frontmatter:
        return f"{FENCE}\n{new_line}\n{FENCE}\n{text}"
    front = list(note.front_lines)
    for i, line in enumerate(front):
        kv = _pair(line)
        if kv and kv[0] == key:
            front[i] = new_line
            break
    else:
        front.append(new_line)
    return "\n".join([FENCE, *front, FENCE]) + "\n" + note.body


# --- summaries -------------------------------------------------------------------------------

def clean_line(s: str) -> str:
    """One display line: control, format (bidi), separator and invisible (default-ignorable:
    variation selectors, Hangul fillers, policy.visible) characters become spaces, runs collapse."""
    out = []
    for ch in s:
        cat = unicodedata.category(ch)
        if (cat[0] in "CZ" and ch != " ") or invisible(ch):
            out.append(" ")
        else:
            out.append(ch)
    return " ".join("".join(out).split())


def cut(s: str, width: int) -> str:
    """Cut to at most `width` characters, marking a cut with an ellipsis."""
    if width <= 0:
        return ""
    if len(s) <= width:
        return s
    return s[: width - 1].rstrip() + ELLIPSIS


def decode_head(head: bytes, complete: bool) -> str:
    """Decode a note's head as UTF-8. A multi-byte character cut by the head boundary is dropped;
    any other invalid byte raises UnicodeDecodeError."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if complete or exc.end < len(head) - 3 or exc.reason != "unexpected end of data":
            raise
        return head[: exc.start].decode("utf-8")


def summary_from_head(text: str, complete: bool) -> str:
    """The raw (uncut) summary of a note from its head text.

    Frontmatter `description:` wins; else the first non-empty body line. When the head ends
    inside the frontmatter (`complete` False and no closing fence yet), a `description:`
    already seen in it is still used; otherwise there is no summary ("").
    """
    lines = _lines(text)
    if lines and _is_fence(lines[0]):
        closing = next((i for i in range(1, len(lines)) if _is_fence(lines[i])), None)
        if closing is not None or not complete:
            front = lines[1:closing] if closing is not None else lines[1:]
            for line in front:
                kv = _pair(line)
                if kv and kv[0] == "description" and kv[1].strip():
                    return kv[1]
            if closing is None:
                return ""
            lines = lines[closing + 1 :]
    # Only whole lines count: a head cut mid-line still gives that line's beginning.
    for line in lines:
        if line.strip():
            return line.strip()
    return ""


# --- staleness -------------------------------------------------------------------------------
# Frontmatter `review_after: YYYY-MM-DD` and `expires: YYYY-MM-DD` date a note. Nothing is ever
# deleted because of a date: a due or expired note is flagged to the model (catalog, recall) and
# listed by `assistant memory stale`, so the fact can be said to be possibly out of date.

REVIEW_KEY = "review_after"
EXPIRES_KEY = "expires"


@dataclass(frozen=True)
class Staleness:
    state: str        # "review" (review_after has passed) | "expired" | "bad-date"
    date: str         # the date as written
    key: str          # the frontmatter key

    def label(self) -> str:
        """The flag shown after the note's summary."""
        if self.state == "expired":
            return f"[expired {self.date}: may be out of date]"
        if self.state == "review":
            return f"[review due since {self.date}: may be out of date]"
        return f"[{self.key}: {self.date!r} is not a YYYY-MM-DD date]"

    def to_json(self) -> dict[str, str]:
        return {"state": self.state, "date": self.date, "key": self.key}


def staleness(meta: dict[str, str], today: date | None = None) -> Staleness | None:
    """Expired wins over review due; None when neither date has passed (or neither is set)."""
    import datetime as _dt

    today = today or _dt.date.today()
    found: Staleness | None = None
    for key, state in ((EXPIRES_KEY, "expired"), (REVIEW_KEY, "review")):
        raw = meta.get(key)
        if raw is None or not raw.strip():
            continue
        try:
            when = _dt.date.fromisoformat(raw.strip())
        except ValueError:
            found = found or Staleness("bad-date", cut(clean_line(raw), 40), key)
            continue
        if when <= today:
            return Staleness(state, when.isoformat(), key)
    return found


def head_meta(text: str) -> dict[str, str]:
    """The frontmatter pairs of a note's head (a closing fence is needed; else {})."""
    return parse(text).meta
