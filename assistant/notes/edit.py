"""Small edits of a note (`memory_edit`): one change, matched in the redacted text, applied to the raw text.

Guards "an edit never loses or reveals a secret". Whoever edits (the model, an MCP client, the
person's `assistant memory edit --append ...`) saw the note redacted: each secret is a
"[redacted:NAME]" marker. `old` and `heading` are matched in that redacted view; the match's
span is mapped back to the raw text through the scanner's redaction spans
(`Scanner.redaction_spans`, the spans `Scanner.redact` replaces), and the change is applied to
the raw text. An edit whose span touches a redaction (overlaps a marker, or changes the
character right before or after one) is refused, so the secret's bytes and what bounds them
stay as they are. After the edit the new raw text, redacted again, must be exactly the old view
with the change applied (`check_view`): nothing the scanner recognised stops being recognised.

Pure functions over (raw text, redaction spans); every refusal is an EditRefused with a
specific message that quotes only what the editor saw (redacted text), never a secret. The
caller turns the result into a whole-note write through the one gated writer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from assistant.notes import frontmatter
from assistant.notes.writer import Refused
from assistant.secrets.scanner import MARKER_RE, Scanner, marker

__all__ = ["OPS", "Edit", "EditRefused", "EditTouchesSecret", "View", "apply", "check_view", "view_of"]

OPS = ("append", "replace", "insert_after", "replace_section")
_HEADING = re.compile(r"#{1,6}(?=[ \t]|$)")
_CODE_FENCE = re.compile(r"[ ]{0,3}(```|~~~)")
_SHOWN = 80          # characters of a quoted string in a refusal


class EditRefused(Refused):
    """The edit cannot be applied as asked (a missing or repeated string, an unknown or repeated
    heading, arguments that do not fit the op, an edit that changes nothing). Nothing is written."""


class EditTouchesSecret(EditRefused):
    """The edit's span touches a redaction: the secret behind the marker would be changed or lost."""


@dataclass(frozen=True)
class Edit:
    """One change: `op` (one of OPS), `text` (what goes in), `old` (replace: the text to
    replace, exactly once in the note) and `heading` (insert_after, replace_section: the whole
    heading line, exactly once)."""

    op: str
    text: str
    old: str | None = None
    heading: str | None = None


@dataclass(frozen=True)
class View:
    """A raw note text and the spans its redaction replaces ((start, end, label) in `raw`, in
    order): `text` is the redacted view, exactly as `Scanner.redact(raw)` renders it."""

    raw: str
    spans: tuple[tuple[int, int, str], ...]

    @property
    def text(self) -> str:
        return "".join(piece for piece, _ in self._pieces())

    def markers(self) -> list[tuple[int, int]]:
        """(start, end) of each marker in the redacted text."""
        out, pos = [], 0
        for piece, is_marker in self._pieces():
            if is_marker:
                out.append((pos, pos + len(piece)))
            pos += len(piece)
        return out

    def _pieces(self) -> list[tuple[str, bool]]:
        pieces: list[tuple[str, bool]] = []
        pos = 0
        for start, end, label in self.spans:
            pieces.append((self.raw[pos:start], False))
            pieces.append((marker(label), True))
            pos = end
        pieces.append((self.raw[pos:], False))
        return pieces

    def to_raw(self, index: int) -> int:
        """The raw position of a redacted-text position outside every marker (or at its edge)."""
        shift = 0
        red_pos = 0
        raw_pos = 0
        for start, end, label in self.spans:
            red_start = red_pos + (start - raw_pos)
            if index <= red_start:
                break
            red_end = red_start + len(marker(label))
            if index < red_end:
                raise ValueError("position inside a marker")   # the callers refuse this first
            shift += (end - start) - (red_end - red_start)
            red_pos, raw_pos = red_end, end
        return index + shift


def view_of(raw: str, scanner: Scanner) -> View:
    """The note as its reader saw it (`Memory.read`: `scanner.redact(raw)`), with the spans behind it."""
    return View(raw, tuple(scanner.redaction_spans(raw)))


def _shown(text: str) -> str:
    one = text.replace("\n", "\\n")
    return repr(one if len(one) <= _SHOWN else one[:_SHOWN - 1] + "…")


_WORDS = re.compile(r"[^\W_]+")
_NEAREST_CHARS = 200   # a longer line is not quoted as the `old` to copy (a cut quote cannot be copied)


def _shared(words: set[str], theirs: set[str]) -> int:
    """Words two lines share when they are near (at least two, and a third of the note line's
    words or half of the other line's), else 0."""
    n = len(words & theirs)
    return n if n >= 2 and (3 * n >= len(words) or 2 * n >= len(theirs)) else 0


def nearest_line(view_text: str, text: str) -> str | None:
    """The line of the note (redacted view) that `text` most likely rewrites: the body line
    sharing the most words with a line of `text` (at least two, and a third of the note line's
    words or half of the text line's), leaving out lines `text` repeats unchanged, frontmatter
    and lines holding a marker. None when no line is near enough or the nearest is too long to
    quote whole."""
    theirs = [set(_WORDS.findall(t.lower())) for t in text.split("\n") if t.strip()]
    kept = {t.strip() for t in text.split("\n")}
    best, best_shared = None, 0
    for line in frontmatter.parse(view_text).body.split("\n"):
        words = set(_WORDS.findall(line.lower()))
        if not words or line.strip() in kept or MARKER_RE.search(line) or len(line) > _NEAREST_CHARS:
            continue
        shared = max((_shared(words, t) for t in theirs), default=0)
        if shared > best_shared:
            best, best_shared = line, shared
    return best


def _as_lines(text: str) -> str:
    """`text` as whole lines: ending in a line break (the note's own "\\n")."""
    return text if text.endswith("\n") else text + "\n"


def _occurrences(haystack: str, needle: str) -> list[int]:
    found, pos = [], haystack.find(needle)
    while pos >= 0:
        found.append(pos)
        pos = haystack.find(needle, pos + 1)
    return found


def _line_no(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _headings(text: str) -> list[tuple[int, int, int, str]]:
    """(start, end of line incl. its break, level, line without its break) of each ATX heading,
    outside the frontmatter and fenced code blocks."""
    out: list[tuple[int, int, int, str]] = []
    lines = text.split("\n")
    pos = 0
    in_front = bool(lines) and lines[0].rstrip("\r").rstrip() == "---" and any(
        ln.rstrip("\r").rstrip() == "---" for ln in lines[1:])
    fence: str | None = None
    for i, line in enumerate(lines):
        end = pos + len(line) + (1 if i < len(lines) - 1 else 0)
        bare = line.rstrip("\r")
        if in_front:
            if i > 0 and bare.rstrip() == "---":
                in_front = False
        elif fence is not None:
            if bare.lstrip(" ").startswith(fence):
                fence = None
        elif (m := _CODE_FENCE.match(bare)) is not None:
            fence = m.group(1)
        elif (h := _HEADING.match(bare)) is not None:
            out.append((pos, end, len(h.group(0)), bare))
        pos = end
    return out


def _find_heading(view_text: str, heading: str, path: str) -> tuple[int, int, int, list[tuple[int, int, int, str]]]:
    wanted = heading.rstrip("\r\n").rstrip()
    if "\n" in wanted or not _HEADING.match(wanted):
        raise EditRefused(f"heading must be one whole markdown heading line, such as '## Plans' "
                          f"(got {_shown(heading)}); nothing was written")
    headings = _headings(view_text)
    hits = [h for h in headings if h[3].rstrip() == wanted]
    if not hits:
        known = ", ".join(_shown(h[3].rstrip()) for h in headings[:12]) or "none"
        more = f" and {len(headings) - 12} more" if len(headings) > 12 else ""
        raise EditRefused(f"no heading line {_shown(wanted)} in {path} (its headings: {known}{more}); "
                          "nothing was written")
    if len(hits) > 1:
        lines = ", ".join(str(_line_no(view_text, h[0])) for h in hits)
        raise EditRefused(f"the heading {_shown(wanted)} occurs {len(hits)} times in {path} (lines {lines}), so "
                          "which one is meant cannot be told: use op replace with old instead; nothing was written")
    start, end, level, _ = hits[0]
    return start, end, level, headings


def _region(view_text: str, edit: Edit, path: str) -> tuple[int, int, str]:
    """(start, end, new text) of the change in the redacted text."""
    op = edit.op
    if op not in OPS:
        raise EditRefused(f"op must be one of {', '.join(OPS)} (got {_shown(op)}); nothing was written")
    if op != "replace" and edit.old is not None:
        raise EditRefused(f"old is only for op replace (this op is {op}); nothing was written")
    if op in ("append", "replace") and edit.heading is not None:
        raise EditRefused(f"heading is only for ops insert_after and replace_section (this op is {op}); "
                          "nothing was written")
    if op == "append":
        if not edit.text:
            raise EditRefused("text is empty: there is nothing to append; nothing was written")
        end = len(view_text)
        lead = "\n" if view_text and not view_text.endswith("\n") else ""
        return end, end, lead + _as_lines(edit.text)
    if op == "replace":
        if not edit.old:
            # the 1.5B model sent the whole new note as `text` with no `old`, six times running;
            # pointed at memory_write for the whole note, it wrote a correction of Lina's note as
            # two lines and lost her birthday: the line it meant to change is named instead
            near = nearest_line(view_text, edit.text or "")
            hint = (f" The line of {path} nearest your text is {json.dumps(near, ensure_ascii=False)}: to "
                    "change it, call again with that line as old and only its new wording as text."
                    if near else " Copy the words to change from the note as old, and give only their new "
                    "wording as text.")
            raise EditRefused("op replace needs old: the exact text to replace, as the note reads; nothing "
                              f"was written.{hint} To add a line instead, use op append.")
        hits = _occurrences(view_text, edit.old)
        if not hits:
            raise EditRefused(f"{_shown(edit.old)} does not occur in {path} (old must be copied exactly from "
                              "the note as it reads, secrets as their [redacted:...] markers, line breaks and "
                              "spaces included); nothing was written")
        if len(hits) > 1:
            lines = ", ".join(str(_line_no(view_text, h)) for h in hits[:10])
            raise EditRefused(f"{_shown(edit.old)} occurs {len(hits)} times in {path} (lines {lines}); old must "
                              "occur exactly once: include more of the text around it; nothing was written")
        return hits[0], hits[0] + len(edit.old), edit.text
    if edit.heading is None:
        raise EditRefused(f"op {op} needs heading: the whole heading line, e.g. '## Plans'; nothing was written")
    start, end, level, headings = _find_heading(view_text, edit.heading, path)
    lead = "" if view_text[:end].endswith("\n") else "\n"
    if op == "insert_after":
        if not edit.text:
            raise EditRefused("text is empty: there is nothing to insert; nothing was written")
        return end, end, lead + _as_lines(edit.text)
    # replace_section: the body under the heading, up to the next heading of the same or a higher level
    stop = next((h[0] for h in headings if h[0] >= end and h[2] <= level), len(view_text))
    body = edit.text
    first, _, rest = body.partition("\n")
    if first.rstrip("\r").rstrip() == edit.heading.rstrip("\r\n").rstrip():
        body = rest       # the heading line stays; a text that repeats it does not double it
    body = _as_lines(body) if body else ""
    if stop < len(view_text) and view_text[:stop].endswith("\n\n") and body and not body.endswith("\n\n"):
        body += "\n"      # the blank line before the next heading stays
    return end, stop, lead + body


def _check_untouched(view: View, text: str, start: int, end: int, new: str) -> None:
    after = text[:start] + new + text[end:]
    for m_start, m_end in view.markers():
        overlaps = start < m_end and end > m_start if start < end else m_start < start < m_end
        # the characters bounding a marker stay the same (a letter joined to a secret can hide it)
        before_changed = end == m_start and (text[m_start - 1:m_start] != after[:start + len(new)][-1:])
        after_changed = start == m_end and (text[m_end:m_end + 1] != (new + text[end:])[:1])
        if overlaps or before_changed or after_changed:
            raise EditTouchesSecret(
                f"refused: the edit touches a redacted secret (line {_line_no(text, m_start)}, shown as a "
                "[redacted:...] marker): changing it or the text right next to it would change or destroy "
                "the secret unseen. Edit other text of the note (leave the marker and the characters "
                "around it as they are), or ask the person; nothing was written")


def apply(view: View, edit: Edit, path: str) -> tuple[str, str]:
    """(new raw text, new redacted view) of `edit` applied to the note `view`, or EditRefused."""
    if MARKER_RE.search(edit.text):
        # a marker stands for a secret the editor never saw: written as text, it would read as one
        raise EditTouchesSecret("refused: text carries a [redacted:...] marker; a marker stands for a secret "
                                "and is never written as text (leave the marker where it is in the note "
                                "and edit around it); nothing was written")
    text = view.text
    start, end, new = _region(text, edit, path)
    _check_untouched(view, text, start, end, new)
    expected = text[:start] + new + text[end:]
    if expected == text:
        raise EditRefused(f"the edit leaves {path} as it is; nothing was written")
    raw = view.raw[:view.to_raw(start)] + new + view.raw[view.to_raw(end):]
    return raw, expected


def check_view(raw: str, expected: str, scanner: Scanner, path: str) -> None:
    """The edited note, redacted, must read exactly as the editor's view with its change: else a
    secret would stop being recognised (and be shown), or the change formed one."""
    if scanner.redact(raw) != expected:
        raise EditTouchesSecret(
            f"refused: the edit would change how a secret in {path} is recognised (the text next to a "
            "[redacted:...] marker matters to it), or would form one; nothing was written. Edit "
            "text further away from the marker, or ask the person")
