# review (MCP server, 2026-12-01): the client's name (and the SDK's stderr log line) was cut before it was redacted, keeping all but one character of a vault value
"""Hostile review (MCP): the client's name is cut to 60 characters BEFORE it is redacted, so a
vault value straddling the cut survives as all but its last character, unredacted, in the audit
log, the approval request and the transcript.

`MemoryServer._start` does client_name(raw) (cut to 59 chars + "…") and only then
scanner.redact(): a cut value no longer matches (the scanner's own rule is "cut text before
redacting it only through redact_prefix"). Threat model: secrets never appear in logs,
transcripts or approval requests. Real server, official SDK client, a waiting write.
"""

from __future__ import annotations

import os

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client
import mcp.types as types

from review_mcp_support import VALUE, server_params, ws  # noqa: F401 (ws: the fixture)



async def _write_waits(ws, client):
    params = server_params(ws)
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w):
            async with ClientSession(r, w, client_info=types.Implementation(name=client, version="1")) as s:
                await s.initialize()
                with anyio.move_on_after(4):
                    await s.call_tool("memory_write", {"path": "people/cut.md",
                                                       "content": "---\ndescription: cut\n---\nhello\n"})


def test_a_vault_value_in_the_client_name_is_never_kept_in_part(ws):
    # 60 - len(VALUE) + 1 filler characters: the cut at 59 keeps all of VALUE but its last character
    client = "A" * (60 - len(VALUE)) + VALUE + "Z"
    anyio.run(_write_waits, ws, client)
    partial = VALUE[:-1]
    leaked = [str(p.relative_to(ws)) for p in (ws / "state").rglob("*")
              if p.is_file() and partial.encode() in p.read_bytes()]
    assert not leaked, f"{len(partial)} of the secret's {len(VALUE)} characters are kept in {leaked}"


async def _unknown_tool(ws, tool, errlog):
    params = server_params(ws)
    async with stdio_client(params, errlog=errlog) as (r, w):
        async with ClientSession(r, w, client_info=types.Implementation(name="logcut", version="1")) as s:
            await s.initialize()
            await s.call_tool(tool, {})


def test_a_vault_value_in_a_logged_sdk_message_is_never_kept_in_part(ws, tmp_path):
    # The same cut-then-redact in the stderr log formatter (OneLine: first line cut at 300
    # characters, then redacted): the SDK logs "Tool '<name>' not listed, ..." for an unknown
    # tool, and the client keeps stderr in its MCP log file.
    tool = "A" * (300 - len("Tool '") - (len(VALUE) - 1)) + VALUE
    log = tmp_path / "stderr.log"
    with open(log, "w") as errlog:
        anyio.run(_unknown_tool, ws, tool, errlog)
    assert VALUE[:-1] not in log.read_text(), "all but one character of the secret is in the server's log"
