"""A call carrying a vault value: the one rule every door applies (chat, run, MCP).

Guards that refusals for a vault value are no oracle to search the vault with, the same way
through every door:
- `vault_names(value)` finds the vault names whose value (in any encoding the scanner knows)
  is anywhere in a call: a string, or the keys and values of a dict, or the items of a list or
  tuple, at any depth (a tool's name, an argument's name, a resource address);
- `refuse(...)` records one refusal in the audit log (the person may be told which secret; the
  target is redacted; who asked when the session knows it) and counts it;
- the second refusal ends the session: `ended` is then True, and each door stops taking calls
  (a chat ends, an MCP session takes no more tool calls);
- with a `budget` (assistant.secrets.budget: every session a model or an MCP client drives), each
  refusal is also counted for the workspace across sessions; the refusal that spends the day's
  budget begins the block (an audit line `secret_refusal_block`, and the person is told through
  `tell`, the notify command), and `blocked()` is what unattended runs and MCP writes check
  before they start. A count that cannot be recorded ends the session (fail closed).
The session (assistant.session) builds one per session; the doors only word what they show.
"""

from __future__ import annotations

import threading
from typing import Callable, Protocol

from assistant.secrets.budget import Block, BudgetError, RefusalBudget
from assistant.secrets.scanner import VAULT_RULE, Scanner

MAX_SECRET_REFUSALS = 2      # refusals for a vault value before the session takes no more calls


class AuditAppend(Protocol):
    def append(self, event: dict) -> object: ...


class SecretRefusals:
    """The secret-refusal rule of one session: the scan, the audit record, and the count."""

    def __init__(self, scanner: Scanner | None, audit: AuditAppend | None, *, run_id: str,
                 requester: str | None = None, budget: RefusalBudget | None = None,
                 tell: Callable[[str], object] | None = None) -> None:
        self.scanner = scanner
        self.audit = audit
        self.run_id = run_id
        self.requester = requester       # set with the session's (an MCP client's name)
        self.budget = budget             # None: not counted across sessions (the person's own CLI)
        self.tell = tell                 # tells the person (the notify command) when a block begins
        self.count = 0
        self._unrecorded = False         # a refusal whose count could not be recorded
        self._lock = threading.Lock()

    @property
    def ended(self) -> bool:
        """True once MAX_SECRET_REFUSALS calls were refused (or a refusal could not be counted):
        the session takes no more calls."""
        return self.count >= MAX_SECRET_REFUSALS or self._unrecorded

    def blocked(self) -> Block | None:
        """The workspace's refusal block, or None (also for a session that is not counted)."""
        return self.budget.block() if self.budget is not None else None

    def vault_names(self, value: object) -> tuple[str, ...]:
        """Vault names whose value (in any encoding the scanner knows) is anywhere in `value`."""
        if self.scanner is None:
            return ()
        found: list[str] = []
        self._scan(value, found)
        return tuple(dict.fromkeys(found))

    def _scan(self, value: object, found: list[str]) -> None:
        if isinstance(value, str):
            found.extend(f.name for f in self.scanner.find(value) if f.rule == VAULT_RULE)
        elif isinstance(value, dict):
            for k, v in value.items():
                self._scan(k, found)
                self._scan(v, found)
        elif isinstance(value, (list, tuple)):
            for v in value:
                self._scan(v, found)

    def reserve(self) -> bool:
        """Take one refusal's place in the count at once, before anything waits; False when the
        session has ended. A door that serves calls concurrently (MCP) reserves before its first
        await, so a burst of calls cannot all pass the `ended` check before one is counted."""
        with self._lock:
            if self.count >= MAX_SECRET_REFUSALS or self._unrecorded:
                return False
            self.count += 1
            return True

    def refuse(self, tool: str, target: str, names: tuple[str, ...] | list[str], *, reserved: bool = False) -> bool:
        """Record one refused call: its audit line (never failing the refusal: the transcript
        has it too) and the count (`reserved`: already taken by `reserve`). True if this refusal
        ends the session."""
        with self._lock:
            if not reserved:
                self.count += 1
            last = self.count >= MAX_SECRET_REFUSALS
        record = {"event": "secret_refused", "run": self.run_id, "tool": tool,
                  "target": self._redact(str(target)), "secrets": list(names)}
        if self.requester is not None:
            record["requester"] = self.requester
        if self.budget is not None:
            record["counted"] = True     # the budget checks a missing counter against these lines
        self._append(record)
        if self.budget is not None and not self._counted():
            last = True
        return last

    def _append(self, record: dict) -> None:
        if self.audit is not None:
            try:
                self.audit.append(record)
            except Exception:  # noqa: BLE001 - the refusal stands either way; the transcript has it too
                pass

    def _counted(self) -> bool:
        """Count the refusal for the workspace; begin the block if it spent the budget. False if
        it could not be counted (the session then takes no more calls)."""
        assert self.budget is not None
        try:
            counted = self.budget.record(self.run_id)
        except BudgetError as exc:
            with self._lock:
                self._unrecorded = True
            self._append({"event": "secret_refusal_uncounted", "run": self.run_id, "problem": str(exc)})
            self._tell(f"assistant: a refused secret in session {self.run_id} could not be counted ({exc}); "
                       "that session takes no more calls")
            return False
        if counted.began and counted.block is not None:
            self._append({"event": "secret_refusal_block", "run": self.run_id, "refusals": counted.refusals,
                          "per_day": self.budget.per_day})
            self._tell(f"assistant: {counted.block.reason()}")
        return True

    def _tell(self, message: str) -> None:
        if self.tell is not None:
            try:
                self.tell(message)
            except Exception:  # noqa: BLE001 - the audit log has it; telling is best effort
                pass

    def _redact(self, text: str) -> str:
        return self.scanner.redact_record(text) if self.scanner is not None else text


__all__ = ["MAX_SECRET_REFUSALS", "SecretRefusals"]
