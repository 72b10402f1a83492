"""Issue 24 item 2: at the reflection's time bound the chat shows the proposals it completed (each
put to the person) and says that the one still being written was dropped. The bound is a
parameter of the code path, so this uses a tiny one; nothing about timing is asserted."""

from __future__ import annotations

import hashlib
import json
import threading

from policy.gate import InlineAnswer

from assistant.cli.reflection import chat_reflection
from assistant.models.base import StepResult


class StallingModel:
    """Two proposals, then a step that waits (bounded) for `release`."""

    name = "stalling"

    def __init__(self) -> None:
        self.items = [{"tool": "memory_write", "args": {"path": f"people/{n}.md", "content": f"{n} is a friend.\n"}}
                      for n in ("ana", "ben")]
        self.release = threading.Event()

    def step(self, messages, schema, *, max_tokens, on_token=None) -> StepResult:
        if self.items:
            return StepResult(json.dumps(self.items.pop(0)))
        self.release.wait(30)
        return StepResult(json.dumps({"reply": "done"}))


def test_the_time_bound_shows_what_was_completed_and_says_what_was_dropped(sessions, ws):
    asked = []

    def person(question):
        asked.append(question.target)
        return InlineAnswer("once", hashlib.sha256(question.content.encode()).hexdigest())

    session = sessions(ws, "watched", inline_ask=person)
    model = StallingModel()
    agent = session.new_agent(model)
    agent.conversation.add_user("Ana and Ben are my friends")
    said: list[str] = []
    try:
        chat_reflection(agent, said.append, seconds=0.2)
    finally:
        model.release.set()
    screen = "\n".join(said)
    assert "it stopped at its 0.2 s bound" in screen and "the one still being written was dropped" in screen
    assert "the 2 proposals it completed are shown" in screen
    assert asked == ["people/ana.md", "people/ben.md"]
    assert (ws / "memory" / "people" / "ben.md").read_text() == "ben is a friend.\n"
