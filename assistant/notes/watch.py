"""Watching `memory/` for notes that change on disk (written, hand-edited, removed).

Guards the chat against a stale picture of memory: the catalog taken at session start sits in
the stable prompt prefix, and this watcher tells the chat which notes changed since, so it can
say so in the volatile tail. Only note paths are reported (memory-relative, forward-slashed,
ending `.md`); dot-leading names anywhere in the path (our temp files, editor swap files) never
appear. Uses watchfiles' public API through policy.fileio.watch_dir (inotify / FSEvents), so a
change is seen at once, without polling.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from policy.fileio import watch_dir

from assistant.display.terminal import shown_name

DEFAULT_DEBOUNCE_MS = 50
_STEP_MS = 20
_TICK = 0.1   # the first (empty) batch, proving the watches are live, comes this soon
_KINDS = {1: "added", 2: "modified", 3: "deleted"}


@dataclass(frozen=True, order=True)
class NoteChange:
    path: str   # memory-relative, forward-slashed, e.g. "people/lina.md" (escaped if not a valid name)
    kind: str   # "added" | "modified" | "deleted"


def note_relpath(memory_dir: Path | str, abspath: str) -> str | None:
    """The memory-relative path of a changed file if it is a note we report, else None."""
    try:
        rel = os.path.relpath(abspath, os.fspath(memory_dir))
    except ValueError:
        return None
    parts = rel.split(os.sep)
    if rel.startswith("..") or not parts or any(not p or p.startswith(".") for p in parts):
        return None
    if not parts[-1].endswith(".md"):
        return None
    # a name the path grammar refuses (a newline from a sync client...) is reported escaped:
    # it goes into the model's context tail and onto terminals
    return shown_name("/".join(parts))


def existing_notes(memory_dir: Path | str) -> set[str]:
    """The notes on disk now (as note_relpath names them): links are not followed and
    dot-leading folders are not entered, like the watcher's own reports."""
    found: set[str] = set()
    top = os.fspath(memory_dir)
    for folder, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            rel = note_relpath(top, os.path.join(folder, name))
            if rel is not None:
                found.add(rel)
    return found


def _convert(memory_dir: Path, raw: set[tuple[int, str]], known: set[str] | None = None) -> list[NoteChange]:
    """One batch of watchfiles changes as note changes. `known` (the notes that existed before
    this batch, updated here) turns an "added" for a note that already existed into "modified":
    an editor or a sync client that saves by renaming a new file over the note (the atomic save)
    is reported by inotify as the note being added, but for the person the note was changed."""
    latest: dict[str, str] = {}
    for code, abspath in sorted(raw, key=lambda c: c[1]):
        rel = note_relpath(memory_dir, abspath)
        if rel is None:
            continue
        kind = _KINDS.get(int(code), "modified")
        prev = latest.get(rel)
        # Within one batch: a delete + add (an atomic rename onto the note) is a change.
        if prev and prev != kind:
            kind = "modified"
        latest[rel] = kind
    if known is not None:
        for rel, kind in list(latest.items()):
            if kind == "added" and rel in known:
                latest[rel] = "modified"       # replaced by a rename: it was there before
            if kind == "deleted":
                known.discard(rel)
            else:
                known.add(rel)
    return sorted(NoteChange(p, k) for p, k in latest.items())


def watch_notes(
    memory_dir: Path | str,
    *,
    stop_event: threading.Event | None = None,
    debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    on_ready: Callable[[], None] | None = None,
) -> Iterator[list[NoteChange]]:
    """Yield batches of note changes until `stop_event` is set (or forever).

    `on_ready()` is called once the watches are in place: nothing written after it is missed."""
    memory_dir = Path(memory_dir)
    if not memory_dir.is_dir():
        raise FileNotFoundError(f"no memory folder at {memory_dir}")
    ready = on_ready
    # the notes there before the watches go in: a rename over one of them is a change, not an addition
    known = existing_notes(memory_dir)
    for raw in watch_dir(memory_dir, stop_event=stop_event, tick=_TICK, debounce_ms=debounce_ms, step_ms=_STEP_MS):
        if ready is not None:
            ready, _ = None, ready()
        batch = _convert(memory_dir, raw, known)
        if batch:
            yield batch


class MemoryWatcher:
    """A background watcher the chat polls between turns.

    ```python
    with MemoryWatcher(ws.memory_dir) as w:
        ...
        for change in w.drain():   # changes since the last drain, oldest batch first
            ...
    ```
    `start()` returns once the watches are in place, so nothing written afterwards is missed.
    """

    def __init__(self, memory_dir: Path | str, *, debounce_ms: int = DEFAULT_DEBOUNCE_MS) -> None:
        self.memory_dir = Path(memory_dir)
        self.debounce_ms = debounce_ms
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._pending: list[NoteChange] = []
        self._signal: queue.SimpleQueue[None] = queue.SimpleQueue()   # one token per pushed batch
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self.error: BaseException | None = None

    def start(self) -> "MemoryWatcher":
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="memory-watcher", daemon=True)
        self._thread.start()
        self._ready.wait(5.0)
        if self.error is not None:
            raise self.error
        return self

    def _run(self) -> None:
        try:
            for batch in watch_notes(self.memory_dir, stop_event=self._stop, debounce_ms=self.debounce_ms,
                                     on_ready=self._ready.set):
                self._push(batch)
        except BaseException as exc:  # reported to the owner by start(), never silently lost
            self.error = exc
        finally:
            self._ready.set()

    def _push(self, batch: list[NoteChange]) -> None:
        with self._lock:
            self._pending.extend(batch)
        self._signal.put(None)

    def drain(self) -> list[NoteChange]:
        """Changes seen since the last drain (one entry per path, latest kind wins)."""
        with self._lock:
            pending, self._pending = self._pending, []
        latest: dict[str, str] = {}
        for ch in pending:
            latest[ch.path] = ch.kind
        return sorted(NoteChange(p, k) for p, k in latest.items())

    def wait(self, timeout: float) -> bool:
        """Block until at least one change is pending (True) or `timeout` passes (False).

        The wait is a C-level queue get, not a threading.Condition: a Ctrl-C landing inside
        Condition.wait while it re-takes its lock leaves the lock released, and leaving the
        `with` then raises RuntimeError instead of the KeyboardInterrupt (seen under CI load)."""
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            with self._lock:
                if self._pending:
                    return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                self._signal.get(timeout=left)
            except queue.Empty:
                pass

    def changed_paths(self) -> set[str]:
        return {c.path for c in self.drain()}

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None

    def __enter__(self) -> "MemoryWatcher":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
