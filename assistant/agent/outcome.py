"""The outcome of an unattended turn: one line and its exit code, from the turn's result alone.

Guards the unattended contract (`assistant run`, schedules): `done:` 0, `error:` 1, `denied:` 3
(an approval was denied or expired), `failed:` 4 (a tool call failed and no later call of the
same tool on the same target made it good; a call refused for carrying a vault value always
counts, and is the one named). A pure function of the TurnResult: no terminal, no click, no
files. Every text in the line is redacted and shown on one line with controls escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from assistant.agent.loop import CallResult, TurnResult
from assistant.display.terminal import escape, one_line
from assistant.records.runs import EXIT_DENIED, EXIT_ERROR, EXIT_FAILED, EXIT_OK


@dataclass(frozen=True)
class UnattendedOutcome:
    code: int                       # the exit code
    line: str                       # the one line on stdout ("done: ...", "failed: ...", ...)
    failed: tuple[CallResult, ...]  # failed calls that no later call made good
    made_good: int                  # failed calls a later call of the same tool and target did


def unrecovered(calls: list[CallResult]) -> list[CallResult]:
    """Each failed call not followed by a successful call of the same tool on the same target
    (a conflict the model re-read and retried is made good)."""
    out = []
    for i, call in enumerate(calls):
        if call.ok:
            continue
        if any(later.ok and later.tool == call.tool and later.target == call.target for later in calls[i + 1:]):
            continue
        out.append(call)
    return out


def _shown(text: str, limit: int = 400) -> str:
    # model-chosen text: controls, bidi and format characters shown as escapes; a cut states the length
    return one_line(text, limit)


def unattended_outcome(result: TurnResult, redact: Callable[[str], str]) -> UnattendedOutcome:
    """The exit code and outcome line of an unattended turn that ended (not interrupted)."""
    failed = unrecovered(result.calls)
    made_good = sum(1 for c in result.calls if not c.ok) - len(failed)
    if result.outcome == "error":
        code, line = EXIT_ERROR, f"error: {_shown(redact(result.message))}"
    elif result.denials:
        d = result.denials[0]
        more = f" (+{len(result.denials) - 1} more)" if len(result.denials) > 1 else ""
        code = EXIT_DENIED
        line = (f"denied: {d.tool} on {escape(str(d.target), newlines=False)}: "
                f"{_shown(redact(d.reason), 200)}{more}")
    elif result.secret_refused or failed:
        # name the refused call (the turn ended on it: the last one), else the first failure
        named = (failed[-1] if result.secret_refused else failed[0]) if failed else None
        tool, target, message = ((named.tool, named.target, named.message) if named is not None
                                 else ("?", "", result.message))
        more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
        message = message[len("error: "):] if message.startswith("error: ") else message
        code = EXIT_FAILED
        line = (f"failed: {tool}{' ' + escape(target, newlines=False) if target else ''}: "
                f"{_shown(redact(message), 300)}{more}")
    elif result.outcome == "stopped":
        code, line = EXIT_ERROR, f"error: {_shown(redact(result.message))}"
    else:
        code, line = EXIT_OK, f"done: {_shown(redact(result.reply or ''), 2000)}"
    return UnattendedOutcome(code, line, tuple(failed), made_good)


__all__ = ["UnattendedOutcome", "unattended_outcome", "unrecovered"]
