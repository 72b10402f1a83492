"""A vault value that only the writer recognises (split across folder names, which the writer
scans with the separators taken out) is refused by the writer with SecretRefused(vault=True).
Through the agent that refusal is counted (tool_error -> SecretRefusal); through the MCP server
it is returned as a plain tool error: never counted, never audited as secret_refused, so the
second one does not end the session and a client can probe the vault without limit."""

from __future__ import annotations

import json

import anyio
from mcp.server.lowlevel.server import request_ctx
from mcp.shared.context import RequestContext

from assistant.mcp.calls import CallRegistry
from assistant.mcp.server import MemoryServer
from assistant.secrets.refusals import MAX_SECRET_REFUSALS

WIFI = "correct-horse-battery-93kd"
SPLIT = "correct-horse-/battery-93kd.md"      # the value with a "/" in it: a folder and a note


def _call(server: MemoryServer, name: str, args: dict):
    async def go():
        request_ctx.set(RequestContext(request_id=1, meta=None, session=None, lifespan_context=None))
        return await server.call(name, args)
    return anyio.run(go)


def test_a_split_vault_value_refused_by_the_writer_counts_for_mcp(vault_ws, sessions):
    session = sessions(vault_ws, "watched", kind="mcp", vault={"WIFI": WIFI})
    assert session.refusals.vault_names({"path": SPLIT}) == ()      # the door's own scan misses it
    server = MemoryServer(session, CallRegistry())
    texts = []
    for _ in range(MAX_SECRET_REFUSALS + 2):
        result = _call(server, "memory_write", {"path": SPLIT, "content": "x\n"})
        assert result.isError
        texts.append(result.content[0].text)
    assert "secret stored in the person's vault" in texts[0]        # the writer did refuse it as a vault value
    # the session's rule: the second refusal for a vault value ends the session's calls
    assert session.refusals.count >= MAX_SECRET_REFUSALS
    assert session.refusals.ended
    audit = (vault_ws / "state" / "audit.jsonl")
    lines = [json.loads(x) for x in audit.read_text().splitlines()] if audit.exists() else []
    assert [e for e in lines if e.get("event") == "secret_refused"]
