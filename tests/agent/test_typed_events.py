"""A turn's events are frozen dataclasses of one module, and every display has a case for each.

Why: events used to travel as (name, dict) and were read back with .get in each display, so a
renamed field or a new event was silently shown as nothing. Now a display matches on the class
and raises on one it has no case for; these tests run each display over one event of every class.
"""
from __future__ import annotations

import ast
import dataclasses
import io
from pathlib import Path

import pytest

from assistant.agent import events as events_module
from assistant.agent.events import (
    EVENTS, ClaimUnbacked, Notice, Recalled, Replied, RulingMade, StepRefused, StepTaken, Stopped, Token, ToolCalled,
    ToolFinished, TurnFailed, UserMessage, VaultValueRefused, WriteShown, record,
)
from assistant.cli.chat import ChatUI
from assistant.cli.run import _progress
from assistant.gating.cancel import CancelOrCommit
from assistant.records.transcript import Transcript, read_transcript

REPO = Path(__file__).resolve().parents[2]

ONE_OF_EACH = {
    UserMessage: UserMessage("hello", ("a.md (changed on disk)",)),
    Notice: Notice("a secret in the message was replaced"),
    Recalled: Recalled(({"path": "a.md", "score": 0.5, "source": "bm25"},)),
    Token: Token("Hel"),
    StepTaken: StepTaken(n=1, action='{"reply": "Hello"}', parsed=True, error=None, prompt_tokens=10,
                         evaluated_tokens=10, completion_tokens=4),
    Replied: Replied("Hello", streamed=False),
    StepRefused: StepRefused("the action is not valid JSON"),
    Stopped: Stopped("the model asked for more than 8 tool calls"),
    TurnFailed: TurnFailed("model error: boom"),
    ToolCalled: ToolCalled("memory_write", {"path": "a.md", "content": "x\n"}, "memory"),
    ToolFinished: ToolFinished("memory_write", ok=False, output="error: denied", seconds=0.01),
    RulingMade: RulingMade(tool="memory_write", kind="memory", target="a.md", allowed=False, verdict="deny",
                           reason="nobody to ask"),
    WriteShown: WriteShown(kind="memory", target="a.md", content="new\n", current="old\n"),
    VaultValueRefused: VaultValueRefused("memory_write", "a.md", ("API_TOKEN",)),
    ClaimUnbacked: ClaimUnbacked("nothing was saved: no note was written", "I've saved it."),
}


def test_every_event_is_a_frozen_dataclass_of_the_events_module():
    assert set(ONE_OF_EACH) == set(EVENTS)       # a new event class needs an example here too
    defined = {obj for obj in vars(events_module).values()
               if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__name__ != "_Base"
               and obj.__module__ == events_module.__name__}
    assert defined == set(EVENTS)                # no event class left out of the Event union
    for cls, event in ONE_OF_EACH.items():
        assert cls.__module__ == "assistant.agent.events"
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls
        field = dataclasses.fields(event)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(event, field, None)
    assert len({cls.EVENT for cls in EVENTS}) == len(EVENTS)   # one transcript name per class


def test_the_chat_display_has_a_case_for_every_event(capsys):
    ui = ChatUI(stdin=io.StringIO(""))
    for event in ONE_OF_EACH.values():
        ui.on_event(event)
    shown = capsys.readouterr().out
    for text in ("-> memory_write", "[deny] memory a.md: nobody to ask", "<- error: denied", "API_TOKEN",
                 "model step refused", "stopped", "model error: boom", "new", "Hello"):
        assert text in shown, text
    with pytest.raises(TypeError, match="no case for"):
        ui.on_event(object())   # type: ignore[arg-type]


def test_the_run_progress_has_a_case_for_every_event(capsys):
    for event in ONE_OF_EACH.values():
        _progress(event)
    logged = capsys.readouterr().err
    assert "[tool] memory_write" in logged and "[gate] memory a.md: deny (nobody to ask)" in logged
    assert "[model] invalid step" in logged
    with pytest.raises(TypeError, match="no case for"):
        _progress(object())   # type: ignore[arg-type]


def test_records_keep_the_transcript_format(tmp_path):
    """The JSON on disk is what it was: a field that does not apply is left out, not null."""
    assert record(ToolCalled("memory_list", {}, None)) == {"tool": "memory_list", "args": {}, "kind": None}
    assert record(ToolCalled("memory_list", {})) == {"tool": "memory_list", "args": {}}      # MCP: no kind
    assert record(ToolFinished("t", ok=False, output="interrupted")) == {"tool": "t", "ok": False,
                                                                         "output": "interrupted"}
    assert record(ToolFinished("t", ok=False, output="x", secret=True))["secret"] is True
    assert "cached_tokens" not in record(ONE_OF_EACH[StepTaken])
    assert record(StepTaken(n=1, action="", parsed=False, error="e", cached_tokens=3))["cached_tokens"] == 3
    with Transcript(tmp_path, "s1", None) as t:
        for event in ONE_OF_EACH.values():
            if event.RECORDED:
                t.append(event.EVENT, **record(event))
    written = read_transcript(tmp_path / "s1.jsonl")
    assert [e["event"] for e in written] == [c.EVENT for c in EVENTS if c.RECORDED]
    assert written[0]["changed_notes"] == ["a.md (changed on disk)"]
    assert written[-2]["names"] == ["API_TOKEN"]
    assert written[-1]["reply"] == "I've saved it."


def test_no_event_is_emitted_by_name():
    """Nothing in assistant/ emits an event as a name and a dict any more."""
    found = []
    for path in sorted((REPO / "assistant").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
                    and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
                    in ("_emit", "emit", "on_event", "_record")
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


def test_cancel_or_commit_first_one_wins():
    given_up = CancelOrCommit()
    assert given_up.cancel("the client cancelled") and given_up.cancel("later")
    assert not given_up.commit() and given_up.cancelled() and given_up.reason() == "the client cancelled"
    committed = CancelOrCommit()
    assert committed.reason() is None and committed.commit() and committed.commit()
    assert not committed.cancel("too late") and not committed.cancelled() and committed.reason() is None
