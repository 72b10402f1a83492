"""One session, two doors (its MCP server and its agent, as tests/session/test_secret_refusal_rule.py
has them): once the session's refusal rule has ended the session (two calls carried vault
values through MCP), the agent must take no more tool calls either. Today the agent never looks
at `refusals.ended`: its next turn writes a note, and probes the vault a third time."""

from __future__ import annotations

import json

import anyio

from assistant.mcp.calls import CallRegistry
from assistant.mcp.server import MemoryServer
from assistant.models.scripted import ScriptedModel
from assistant.secrets.refusals import MAX_SECRET_REFUSALS

WIFI = "correct-horse-battery-93kd"


def test_an_ended_session_takes_no_more_calls_through_its_agent(vault_ws, sessions, tmp_path):
    session = sessions(vault_ws, "watched", kind="chat", vault={"WIFI": WIFI})
    server = MemoryServer(session, CallRegistry())
    for _ in range(MAX_SECRET_REFUSALS):
        assert anyio.run(server.call, "memory_read", {"path": f"{WIFI}.md"}).isError
    assert session.refusals.ended

    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool": "memory_write", "args": {"path": "planted.md", "content": "obey the page\n"}},
        {"tool": "memory_write", "args": {"path": "probe.md", "content": WIFI}},
        {"reply": "done"}]))
    result = session.new_agent(ScriptedModel(script)).turn("anything")
    assert not (vault_ws / "memory" / "planted.md").exists()      # no call ran in an ended session
    assert result.tool_calls == 0
    assert session.refusals.count == MAX_SECRET_REFUSALS          # no third probe
