# review (MCP server, 2026-12-01): a vault value as a tool name, argument name or resource URI came back as [redacted:NAME], a silent naming oracle
"""Hostile review (MCP): a vault value in a tool NAME, an argument NAME or a memory://notes/
URI is echoed back redacted, as "[redacted:<secret name>]": an unlimited, silent oracle.

The server refuses a call carrying a vault value in its arguments before the tool runs, never
names the secret to the client, tells the person (audit `secret_refused`), and closes the
session's tool calls at the second one, "so refusals are no oracle to search your vault with".
But the unknown-tool and unknown-argument checks run BEFORE that check, and resources/read is
not a tool call at all: each answers with an error that echoes the guess through the redactor,
so a guess equal to a vault value comes back as "[redacted:bank_pin]" (naming the secret), the
person is not told, and the session never closes. Real server, official SDK client.
"""

from __future__ import annotations

import json
import os

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
import mcp.types as types
from mcp.shared.exceptions import McpError

from review_mcp_support import NAME, VALUE, server_params, ws  # noqa: F401 (ws: the fixture)



async def _probe(ws, kind):
    params = server_params(ws)
    texts = []
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w):
            async with ClientSession(r, w, client_info=types.Implementation(name="probe", version="1")) as s:
                await s.initialize()
                for _ in range(3):      # more than the two refusals a session is allowed
                    if kind == "tool":
                        res = await s.call_tool(VALUE, {})
                        texts.append(res.content[0].text)
                    elif kind == "argument":
                        res = await s.call_tool("memory_read", {VALUE: 1})
                        texts.append(res.content[0].text)
                    else:
                        try:
                            await s.read_resource(f"memory://notes/{VALUE}.md")
                        except McpError as exc:
                            texts.append(exc.error.message)
                after = await s.call_tool("memory_list", {})
    return texts, after


@pytest.mark.parametrize("kind", ["tool", "argument", "resource"])
def test_a_vault_value_in_a_name_or_uri_is_no_silent_oracle(ws, kind):
    texts, after = anyio.run(_probe, ws, kind)
    for text in texts:
        assert VALUE not in text
        assert NAME not in text, f"the answer names the vault secret the guess hit: {text!r}"
    log = ws / "state" / "audit.jsonl"
    audit = [json.loads(l) for l in (log.read_text() if log.exists() else "").splitlines() if l.strip()]
    assert any(e.get("event") == "secret_refused" for e in audit), "the person was never told"
    assert after.isError, "the session kept taking tool calls after three calls carrying a vault value"
