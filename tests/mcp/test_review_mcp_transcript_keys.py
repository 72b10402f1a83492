# review (MCP server, 2026-12-01): a vault value used as a nested argument key was written to the transcript in clear
"""Hostile review (MCP): a vault value used as a dict KEY inside an argument's value reaches
the session transcript on disk unredacted.

`MemoryServer.call` records `tool_call` with the raw arguments before refusing the call for the
secret it carries; the transcript redacts every string VALUE (`redact_value`) but keeps dict
keys as they are. So memory_list {"offset": {"<vault value>": 1}} is refused ("the call carries
a secret") while state/transcripts/<session>.jsonl now holds the value in clear. Threat model:
a transcript never holds a secret value. Real server, official SDK client.
"""

from __future__ import annotations

import os

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client
import mcp.types as types

from review_mcp_support import VALUE, server_params, ws  # noqa: F401 (ws: the fixture)



async def _call(ws):
    params = server_params(ws)
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w):
            async with ClientSession(r, w, client_info=types.Implementation(name="keys", version="1")) as s:
                await s.initialize()
                return await s.call_tool("memory_list", {"offset": {VALUE: 1}})


def test_a_vault_value_as_a_nested_key_never_reaches_the_transcript(ws):
    res = anyio.run(_call, ws)
    assert res.isError
    leaked = [str(p.relative_to(ws)) for p in (ws / "state").rglob("*")
              if p.is_file() and VALUE.encode() in p.read_bytes()]
    assert not leaked, f"the vault value is on disk in clear in {leaked}"
