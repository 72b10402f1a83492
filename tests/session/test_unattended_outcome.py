"""The unattended outcome (`assistant run`'s one line and exit code) is a pure function of the
turn's result: built here from TurnResult values by hand, with no click, no terminal, no files."""

from __future__ import annotations

import subprocess
import sys

from assistant.agent.loop import CallResult, TurnResult
from assistant.agent.outcome import unattended_outcome
from assistant.gating.observed import GateRecord


def redact(text: str) -> str:
    return text.replace("hunter2", "[redacted:WIFI]")


def test_a_reply_is_done():
    out = unattended_outcome(TurnResult(outcome="reply", reply="saved it, hunter2"), redact)
    assert (out.code, out.line) == (0, "done: saved it, [redacted:WIFI]")
    assert out.failed == () and out.made_good == 0


def test_a_failure_made_good_by_a_later_call_of_the_same_tool_and_target_is_done():
    calls = [CallResult("memory_write", "people/lina.md", False, "error: people/lina.md changed"),
             CallResult("memory_read", "people/lina.md", True, ""),
             CallResult("memory_write", "people/lina.md", True, "")]
    out = unattended_outcome(TurnResult(outcome="reply", reply="done", calls=calls), redact)
    assert (out.code, out.line, out.made_good) == (0, "done: done", 1)


def test_a_failure_not_made_good_is_failed_naming_the_first():
    calls = [CallResult("memory_write", "a.md", False, "error: a.md already exists"),
             CallResult("memory_write", "b.md", True, ""),          # another target: makes nothing good
             CallResult("file_read", "x\x1b[2J.txt", False, "error: no file")]
    out = unattended_outcome(TurnResult(outcome="reply", reply="ok", calls=calls), redact)
    assert out.code == 4
    assert out.line == "failed: memory_write a.md: a.md already exists (+1 more)"
    assert [c.target for c in out.failed] == ["a.md", "x\x1b[2J.txt"]


def test_a_secret_refusal_names_the_refused_call_the_last():
    calls = [CallResult("memory_write", "a.md", False, "error: a.md already exists"),
             CallResult("file_write", "n\x1b.txt", False, "error: refused: the call carries a secret")]
    out = unattended_outcome(TurnResult(outcome="stopped", message="stopped", secret_refused=True,
                                        calls=calls), redact)
    assert out.code == 4
    assert out.line == "failed: file_write n\\x1b.txt: refused: the call carries a secret (+1 more)"


def test_a_secret_refusal_without_a_recorded_call_still_fails():
    out = unattended_outcome(TurnResult(outcome="stopped", message="hunter2 was refused", secret_refused=True),
                             redact)
    assert (out.code, out.line) == (4, "failed: ?: [redacted:WIFI] was refused")


def test_a_denial_comes_before_a_failure():
    denied = GateRecord("memory_write", "memory", "people/ana.md", False, "expired", "nobody answered, hunter2")
    out = unattended_outcome(TurnResult(outcome="reply", reply="ok", rulings=[denied, denied],
                                        calls=[CallResult("memory_write", "people/ana.md", False, "error: denied")]),
                             redact)
    assert out.code == 3
    assert out.line == "denied: memory_write on people/ana.md: nobody answered, [redacted:WIFI] (+1 more)"


def test_an_error_and_a_stop_are_errors():
    assert unattended_outcome(TurnResult(outcome="error", message="model error: boom"), redact).line == \
        "error: model error: boom"
    stopped = unattended_outcome(TurnResult(outcome="stopped", message="more than 8 tool calls"), redact)
    assert (stopped.code, stopped.line) == (1, "error: more than 8 tool calls")


def test_the_outcome_needs_no_click():
    code = "import sys, assistant.agent.outcome; print('click' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
