"""One secret-refusal rule per session, whatever the door: a call carrying a vault value is
refused by the session's `refusals` (assistant.secrets.refusals), audited once, and the second
refusal ends the session. Here one session is reached through two doors, its agent (what chat
and run turn through) and its MCP server: the first refusal comes through one, and the second,
through the other, ends the session for both."""

from __future__ import annotations

import json

import anyio

from assistant.mcp.calls import CallRegistry
from assistant.mcp.server import SECRET_REFUSED, SESSION_CLOSED, MemoryServer
from assistant.models.scripted import ScriptedModel
from assistant.secrets.refusals import MAX_SECRET_REFUSALS

WIFI = "correct-horse-battery-93kd"


def refusals_audited(ws) -> list[dict]:
    lines = (ws / "state" / "audit.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("event") == "secret_refused"]


def write_script(tmp_path, items):
    path = tmp_path / "script.json"
    path.write_text(json.dumps(items))
    return path


def test_a_turn_then_an_mcp_call_end_the_session(vault_ws, sessions, tmp_path):
    session = sessions(vault_ws, "unattended", kind="run", vault={"WIFI": WIFI})
    script = write_script(tmp_path, [{"tool": "memory_write", "args": {"path": "a.md", "content": f"{WIFI}\n"}},
                                     {"reply": "never reached"}])
    result = session.new_agent(ScriptedModel(script)).turn("save the wifi")
    assert result.secret_refused and not session.refusals.ended     # the chat would go on here
    assert [c.tool for c in result.failed_calls] == ["memory_write"]

    server = MemoryServer(session, CallRegistry())
    second = anyio.run(server.call, "memory_read", {"path": f"notes/{WIFI}.md"})
    assert second.isError
    assert second.content[0].text == f"{SECRET_REFUSED} {SESSION_CLOSED}"   # the second ended it
    assert session.refusals.ended and session.refusals.count == MAX_SECRET_REFUSALS
    after = anyio.run(server.call, "memory_list", {})
    assert after.isError and after.content[0].text == SESSION_CLOSED

    audited = refusals_audited(vault_ws)
    assert [(a["tool"], a["secrets"], a["run"]) for a in audited] == [
        ("memory_write", ["WIFI"], session.id), ("memory_read", ["WIFI"], session.id)]
    assert WIFI not in (vault_ws / "state" / "audit.jsonl").read_text()


def test_an_mcp_call_then_a_turn_end_the_session(vault_ws, sessions, tmp_path):
    session = sessions(vault_ws, "watched", kind="chat", vault={"WIFI": WIFI})
    server = MemoryServer(session, CallRegistry())
    first = anyio.run(server.call, "memory_write", {"path": "a.md", "content": WIFI})
    assert first.isError and first.content[0].text == SECRET_REFUSED and not session.refusals.ended

    script = write_script(tmp_path, [{"tool": "file_write", "args": {"path": "b.txt", "content": WIFI}},
                                     {"reply": "never reached"}])
    result = session.new_agent(ScriptedModel(script)).turn("note the wifi")
    assert result.secret_refused and session.refusals.ended   # the chat reads this and ends
    assert not (vault_ws / "files" / "b.txt").exists()
    assert [a["tool"] for a in refusals_audited(vault_ws)] == ["memory_write", "file_write"]


def test_the_scan_finds_a_value_at_any_depth_and_in_names(vault_ws, sessions):
    session = sessions(vault_ws, "watched", vault={"WIFI": WIFI})
    scan = session.refusals.vault_names
    assert scan({"path": "a.md", "content": "nothing"}) == ()
    assert scan({"deep": [{"deeper": ("x", f"pw {WIFI}")}]}) == ("WIFI",)
    assert scan({WIFI: "as an argument's name"}) == ("WIFI",)
    assert scan([f"memory_{WIFI}", None, 7]) == ("WIFI",)
