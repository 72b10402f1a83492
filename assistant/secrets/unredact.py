"""Putting secrets back after the person edited a redacted note (`assistant memory edit`).

Guards "never write a marker in place of a value". The editor shows a note with each secret
replaced by "[redacted:NAME]"; saving must put back, for every marker the person left as it
is, the exact original text behind it, and must never save a marker where a value was. A
marker whose original cannot be told for certain (a name that stands for several different
values and whose markers were moved, copied or removed; a marker that stood for nothing in the
note) is an error naming its line: nothing is saved and the caller keeps the edited text. A
marker the person deleted drops that secret, which is the person's own choice to make.
"""

from __future__ import annotations

from assistant.secrets.scanner import MARKER_RE, Scanner, marker


class RestoreError(ValueError):
    """The edited text has a marker whose original value cannot be told. Names the line and the
    marker (never a value)."""


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def restore(original: str, edited: str, scanner: "Scanner") -> str:
    """`edited` (a text derived from `scanner.redact(original)`) with every marker replaced by
    the original text it stood for."""
    behind: dict[str, list[str]] = {}          # marker text -> originals, in order of appearance
    pos = 0
    spans = scanner.redaction_spans(original)
    for start, end, label in spans + [(len(original), len(original), None)]:
        # marker-looking text that is literally in the note stands for itself
        for m in MARKER_RE.finditer(original, pos, start):
            behind.setdefault(m.group(0), []).append(m.group(0))
        if label is None:
            break
        behind.setdefault(marker(label), []).append(original[start:end])
        pos = end
    found = list(MARKER_RE.finditer(edited))
    if not found:
        return edited
    seen: dict[str, int] = {}
    counts: dict[str, int] = {}
    for m in found:
        counts[m.group(0)] = counts.get(m.group(0), 0) + 1
    out: list[str] = []
    pos = 0
    for m in found:
        text = m.group(0)
        k = seen.get(text, 0)
        seen[text] = k + 1
        originals = behind.get(text)
        if not originals:
            raise RestoreError(
                f"line {_line_of(edited, m.start())}: {text} does not stand for any secret in this note, "
                "and a marker is never saved in place of a value: remove it, or type the value there")
        if len(set(originals)) == 1:
            value = originals[0]
        elif counts[text] == len(originals):
            value = originals[k]
        else:
            raise RestoreError(
                f"line {_line_of(edited, m.start())}: {text} stands for {len(set(originals))} different "
                "values in this note, and its markers were moved, copied or removed, so which is which "
                "cannot be told: leave each such marker where it was (or delete it to drop that secret)")
        out.append(edited[pos:m.start()])
        out.append(value)
        pos = m.end()
    out.append(edited[pos:])
    return "".join(out)


__all__ = ["RestoreError", "restore"]
