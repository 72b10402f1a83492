"""The workspace's secret-refusal budget: refusals for a vault value counted across sessions.

Guards that refusals are no oracle across runs either. A refusal ends a run, but a model that
keeps its progress in files/ could bisect a vault value over several runs (each refused probe
says "the value is in this half"). So every counted refusal is recorded in
state/secret_refusals.json, and once `[limits] secret_refusals_per_day` refusals fall within a
rolling 24 hours the workspace is *blocked*: unattended runs and MCP writes do not start until
the person runs `assistant approvals ack`. The block does not expire by itself.

- "Per day" is a rolling window of 24 hours (WINDOW), not the local calendar day: at most that
  many refusals in any 24 hours, so no midnight lets a fresh batch through, and a clock change
  or a time zone never moves it. A refusal with a time in the future (a clock set back) counts.
- A missing counter is zero only if the audit log agrees: when it records a counted refusal
  within the window, or a block, after the last `approvals ack`, the counter was removed (by
  whoever can write state/: review 23) and that blocks like a corrupt one. A counter that cannot
  be read or does not parse (corrupt, a link, too large) blocks: fail closed, with the fix
  (`assistant approvals ack`) in the message.
- Every change is a read-modify-write under a bounded lock (state/secret_refusals.lock), written
  atomically through policy.fileio; a reader sees the old file or the new, never half.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable

from policy.audit import AuditError, read_log
from policy.fileio import locked, read_regular, write_atomic
from policy.strict_json import unique_keys

from assistant.display.localtime import local_time

FILE = "secret_refusals.json"
LOCK = "secret_refusals.lock"
WINDOW = 24 * 3600.0            # the rolling "day" of secret_refusals_per_day
LOCK_TIMEOUT = 5.0              # seconds: the bounded wait for the counter's lock
MAX_BYTES = 64 * 1024
MAX_KEPT = 1000                 # refusal times kept (only those within WINDOW are)
ACK = "assistant approvals ack"


class BudgetError(Exception):
    """The counter could not be read or changed (lock busy, state/ unwritable). The message says why."""


class _Corrupt(Exception):
    pass


@dataclass(frozen=True)
class Block:
    """Why unattended runs and MCP writes do not start: the budget was spent at `since` (with
    `refusals` refusals in the 24 hours before it, the last in session `run`), or the counter is
    unreadable (`problem`)."""

    since: float | None = None
    refusals: int = 0
    run: str = ""
    problem: str | None = None

    def reason(self) -> str:
        """One line: what blocks, and the fix."""
        if self.problem is not None:
            return (f"the secret-refusal counter (state/{FILE}) is unreadable ({self.problem}), so unattended "
                    f"runs and MCP writes are blocked; check your recent runs (`assistant runs`), then run "
                    f"`{ACK}` to reset it")
        when = local_time(self.since, seconds=False) if self.since else "?"
        return (f"{self.refusals} tool calls carried a value from your vault within 24 hours (the last at {when}, "
                f"session {self.run or '?'}), so unattended runs and MCP writes are blocked: a model may be "
                f"probing your vault. Check `assistant runs` and the audit log, then run `{ACK}` to lift the block")


@dataclass(frozen=True)
class Counted:
    """What one recorded refusal did: the refusals within the window, and the block (new or old)."""

    refusals: int
    block: Block | None
    began: bool                 # this refusal began the block


@dataclass(frozen=True)
class Reset:
    """What `approvals ack` reset: the block (or the corrupt counter) and the refusals counted."""

    block: Block | None
    refusals: int


class RefusalBudget:
    """state/secret_refusals.json of one workspace. `per_day`: the block begins at this many
    refusals within WINDOW (a session that counts passes [limits] secret_refusals_per_day)."""

    def __init__(self, state_dir: str | Path, *, per_day: int = 3,
                 clock: Callable[[], float] = time.time, audit_path: str | Path | None = None) -> None:
        if type(per_day) is not int or per_day < 1:
            raise ValueError(f"secret_refusals_per_day must be a whole number >= 1, not {per_day!r}")
        self.state_dir = Path(state_dir)
        self.path = self.state_dir / FILE
        self.per_day = per_day
        self.clock = clock
        # the audit log a missing counter is checked against (None: a missing counter is zero)
        self.audit_path = Path(audit_path) if audit_path is not None else None

    # -- reading ---------------------------------------------------------------------------
    def _load(self, recording: bool = False) -> dict:
        """The counter's content; {} when missing (and the audit log agrees); _Corrupt for anything
        unreadable or odd. `recording`: the refusal being counted is in the audit log already."""
        try:
            raw = read_regular(self.path, max_bytes=MAX_BYTES, shown=f"state/{FILE}")
        except FileNotFoundError:
            gone = self._missing_but_audited(1 if recording else 0)
            if gone is not None:
                raise _Corrupt(gone) from None
            return {"refusals": [], "blocked": None}
        except OSError as exc:
            raise _Corrupt(exc.strerror or str(exc)) from None
        try:
            doc = json.loads(raw.decode("utf-8"), object_pairs_hook=unique_keys(_Corrupt),
                             parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, _Corrupt):
            raise _Corrupt("not valid JSON") from None
        if not isinstance(doc, dict) or doc.get("version") != 1 or set(doc) != {"version", "refusals", "blocked"}:
            raise _Corrupt("not a version 1 counter")
        times, blocked = doc["refusals"], doc["blocked"]
        if not isinstance(times, list) or len(times) > MAX_KEPT or not all(_number(t) for t in times):
            raise _Corrupt("its refusal times are not a list of times")
        if blocked is not None:
            if (not isinstance(blocked, dict) or set(blocked) != {"since", "refusals", "run"}
                    or not _number(blocked["since"]) or type(blocked["refusals"]) is not int
                    or not isinstance(blocked["run"], str)):
                raise _Corrupt("its block record is malformed")
        return {"refusals": [float(t) for t in times], "blocked": blocked}

    def _missing_but_audited(self, pending: int = 0) -> str | None:
        """Why a missing counter is not zero: the audit log records a counted refusal within the
        window, or a block, after the last `approvals ack` (the counter was removed). None when
        the log agrees that nothing was counted (or there is no log to ask). `pending`: the last
        so many refusals in the log are the ones being recorded now (their line comes first)."""
        if self.audit_path is None:
            return None
        try:
            data = read_log(self.audit_path)
        except AuditError as exc:
            return f"it is missing, and the audit log cannot be read to check that nothing was counted ({exc})"
        if b"secret_refus" not in data:
            return None
        since = self.clock() - WINDOW
        refused = blocked = 0
        for line in data.split(b"\n"):
            if b"secret_refus" not in line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            event = rec.get("event") if isinstance(rec, dict) else None
            if event == "secret_refusal_ack":
                refused = blocked = 0
            elif event == "secret_refusal_block":
                blocked += 1
            elif event == "secret_refused" and rec.get("counted") is True and _audit_time(rec) > since:
                refused += 1
        refused = max(0, refused - pending)
        if not (refused or blocked):
            return None
        what = (f"{refused} counted refusal{'s' if refused != 1 else ''} within 24 hours" if refused else "") + \
               (" and " if refused and blocked else "") + ("a block" if blocked else "")
        return (f"it is missing, but the audit log records {what} since the last `{ACK}`: "
                "it was removed")

    def block(self) -> Block | None:
        """The block in force, or None. A corrupt counter is a Block with its problem."""
        try:
            doc = self._load()
        except _Corrupt as exc:
            return Block(problem=str(exc))
        return _block_of(doc)

    def counted(self) -> int:
        """Refusals within the last 24 hours (0 for a corrupt counter: its Block says it)."""
        try:
            doc = self._load()
        except _Corrupt:
            return 0
        return len(self._recent(doc["refusals"]))

    def _recent(self, times: list[float]) -> list[float]:
        since = self.clock() - WINDOW
        return [t for t in times if t > since]

    # -- changing --------------------------------------------------------------------------
    def _locked(self):
        return locked(self.state_dir / LOCK, timeout=LOCK_TIMEOUT, what="the secret-refusal counter",
                      error=BudgetError)

    def _write(self, times: list[float], blocked: dict | None) -> None:
        data = json.dumps({"version": 1, "refusals": times[-MAX_KEPT:], "blocked": blocked},
                          sort_keys=True).encode()
        try:
            write_atomic(self.path, data + b"\n")
        except OSError as exc:
            raise BudgetError(f"state/{FILE} cannot be written: {exc.strerror or exc}") from None

    def record(self, run_id: str) -> Counted:
        """Count one refusal (session `run_id`). A corrupt counter is left as it is (it blocks
        already; `approvals ack` resets it). BudgetError if the count could not be recorded."""
        with self._locked():
            try:
                doc = self._load(recording=True)
            except _Corrupt as exc:
                return Counted(0, Block(problem=str(exc)), False)
            now = self.clock()
            times = self._recent(doc["refusals"]) + [now]
            blocked, began = doc["blocked"], False
            if blocked is None and len(times) >= self.per_day:
                blocked, began = {"since": now, "refusals": len(times), "run": run_id}, True
            self._write(times, blocked)
        return Counted(len(times), _block_of({"blocked": blocked}), began)

    def reset(self) -> Reset:
        """`approvals ack`: lift the block and start the count afresh (a corrupt counter is
        replaced). Says what it reset."""
        with self._locked():
            try:
                doc = self._load()
                before = Reset(_block_of(doc), len(self._recent(doc["refusals"])))
            except _Corrupt as exc:
                before = Reset(Block(problem=str(exc)), 0)
            self._write([], None)
        return before


def _block_of(doc: dict) -> Block | None:
    b = doc.get("blocked")
    return Block(since=float(b["since"]), refusals=b["refusals"], run=b["run"]) if b else None


def _audit_time(rec: dict) -> float:
    """An audit line's time (UTC, "2026-12-01T10:00:00.000Z") as a timestamp; +inf if it has none
    that parses (counted as recent: fail closed)."""
    try:
        return datetime.strptime(str(rec["time"]).replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
    except (KeyError, ValueError):
        return math.inf


def _number(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _no_constant(name: str) -> object:
    raise _Corrupt(name)


__all__ = ["ACK", "FILE", "WINDOW", "Block", "BudgetError", "Counted", "RefusalBudget", "Reset"]
