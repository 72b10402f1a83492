"""Issue 24 item 2 with issue 22 item 4's protocol: a model on the native tool-call template
(chatml "tools", the default for such a GGUF) reflects in its own shape. The reflection turn
offers it the call schema (not JSON actions) and parses its <tool_call>; a proposal is collected,
nothing written."""

from __future__ import annotations

import json

from assistant.agent.reflection import reflect
from assistant.models.base import StepResult

NOTE = "---\ndescription: Ana - my sister, in Porto\n---\nAna is my sister. She lives in Porto.\n"


class NativeReflector:
    protocol = "tools"
    name = "script:native-reflector"

    def __init__(self) -> None:
        self.schemas: list[dict] = []
        self.steps = [
            "<tool_call>\n" + json.dumps({"name": "memory_write",
                                          "arguments": {"path": "people/ana.md", "content": NOTE}}) + "\n</tool_call>",
            "Nothing else worth keeping.",
        ]

    def step(self, messages, schema, *, max_tokens, on_token=None):
        self.schemas.append(schema)
        return StepResult(text=self.steps.pop(0), prompt_tokens=10, evaluated_tokens=10, completion_tokens=5)


def test_a_native_protocol_model_reflects_with_its_own_call_schema(sessions, ws):
    session = sessions(ws, "watched", inline_ask=lambda q: None)
    model = NativeReflector()
    agent = session.new_agent(model)
    agent.conversation.add_user("My sister Ana lives in Porto now.")
    outcome = reflect(agent, seconds=30, max_proposals=5)
    assert outcome.error is None and outcome.invalid == 0
    assert [(p.tool, p.path) for p in outcome.proposals] == [("memory_write", "people/ana.md")]
    assert all("anyOf" in s and "reply" in s for s in model.schemas)    # call_schema, not JSON actions
    assert not (ws / "memory" / "people" / "ana.md").exists()           # proposed, not written
