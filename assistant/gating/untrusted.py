"""What one session has read from untrusted places: the mark that turns its memory writes into questions.

Guards the session-wide mark of issue 24 (item 3). A tool that hands the model text from an
untrusted place (web_fetch: the page's URL; file_read: files/<path>), and whoever loads a note
flagged as reading like an instruction (AssistantSession.mark_untrusted), records it here; the
policy Gate reads `sources()` before every ruling, so from then on a memory write in a watched
chat is asked, naming these places. The record only grows, for the rest of the session, until
the person starts over (`/reload` calls `clear()`). Thread-safe: tool calls run in threads.
Names are kept as given (the gate redacts them, the displays escape them); a name that is not
a non-empty string of bounded length is refused (ValueError), and the call that read it fails
rather than go unrecorded.
"""

from __future__ import annotations

import threading
from collections import deque

MAX_SOURCE_CHARS = 16_384   # above any URL (2,048 characters) or files/ path (8,191 bytes) the tools accept
MAX_SOURCES = 200           # beyond this the first half and the newest half are kept, the rest counted


class UntrustedReads:
    """The places a session has read untrusted content from, oldest first, each once. Past
    MAX_SOURCES names, the first ones and the newest ones are kept and those between counted:
    the read just before a write (the likeliest source of a rule in it) is always named."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._first: list[str] = []
        self._newest: deque[str] = deque()
        self._more = 0

    def mark(self, source: str) -> None:
        """Record that the session read `source` (a URL, files/<path>, a flagged note's name)."""
        if not isinstance(source, str) or not source.strip() or len(source) > MAX_SOURCE_CHARS:
            raise ValueError("an untrusted source is named by a non-empty string of at most "
                             f"{MAX_SOURCE_CHARS} characters")
        with self._lock:
            if source in self._first:
                return
            if source in self._newest:        # read again: it is among the newest now
                self._newest.remove(source)
                self._newest.append(source)
                return
            if len(self._first) < MAX_SOURCES // 2:
                self._first.append(source)
                return
            self._newest.append(source)
            if len(self._newest) > MAX_SOURCES - MAX_SOURCES // 2:
                self._newest.popleft()
                self._more += 1

    def sources(self) -> tuple[str, ...]:
        """What was read, oldest first; past MAX_SOURCES, an entry between the first and the
        newest says how many more."""
        with self._lock:
            first, newest, more = tuple(self._first), tuple(self._newest), self._more
        return first + ((f"{more} more read(s)",) if more else ()) + newest

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._first)

    def clear(self) -> None:
        """The person started over (/reload): nothing read so far is in the new conversation."""
        with self._lock:
            self._first.clear()
            self._newest.clear()
            self._more = 0


__all__ = ["MAX_SOURCES", "MAX_SOURCE_CHARS", "UntrustedReads"]
