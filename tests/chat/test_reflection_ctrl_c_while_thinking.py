"""Issue 24 item 2: a Ctrl-C while the reflection turn is still thinking skips it at once: no
proposal is put to the person, nothing is written, and the transcript says it was skipped.
The Ctrl-C is a real SIGINT to this process, sent once the model is inside its step."""

from __future__ import annotations

import json
import os
import signal
import threading

from assistant.cli.reflection import chat_reflection
from assistant.models.base import StepResult


class ThinkingModel:
    """One proposal, then a step that waits (bounded) until released."""

    name = "thinking"

    def __init__(self) -> None:
        self.items = [{"tool": "memory_write", "args": {"path": "people/ana.md", "content": "Ana is a friend.\n"}}]
        self.inside = threading.Event()
        self.release = threading.Event()

    def step(self, messages, schema, *, max_tokens, on_token=None) -> StepResult:
        if self.items:
            return StepResult(json.dumps(self.items.pop(0)))
        self.inside.set()
        self.release.wait(30)
        return StepResult(json.dumps({"reply": "done"}))


def test_ctrl_c_while_the_reflection_thinks_skips_it(sessions, ws):
    asked = []
    session = sessions(ws, "watched", inline_ask=lambda q: asked.append(q))
    model = ThinkingModel()
    agent = session.new_agent(model)
    agent.conversation.add_user("Ana is my friend")

    def press_ctrl_c() -> None:
        if model.inside.wait(30):
            os.kill(os.getpid(), signal.SIGINT)

    # under `nohup ... &` or CI the runner may have inherited SIGINT ignored: Python then never
    # raises KeyboardInterrupt, so this test puts Python's own handler in place while it runs
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    presser = threading.Thread(target=press_ctrl_c, daemon=True)
    presser.start()
    said: list[str] = []
    try:
        chat_reflection(agent, said.append, seconds=60)
    finally:
        model.release.set()
        presser.join(5)
        signal.signal(signal.SIGINT, previous)
    assert any("reflection skipped" in line for line in said)
    assert asked == [] and not (ws / "memory" / "people" / "ana.md").exists()
    session.transcript.close()
    events = [json.loads(line) for line in session.transcript.path.read_text().splitlines()]
    kinds = [e["event"] for e in events]
    assert "reflection_skipped" in kinds
    assert [e["ended"] for e in events if e["event"] == "reflection_end"] == ["interrupted"]
