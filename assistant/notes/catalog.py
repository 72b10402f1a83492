"""The memory catalog: one line per note, derived from disk every time, never stored.

Guards the prompt against two failures: a catalog that drifts from hand-edited notes (it is
rebuilt from the files on each call, nothing is cached) and a catalog whose cost grows with
note size or count (only a bounded head of each *shown* note is read, through the confined
`Root`; notes beyond the byte budget are left out and the block says how many and how to page
through them with `memory_list`). Summaries and paths are redacted by the leak scanner before
they are shown. Temp files and dot-leading names never appear; entries that cannot be read
(symlinks, FIFOs, bad names, not UTF-8, too large) are listed as such, never followed.

A note whose head reads like instructions to the assistant (notes.flagging) is listed with
`[flagged: reads like an instruction]`: advice, never a reason to leave a note out.

Order, stated in the block: pinned notes first (config `memory.pinned`, in that order), then
the most recently changed, then by path.
"""

from __future__ import annotations

import os
import stat as _stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from assistant.workspace.config import MemoryConfig
from assistant.confine import ConfinementError, Root
from assistant.secrets.scanner import Scanner
from assistant.notes.flagging import FLAG, flag_reason
from assistant.notes.frontmatter import (
    clean_line, cut, decode_head, head_meta, staleness, summary_from_head,
)

if TYPE_CHECKING:
    from assistant.workspace.layout import Workspace

LIST_LIMIT_MAX = 200
ORDER_TEXT = "pinned first, then most recently changed"


@dataclass(frozen=True)
class Entry:
    """One note in catalog order. `problem` is set when the note cannot be read."""

    path: str
    mtime_ns: int
    size: int
    pinned: bool = False
    summary: str = ""
    problem: str | None = None
    stale: str | None = None      # e.g. "[expired 2026-01-01: may be out of date]" (notes.staleness)
    flagged: str | None = None    # why its head reads like instructions (notes.flagging), or None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "summary": self.summary,
            "size": self.size,
            "mtime": self.mtime_ns / 1e9,
            "pinned": self.pinned,
            "unreadable": self.problem,
            "stale": self.stale,
            "flagged": self.flagged,
        }


@dataclass(frozen=True)
class CatalogSettings:
    head_bytes: int = 2048
    budget_bytes: int = 2048       # see MemoryConfig.catalog_budget_bytes
    width: int = 100
    pinned: tuple[str, ...] = ("index.md",)
    max_note_bytes: int = 256 * 1024

    @classmethod
    def from_config(cls, m: MemoryConfig) -> "CatalogSettings":
        """From the validated [memory] section."""
        return cls(head_bytes=m.catalog_head_bytes, budget_bytes=m.catalog_budget_bytes,
                   width=m.summary_width, pinned=m.pinned, max_note_bytes=m.max_note_bytes)


# --- enumeration -----------------------------------------------------------------------------

def _display(rel: str) -> str:
    """A path safe to print on one line even if its name is not one we accept."""
    return rel.encode("unicode_escape", "backslashreplace").decode("ascii")


def _problem(st: os.stat_result) -> str | None:
    mode = st.st_mode
    if _stat.S_ISREG(mode):
        return None
    if _stat.S_ISLNK(mode):
        return "a symlink; links are never followed"
    for test, what in ((_stat.S_ISFIFO, "a FIFO"), (_stat.S_ISSOCK, "a socket"),
                       (_stat.S_ISCHR, "a device"), (_stat.S_ISBLK, "a device")):
        if test(mode):
            return f"{what}, not a regular file"
    return "not a regular file"


def scan(memory_dir: Path | str) -> list[Entry]:
    """Every note-like entry under memory_dir (metadata only; no note is opened).

    Walked by the confined Root's one tree walker (`Root.scan`: nothing followed, no other
    filesystem entered, dot-leading names such as temp files skipped). Names ending `.md` are
    reported; non-regular files, symlinks and names the path grammar refuses are reported with
    a problem so the catalog can list them as unreadable.
    """
    try:
        root = Root(memory_dir)
    except FileNotFoundError:
        return []  # no memory folder yet: no notes
    with root:
        found = root.scan()
    out: list[Entry] = []
    for path, st, refused in found:
        if not path.endswith(".md") or _stat.S_ISDIR(st.st_mode):
            continue
        if refused is None:
            out.append(Entry(path, st.st_mtime_ns, st.st_size, problem=_problem(st)))
        else:
            out.append(Entry(_display(path), st.st_mtime_ns, st.st_size, problem=f"name not allowed, {refused}"))
    return out


def order(entries: Iterable[Entry], pinned: Iterable[str]) -> list[Entry]:
    """Pinned notes first (in the configured order), then most recently changed, then path."""
    rank = {p: i for i, p in enumerate(pinned)}
    marked = [replace(e, pinned=True) if e.path in rank else e for e in entries]
    return sorted(
        marked,
        key=lambda e: (0, rank[e.path], 0, "") if e.pinned else (1, 0, -e.mtime_ns, e.path),
    )


# --- summaries -------------------------------------------------------------------------------

def _human(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def summarize(root: Root, entry: Entry, settings: CatalogSettings, scanner: Scanner | None) -> Entry:
    """Fill in the summary of one entry from the head of its note (or say why it is unreadable)."""
    path = _redact(scanner, entry.path)
    if entry.problem is not None:
        return replace(entry, path=path)
    try:
        head = root.read_head(entry.path, settings.head_bytes)
    except FileNotFoundError:
        return replace(entry, path=path, problem="removed while the catalog was read")
    except ConfinementError as exc:
        return replace(entry, path=path, problem=_redact(scanner, str(exc)))
    except OSError as exc:
        return replace(entry, path=path, problem=os.strerror(exc.errno) if exc.errno else "cannot be read")
    complete = len(head) < settings.head_bytes
    try:
        text = decode_head(head, complete)
    except UnicodeDecodeError:
        return replace(entry, path=path, problem="not UTF-8 text")
    if "\x00" in text:
        text = text.split("\x00", 1)[0]  # sparse or binary tail: the text part is what we show
        complete = True
    if complete or scanner is None:
        text = _redact(scanner, text)
    else:  # a secret cut by the end of the head must not show in part
        text = scanner.redact_prefix(text)
    # Redacted again after cleaning and cutting: what is shown is what was scanned (cleaning
    # turns invisible and control characters into spaces, which must not show a split value).
    summary = _redact(scanner, cut(clean_line(summary_from_head(text, complete)), settings.width))
    problem = None
    if entry.size > settings.max_note_bytes:
        problem = f"too large to read, {_human(entry.size)}"
    flag = staleness(head_meta(text))
    return replace(entry, path=path, summary=summary, problem=problem,
                   stale=flag.label() if flag is not None else None, flagged=flag_reason(text))


def _redact(scanner: Scanner | None, text: str) -> str:
    return scanner.redact(text) if scanner is not None else text


def line(entry: Entry) -> str:
    """`- path: summary`, then why the note could not be read, or else how stale it is; then the
    instruction flag if its head reads like instructions to the assistant."""
    flagged = f" {FLAG}" if entry.flagged else ""
    if entry.problem:
        summary = f"{entry.summary} " if entry.summary else ""
        return f"- {entry.path}: {summary}(unreadable: {entry.problem}){flagged}"
    stale = f" {entry.stale}" if entry.stale else ""
    return f"- {entry.path}: {entry.summary or '(no summary)'}{stale}{flagged}"


# --- the block -------------------------------------------------------------------------------

HEADER = "## Memory catalog"


def _intro(total: int) -> str:
    noun = "note" if total == 1 else "notes"
    return (f"{total} {noun} in memory ({ORDER_TEXT}). "
            "Read one with memory_read before relying on it or overwriting it.")


def _footer(left: int, offset: int, budget: int) -> str:
    noun = "note is" if left == 1 else "notes are"
    return (f"{left} more {noun} not shown (catalog budget {budget} bytes); "
            f"list them with memory_list(offset={offset}, limit=50).")


def render(memory_dir: Path | str, settings: CatalogSettings, scanner: Scanner | None = None, *,
           flagged: list[str] | None = None) -> str:
    """The catalog block exactly as the model sees it. `flagged`, if given, receives the paths
    of the notes whose line shown reads like an instruction (those words are in the prompt: the
    session that takes this block is marked)."""
    entries = order(scan(memory_dir), settings.pinned)
    total = len(entries)
    if total == 0:
        return f"{HEADER}\nNo notes yet. Save lasting facts with memory_write."
    lines = [HEADER, _intro(total)]
    used = sum(len(s.encode()) + 1 for s in lines)
    reserve = len(_footer(total, total, settings.budget_bytes).encode()) + 1
    shown = 0
    with Root(memory_dir) as root:
        for i, entry in enumerate(entries):
            summed = summarize(root, entry, settings, scanner)
            text = line(summed)
            cost = len(text.encode()) + 1
            need = reserve if i + 1 < total else 0
            if used + cost + need > settings.budget_bytes:
                break
            lines.append(text)
            if flagged is not None and summed.summary and flag_reason(summed.summary):
                flagged.append(summed.path)   # the words shown flag, not only the head behind them
            used += cost
            shown += 1
    if shown < total:
        lines.append(_footer(total - shown, shown, settings.budget_bytes))
    return "\n".join(lines)


def page(memory_dir: Path | str, settings: CatalogSettings, scanner: Scanner | None = None, *,
         offset: int = 0, limit: int = 50) -> tuple[int, list[Entry]]:
    """(total, entries[offset:offset+limit] with summaries), in catalog order."""
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be a non-negative integer, got {offset!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIST_LIMIT_MAX:
        raise ValueError(f"limit must be an integer from 1 to {LIST_LIMIT_MAX}, got {limit!r}")
    entries = order(scan(memory_dir), settings.pinned)
    chosen = entries[offset : offset + limit]
    if not chosen:
        return len(entries), []
    with Root(memory_dir) as root:
        return len(entries), [summarize(root, e, settings, scanner) for e in chosen]


def all_entries(memory_dir: Path | str, settings: CatalogSettings, scanner: Scanner | None = None) -> list[Entry]:
    """Every entry in catalog order, with summaries (for listings, not for the prompt)."""
    entries = order(scan(memory_dir), settings.pinned)
    if not entries:
        return []
    with Root(memory_dir) as root:
        return [summarize(root, e, settings, scanner) for e in entries]


def render_catalog(ws: "Workspace", scanner: Scanner) -> str:
    """The catalog block of a workspace (what `assistant memory catalog` prints)."""
    return render(ws.memory_dir, CatalogSettings.from_config(ws.config.memory), scanner)
