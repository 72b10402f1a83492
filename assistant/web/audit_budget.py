"""How many refusal lines the approval page writes to the audit log, per client and kind.

Guards "every refusal leaves an audit line" against "a flood cannot fill the log", without
letting one client silence the lines of another or of another kind:
- each (client address, kind of refusal) pair has its own budget of `per_minute` lines a
  minute; a wrong-login flood spends only its own pair's budget, so a tampered link from the
  same client, or anything from another client, is still written;
- past the budget a refusal is counted, not dropped silently: the first one over writes a line
  saying the budget is reached, and when that minute is over one line says how many were
  suppressed ("N refusals suppressed");
- allowed events (a login with the serve token) never pass through here: they are always written;
- bounded memory: at most `max_keys` pairs are tracked; past that, new pairs share one
  overflow budget (client "*", kind "*").
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

OVERFLOW = ("*", "*")


@dataclass
class _Window:
    start: float
    written: int = 0
    suppressed: int = 0


@dataclass(frozen=True)
class Note:
    """A line the budget itself asks to write: a pair reached its budget, or how many of its
    refusals were suppressed in a minute that is over."""

    client: str
    kind: str
    why: str
    suppressed: int = 0


@dataclass(frozen=True)
class Admission:
    """Whether the refusal's own line is written, and the budget's own lines to write first."""

    write: bool
    notes: tuple[Note, ...] = ()


def kind_of(why: str) -> str:
    """A refusal's kind: its reason without a parenthesised detail ("link for another request
    (abc...)" -> "link for another request")."""
    return why.split(" (", 1)[0]


@dataclass
class AuditBudget:
    per_minute: int = 30
    max_keys: int = 1024
    clock: Callable[[], float] = time.time
    _windows: dict[tuple[str, str], _Window] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _sweep(self, now: float) -> list[Note]:
        """Forget every pair whose minute is over, with a line for each that suppressed some."""
        notes = []
        for key, w in list(self._windows.items()):
            if now - w.start >= 60:
                if w.suppressed:
                    notes.append(Note(key[0], key[1], f"{w.suppressed} refusals suppressed", w.suppressed))
                del self._windows[key]
        return notes

    def sweep(self) -> tuple[Note, ...]:
        with self._lock:
            return tuple(self._sweep(self.clock()))

    def admit(self, client: str, why: str) -> Admission:
        now = self.clock()
        with self._lock:
            notes = self._sweep(now)
            key = (client, kind_of(why))
            if key not in self._windows and len(self._windows) >= self.max_keys:
                key = OVERFLOW
            w = self._windows.setdefault(key, _Window(now))
            if w.written < self.per_minute:
                w.written += 1
                return Admission(True, tuple(notes))
            w.suppressed += 1
            if w.suppressed == 1:
                notes.append(Note(key[0], key[1], f"audit budget reached: more refusals of this kind from "
                                  f"this client are counted, not logged, until {self.per_minute} a minute "
                                  "is free again"))
            return Admission(False, tuple(notes))


__all__ = ["Admission", "AuditBudget", "Note", "kind_of"]
