"""Action schema and strict parsing: exactly a reply or one well-formed tool call."""

import json

import pytest

from assistant.agent.actions import (
    DEFAULT_MAX_STRING, ActionError, Reply, SchemaError, ToolCall, action_from_value, action_json,
    action_schema, parse_action,
)
from assistant.tools.base import Tool

from schema_support import alternatives_matched


def _tool(name, params, kind=None):
    return Tool(name=name, description=f"{name} tool", parameters=params, run=lambda a, c: "", kind=kind)


WRITE = _tool("memory_write", {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 120},
        "content": {"type": "string"},
        "base": {"type": "string", "maxLength": 12},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}, kind="memory")
LIST = _tool("memory_list", {
    "type": "object",
    "properties": {
        "offset": {"type": "integer", "minimum": 0},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
    },
})
FETCH = _tool("web_fetch", {
    "type": "object",
    "properties": {
        "url": {"type": "string", "maxLength": 2000},
        "auth": {"enum": ["none", "github"]},
        "headers": {"type": "array", "items": {"type": "string", "maxLength": 100}, "maxItems": 3},
        "strict": {"type": "boolean"},
    },
    "required": ["url"],
})
TOOLS = [WRITE, LIST, FETCH]


# --- schema ------------------------------------------------------------------------------------

def test_schema_is_one_alternative_per_tool_plus_reply():
    s = action_schema(TOOLS)
    alts = s["anyOf"]
    assert len(alts) == 4
    assert alts[0]["required"] == ["reply"] and alts[0]["additionalProperties"] is False
    names = [a["properties"]["tool"]["const"] for a in alts[1:]]
    assert names == ["memory_write", "memory_list", "web_fetch"]
    for a in alts:
        assert a["additionalProperties"] is False


def test_schema_bounds_every_string_and_closes_every_object():
    s = action_schema(TOOLS, max_reply=777)
    assert s["anyOf"][0]["properties"]["reply"]["maxLength"] == 777
    write_args = s["anyOf"][1]["properties"]["args"]
    assert write_args["properties"]["content"]["maxLength"] == DEFAULT_MAX_STRING  # default bound added
    assert write_args["properties"]["path"]["maxLength"] == 120                    # own bound kept
    list_args = s["anyOf"][2]["properties"]["args"]
    assert list_args["additionalProperties"] is False                              # closed though unspecified
    fetch_args = s["anyOf"][3]["properties"]["args"]
    assert fetch_args["properties"]["headers"]["maxItems"] == 3

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "string":
                assert isinstance(node.get("maxLength"), int)
            if node.get("type") == "object":
                assert node.get("additionalProperties") is False
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(s)


def test_schema_does_not_mutate_tool_parameters():
    before = json.dumps(WRITE.parameters, sort_keys=True)
    action_schema(TOOLS)
    assert json.dumps(WRITE.parameters, sort_keys=True) == before


@pytest.mark.parametrize("params, needle", [
    ({"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}}, "format"),
    ({"type": "object", "properties": {"u": {"type": "string", "pattern": "a+"}}}, "pattern"),
    ({"type": "object", "properties": {}, "additionalProperties": True}, "additionalProperties"),
    ({"type": "object", "properties": {"x": {"type": "null"}}}, "type must be"),
    ({"type": "object", "properties": {"a": {"type": "array"}}}, "items"),
    ({"type": "object", "properties": {"s": {"type": "string", "maxLength": -1}}}, "maxLength"),
    ({"type": "object", "properties": {}, "required": ["ghost"]}, "ghost"),
    ({"type": "string"}, "object schema"),
])
def test_unenforceable_tool_schema_is_a_clear_error(params, needle):
    with pytest.raises(SchemaError, match=needle):
        action_schema([_tool("bad_tool", params)])


def test_duplicate_or_bad_tool_names_rejected():
    with pytest.raises(SchemaError, match="twice"):
        action_schema([LIST, LIST])
    with pytest.raises(SchemaError, match="must match"):
        action_schema([_tool("Bad Name", {"type": "object", "properties": {}})])


# --- parse -------------------------------------------------------------------------------------

def test_parse_reply_and_tool_call():
    assert parse_action('{"reply": "hello"}', TOOLS) == Reply("hello")
    assert parse_action(' { "reply" : "multi\\nline" } \n', TOOLS) == Reply("multi\nline")
    call = parse_action('{"tool": "memory_write", "args": {"path": "people/ann.md", "content": "Ann is my sister."}}', TOOLS)
    assert call == ToolCall("memory_write", {"path": "people/ann.md", "content": "Ann is my sister."})
    assert parse_action('{"tool": "memory_list", "args": {}}', TOOLS) == ToolCall("memory_list", {})
    assert parse_action('{"args": {"limit": 5}, "tool": "memory_list"}', TOOLS) == ToolCall("memory_list", {"limit": 5})


@pytest.mark.parametrize("text, needle", [
    ("", "empty output"),
    ("   ", "empty output"),
    ("reply: hi", "not valid JSON"),
    ('{"reply": "hi"', "not valid JSON"),
    ('{"reply": "hi"} {"reply": "again"}', "not valid JSON"),
    ('["reply", "hi"]', "JSON object, got array"),
    ('"hi"', "JSON object, got string"),
    ('{"reply": 3}', "reply must be a string"),
    ('{"reply": "   "}', "reply is empty"),
    ('{"reply": "a", "reply": "b"}', "duplicate key 'reply'"),
    ('{"reply": "a", "tool": "memory_list", "args": {}}', "not both"),
    ('{"tool": "memory_list"}', 'needs "args"'),
    ('{"tool": "memory_list", "args": {}, "why": "x"}', "unknown field"),
    ('{}', "must be"),
    ('{"tool": "shell", "args": {"cmd": "rm -rf /"}}', "unknown tool \"shell\""),
    ('{"tool": 7, "args": {}}', "tool name"),
    ('{"tool": "memory_list", "args": []}', "args of memory_list must be an object"),
    ('{"tool": "memory_write", "args": {"path": "a.md"}}', "missing required field(s) 'content'"),
    ('{"tool": "memory_write", "args": {"path": "a.md", "content": "x", "mode": "append"}}', "unknown field(s) 'mode'"),
    ('{"tool": "memory_write", "args": {"path": 5, "content": "x"}}', "memory_write args.path must be a string, got integer"),
    ('{"tool": "memory_write", "args": {"path": "", "content": "x"}}', "at least 1 characters"),
    ('{"tool": "memory_list", "args": {"limit": 51}}', "<= 50"),
    ('{"tool": "memory_list", "args": {"limit": 0}}', ">= 1"),
    ('{"tool": "memory_list", "args": {"limit": 2.5}}', "must be an integer, got number"),
    ('{"tool": "memory_list", "args": {"limit": true}}', "must be an integer, got boolean"),
    ('{"tool": "memory_list", "args": {"limit": NaN}}', "not valid JSON"),
    ('{"tool": "web_fetch", "args": {"url": "http://x", "auth": "root"}}', "one of"),
    ('{"tool": "web_fetch", "args": {"url": "http://x", "headers": ["a", "b", "c", "d"]}}', "4 items; the limit is 3"),
    ('{"tool": "web_fetch", "args": {"url": "http://x", "headers": [1]}}', "headers[0] must be a string"),
    ('{"tool": "web_fetch", "args": {"url": "http://x", "strict": "yes"}}', "must be a boolean"),
])
def test_malformed_actions_are_specific_errors(text, needle):
    with pytest.raises(ActionError) as exc:
        parse_action(text, TOOLS)
    assert needle in str(exc.value)


def test_length_bounds_enforced_by_parser():
    ok = "x" * 120
    parse_action(json.dumps({"tool": "memory_write", "args": {"path": ok, "content": "c"}}), TOOLS)
    with pytest.raises(ActionError, match="121 characters; the limit is 120"):
        parse_action(json.dumps({"tool": "memory_write", "args": {"path": ok + "x", "content": "c"}}), TOOLS)
    big = "y" * (DEFAULT_MAX_STRING + 1)
    with pytest.raises(ActionError, match="the limit is"):
        parse_action(json.dumps({"tool": "memory_write", "args": {"path": "a.md", "content": big}}), TOOLS)
    with pytest.raises(ActionError, match="reply is 11 characters; the limit is 10"):
        parse_action(json.dumps({"reply": "z" * 11}), TOOLS, max_reply=10)


def test_deep_nesting_rejected_without_crash():
    deep = '{"reply": ' + "[" * 5000 + "]" * 5000 + "}"
    with pytest.raises(ActionError):
        parse_action(deep, TOOLS)


def test_parse_and_validate_agree_with_schema():
    # Every valid action validates against the exact schema that the grammar is built from.
    schema = action_schema(TOOLS)
    samples = [
        {"reply": "hi"},
        {"tool": "memory_write", "args": {"path": "p.md", "content": "c", "base": "abc"}},
        {"tool": "memory_list", "args": {"offset": 0}},
        {"tool": "web_fetch", "args": {"url": "http://127.0.0.1/", "headers": [], "strict": False}},
    ]
    for value in samples:
        action = action_from_value(value, TOOLS)
        assert alternatives_matched(value, schema) == 1, value
        assert json.loads(action_json(action)) == value


def test_action_json_roundtrip_keeps_unicode():
    a = ToolCall("memory_write", {"path": "people/zoë.md", "content": "Zoë — 🎉"})
    assert parse_action(action_json(a), TOOLS) == a
    assert "Zoë" in action_json(a)


def test_lone_surrogate_escapes_refused_but_pairs_accepted():
    with pytest.raises(ActionError, match="lone surrogate"):
        parse_action('{"reply": "bad \\ud800 here"}', TOOLS)
    with pytest.raises(ActionError, match="lone surrogate"):
        parse_action('{"tool": "memory_write", "args": {"path": "a.md", "content": "x\\udfff"}}', TOOLS)
    ok = parse_action('{"reply": "party \\ud83c\\udf89"}', TOOLS)
    assert ok == Reply("party 🎉")
    ok.text.encode("utf-8")
