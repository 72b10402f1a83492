"""Past sessions, read back from their transcripts (`state/transcripts/<id>.jsonl`).

Guards the person's view of what ran while nobody watched: each chat, run, scheduled run (and
later MCP session) is summarised from its own append-only, already-redacted transcript, never
from a second record that could disagree with it. A transcript that cannot be read, or one cut
short by a crash, is still listed (as unreadable or unfinished), never silently dropped.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024   # a transcript larger than this is summarised from its head
KINDS = ("chat", "run", "schedule", "mcp")

# Exit codes of `assistant run` (docs/usage.md), as recorded or derived from the end event.
EXIT_OK, EXIT_ERROR, EXIT_DENIED, EXIT_FAILED = 0, 1, 3, 4


@dataclass(frozen=True)
class RunSummary:
    """One line of `assistant runs`; the JSON fields are this dataclass's fields."""

    id: str
    start: str | None          # ISO 8601 UTC, from the first event
    kind: str                  # chat, run, schedule, mcp (or the id's own kind word)
    schedule: str | None       # the [[schedule]] name for a scheduled run
    task: str | None           # the run's task, or a chat's first message
    outcome: str               # done, denied, failed, error, interrupted, unfinished, unreadable
    exit_code: int | None      # None while unfinished or unknown
    tool_calls: int
    denials: int
    failed_calls: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


def transcript_ids(transcripts_dir: Path) -> list[str]:
    """Ids of every transcript, oldest first: ids start with their UTC start time (to the
    second); sessions started in the same second are ordered by when their transcript was
    last written."""
    try:
        names = [n for n in os.listdir(transcripts_dir) if n.endswith(".jsonl") and not n.startswith(".")]
    except FileNotFoundError:
        return []

    def when(name: str) -> tuple[str, int]:
        try:
            mtime = os.stat(transcripts_dir / name, follow_symlinks=False).st_mtime_ns
        except OSError:
            mtime = 0
        return name.split("-", 1)[0], mtime

    return [n[:-6] for n in sorted(names, key=when)]


def read_events(path: Path) -> list[dict] | None:
    """The transcript's events (no link followed, bounded); None when it cannot be read.
    A torn last line (a crash mid-append) is skipped."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_TRANSCRIPT_BYTES)
    events = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _kind_of(run_id: str, start: dict) -> tuple[str, str | None]:
    label = str(start.get("label") or "")
    if label.startswith("schedule "):
        return "schedule", label[len("schedule "):]
    parts = run_id.split("-")
    word = parts[1] if len(parts) >= 3 else "?"
    return word, None


def _before_reflection(events: list[dict]) -> list[dict]:
    """The events before the first `reflection_start` (all of them when there is none)."""
    for i, event in enumerate(events):
        if event.get("event") == "reflection_start":
            return events[:i]
    return events


def summarise(run_id: str, events: list[dict] | None) -> RunSummary:
    """What one transcript says happened."""
    if events is None:
        return RunSummary(run_id, None, _kind_of(run_id, {})[0], None, None, "unreadable", None, 0, 0)
    start = next((e for e in events if e.get("event") == "session_start"), {})
    end = next((e for e in reversed(events) if e.get("event") == "session_end"), None)
    kind, schedule = _kind_of(run_id, start)
    task = start.get("task")
    if task is None:
        task = next((e.get("text") for e in events if e.get("event") == "user"), None)
    # the reflection at the end (its rulings: the person's yes or no to each proposal) is not the
    # session's work: counted neither as its calls nor as its denials
    work = _before_reflection(events)
    tool_calls = sum(1 for e in work if e.get("event") == "tool_call")
    denials = sum(1 for e in work if e.get("event") == "ruling" and not e.get("allowed"))
    failed = [str(e.get("tool", "?")) for e in work
              if e.get("event") == "tool_result" and not e.get("ok") and e.get("output") != "interrupted"]
    first_time = events[0].get("time") if events else None
    if end is None:
        outcome, code = ("error", EXIT_ERROR) if any(e.get("event") == "error" for e in events) \
            else ("unfinished", None)
    elif isinstance(end.get("exit_code"), int):
        code = end["exit_code"]
        outcome = {EXIT_OK: "done", EXIT_DENIED: "denied", EXIT_FAILED: "failed"}.get(code, "error")
        if end.get("outcome") == "interrupted":
            outcome = "interrupted"
    elif kind == "chat":   # a chat written before exit codes were recorded: chats always exited 0
        outcome, code = ("interrupted" if end.get("outcome") == "interrupted" else "done"), EXIT_OK
    else:   # runs written before exit codes were recorded: derive `assistant run`'s rules
        said = end.get("outcome")
        if said == "interrupted":
            outcome, code = "interrupted", EXIT_ERROR
        elif said in ("error", "stopped"):
            outcome, code = "error", EXIT_ERROR
        elif denials:
            outcome, code = "denied", EXIT_DENIED
        elif failed:
            outcome, code = "failed", EXIT_FAILED
        else:
            outcome, code = "done", EXIT_OK
    return RunSummary(run_id, first_time, kind, schedule, task if isinstance(task, str) else None,
                      outcome, code, tool_calls, denials, failed)


def list_runs(transcripts_dir: Path) -> list[RunSummary]:
    """Every session, newest first."""
    return [summarise(i, read_events(transcripts_dir / f"{i}.jsonl"))
            for i in reversed(transcript_ids(transcripts_dir))]


def started_after(summary: RunSummary, cutoff: datetime) -> bool:
    if summary.start is None:
        return False
    try:
        when = datetime.strptime(summary.start, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return False
    return when >= cutoff


__all__ = ["KINDS", "RunSummary", "list_runs", "read_events", "started_after", "summarise", "transcript_ids"]
