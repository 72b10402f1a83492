# review (MCP server, 2026-12-01): a lone-surrogate string id killed the server; an id of true got no answer
"""Hostile review (MCP): one JSON-RPC line whose id is a string holding a lone surrogate
(`"\\ud800"`, legal JSON) kills `assistant mcp serve`.

The SDK's model refuses the message, the transport's fallback finds the id with json.loads and
builds its "invalid request" error line with json.dumps(ensure_ascii=False), whose
.encode("utf-8") raises UnicodeEncodeError inside read_loop: the task group fails and the
server exits ("the MCP server failed (ExceptionGroup)"). Promise: bad input gets an error and
the server keeps serving. Real process, raw bytes on stdin.
"""

from __future__ import annotations

import pytest

from mcp_harness import RawServer, make_ws


@pytest.mark.parametrize("bad", [
    # a lone surrogate in a string id: the transport's error line could not be encoded and the
    # server died ("the MCP server failed (ExceptionGroup)")
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"nosuch"}\n',
    # id true is no JSON-RPC id (string or integer): the SDK read the line as a notification,
    # failed to validate it and only logged a warning, so the client never got an answer
    b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n',
], ids=["lone-surrogate-id", "boolean-id"])
def test_a_request_the_sdk_refuses_gets_an_error_and_the_server_keeps_serving(tmp_path, bad):
    with RawServer(make_ws(tmp_path)) as server:
        server.handshake()
        server.send(bad)
        server.request(7, "ping")
        first = server.next()
        assert "error" in first, f"no error for the bad request; next line: {first!r}"
        assert server.next()["id"] == 7
        assert server.proc.poll() is None, "the server exited"
