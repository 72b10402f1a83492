"""The native tool-call protocol (issue 22 item 4): a ChatML model is offered the tools in its own
template's tools block and calls them with <tool_call> JSON; every call is parsed as strictly as
a JSON action (a malformed one is an invalid step the model is told about, never a guess), the
reply is plain text, and a tool's result goes back in <tool_response> tags as untrusted data."""

from __future__ import annotations

import json

import pytest
from e2e_support import make_ws

from assistant.agent.actions import ActionError, Reply, ToolCall
from assistant.agent.native_tools import call_schema, parse_native, tools_block
from assistant.agent.prompt import Conversation
from assistant.models.base import ModelError, StepResult
from assistant.models.chat_format import render
from assistant.models.grammar import tool_call_gbnf
from assistant.models.llama_cpp import llama_protocol
from assistant.tools.memory import memory_tools

TOOLS = memory_tools()
NOTE = "---\ndescription: Ana - Sam's sister, in Porto\n---\nAna is Sam's sister. She moved to Porto.\n"


def call(name: str, arguments: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def test_a_valid_call_and_a_plain_reply():
    assert parse_native(call("memory_read", {"path": "people/lina.md"}), TOOLS) == \
        ToolCall("memory_read", {"path": "people/lina.md"})
    assert parse_native("  Lina lives in Bristol.\n", TOOLS) == Reply("Lina lives in Bristol.")


@pytest.mark.parametrize("text, why", [
    (call("memory_nuke", {}), "unknown tool"),
    (call("memory_read", {}), "missing required"),
    (call("memory_read", {"path": "a.md", "extra": 1}), "unknown field"),
    ('<tool_call>\n{"name": "memory_read", "arguments": {"path": "a.md"}\n</tool_call>', "not valid JSON"),
    ('<tool_call>\n{"name": "memory_read", "name": "memory_list", "arguments": {}}\n</tool_call>', "duplicate key"),
    ('<tool_call>\n{"tool": "memory_read", "args": {"path": "a.md"}}\n</tool_call>', '"name" and "arguments"'),
    ("Sure! " + call("memory_read", {"path": "a.md"}), "nothing else"),
    (call("memory_read", {"path": "a.md"}) + "\n" + call("memory_list", {}), "not valid JSON"),
    ('<tool_call>\n{"name": "memory_read", "arguments": {"path": "a.md"}}', "nothing else"),
    ("", "no reply"),
])
def test_malformed_calls_are_invalid_steps(text, why):
    with pytest.raises(ActionError, match=why):
        parse_native(text, TOOLS)


def test_the_system_message_offers_the_tools_as_the_template_does_and_no_placeholder():
    conv = Conversation("You are Wren.", TOOLS, "- people/lina.md: Lina", protocol="tools")
    system = conv.system_prompt()
    assert "<tools>\n" in system and "\n</tools>" in system
    sig = json.loads(tools_block(TOOLS).split("<tools>\n", 1)[1].split("\n", 1)[0])
    assert sig["type"] == "function" and sig["function"]["name"] == "memory_write"
    assert '"reply"' not in system and "<function-name>" not in system and "<text>" not in system
    conv.add_user("Where does Ana live?", now=None)
    conv.add_action(call("memory_read", {"path": "people/ana.md"}))
    content = conv.add_tool_result("memory_read", "Ana moved to Porto.")
    assert content.startswith("<tool_response>\n") and content.endswith("\n</tool_response>")
    assert "UNTRUSTED DATA" in content
    prompt = render("chatml", conv.messages())
    assert prompt.count("<|im_start|>") == 5 and prompt.endswith("<|im_start|>assistant\n")


class NativeScript:
    """A scripted ChatML model on the native protocol: each step returns the next raw text."""

    protocol = "tools"
    name = "script:native"

    def __init__(self, steps: list[str]):
        self.steps = list(steps)
        self.seen: list[list[dict]] = []
        self.schemas: list[dict] = []

    def step(self, messages, schema, *, max_tokens, on_token=None):
        self.seen.append([dict(m) for m in messages])
        self.schemas.append(schema)
        text = self.steps.pop(0)
        if on_token is not None:
            on_token(text)
        return StepResult(text=text, prompt_tokens=10, evaluated_tokens=10, completion_tokens=5)


@pytest.fixture
def agent_for(tmp_path, sessions):
    def make(model):
        ws = make_ws(tmp_path)
        return sessions(ws, "watched").new_agent(model), ws
    return make


def test_a_native_write_runs_through_the_gate_and_the_reply_is_plain(agent_for):
    model = NativeScript([call("memory_write", {"path": "people/ana.md", "content": NOTE}),
                          "I've saved that Ana moved to Porto."])
    agent, ws = agent_for(model)
    result = agent.turn("My sister Ana moved to Porto.")
    assert (result.outcome, result.reply, result.tool_calls) == ("reply", "I've saved that Ana moved to Porto.", 1)
    assert (ws / "memory" / "people" / "ana.md").read_text() == NOTE
    assert not result.false_claim
    assert model.seen[1][-1]["content"].startswith("<tool_response>\n")
    assert model.schemas[0]["reply"]["maxLength"] == agent.max_reply and len(model.schemas[0]["anyOf"]) == len(agent.tool_list)


def test_a_malformed_native_call_is_refused_and_the_model_told_why(agent_for):
    model = NativeScript(['<tool_call>\n{"name": "memory_write", "arguments": {"path": "people/ana.md"}}\n</tool_call>',
                          "My notes do not say where Ana lives."])
    agent, ws = agent_for(model)
    events = []
    agent.on_event = events.append
    result = agent.turn("Where does Ana live?")
    assert result.outcome == "reply" and result.tool_calls == 0
    assert not (ws / "memory" / "people" / "ana.md").exists()
    refused = [e for e in events if type(e).__name__ == "StepRefused"]
    assert len(refused) == 1 and "missing required" in refused[0].error
    told = model.seen[1][-1]["content"]
    assert "could not be used" in told and "missing required" in told


def test_the_grammar_compiles_in_llama_cpp():
    llama_cpp = pytest.importorskip("llama_cpp")
    gbnf = tool_call_gbnf(call_schema(TOOLS, max_reply=500))
    assert gbnf.startswith('root ::= "<tool_call>" "\\n" call "\\n" "</tool_call>" | call | reply\n')
    # a reply starts with neither "<", "{" (a bare JSON call) nor a tool's first word ("memory",
    # "file", "web"): the 1.5B model wrote calls as command lines that began so
    assert '\nreply ::= [^<{m\\x00] tail | "m" reply-0\n' in gbnf and "tail ::= [^\\x00]{0,499}" in gbnf
    assert 'reply-0-0-0-0-0 ::= ( [^y\\x00] tail )?' in gbnf     # "memo" may start a reply, "memory" not
    llama_cpp.LlamaGrammar.from_string(gbnf, verbose=False)
    # with the vocabulary's own tag tokens (Qwen2.5: 151657, 151658), either spelling opens a call
    tokens = tool_call_gbnf(call_schema(TOOLS, max_reply=500), open_token=151657, close_token=151658)
    assert tokens.startswith('root ::= ( <[151657]> | "<tool_call>" ) "\\n" call "\\n" ( <[151658]> | "</tool_call>" ) | call | reply')
    llama_cpp.LlamaGrammar.from_string(tokens, verbose=False)


def test_the_native_protocol_needs_a_template_we_render():
    assert llama_protocol("tools", embedded=False, chat_format="chatml") == "tools"
    with pytest.raises(ModelError, match='needs chat_format \'chatml\''):
        llama_protocol("tools", embedded=False, chat_format="llama-3")
