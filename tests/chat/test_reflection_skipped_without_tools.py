"""A model on the completion protocol (the embedded base model) is offered no tools, so the end
of a chat or run does not spend up to the reflection bound on a turn that can propose nothing."""

from __future__ import annotations

from types import SimpleNamespace

from assistant.cli.reflection import chat_reflection, run_reflection


class _Log:
    def __init__(self) -> None:
        self.records: list[tuple[str, dict]] = []

    def append(self, event: str, **fields) -> None:
        self.records.append((event, fields))


def test_a_completion_model_skips_the_reflection_and_records_why():
    log = _Log()
    agent = SimpleNamespace(protocol="completion", transcript=log)   # reflect() would fail on it
    said: list[str] = []
    chat_reflection(agent, said.append)
    run_reflection(agent)
    assert said == []
    assert [e for e, _ in log.records] == ["reflection_skipped", "reflection_skipped"]
    assert "uses no tools" in log.records[0][1]["reason"]
