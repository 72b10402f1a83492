"""`assistant mcp serve` started by a person instead of a client (issue 23, item 22): on a
terminal (a real pty) it says it is meant to be started by an MCP client and how (the README's
`claude mcp add` line, with this workspace); input that is not JSON-RPC, on a terminal or a pipe,
gets one clear line on stderr, never a traceback, and the server keeps answering in JSON-RPC."""

from __future__ import annotations

from mcp_harness import RawServer, make_ws
from bounded import wait_for
from tty_harness import Pty, clean_env

HOW = 'claude mcp add memory -- "$(which assistant)" -w '


def test_on_a_terminal_it_says_it_is_for_an_mcp_client_and_how(tmp_path):
    ws = make_ws(tmp_path)
    term = Pty("-w", str(ws), "mcp", "serve", env=clean_env())
    try:
        shown = term.read_until("Ctrl-C to stop.")
        assert "meant to be started by an MCP client" in shown
        assert f"{HOW}{ws} mcp serve" in shown
        term.send("hello there\r")
        shown = term.read_until("stdin is not speaking MCP")
        term.send("\x04")                       # Ctrl-D: the end of input
        assert term.wait() == 0
    finally:
        term.kill()
    assert "Traceback" not in term.text


def test_input_that_is_not_json_rpc_gets_one_line_on_stderr(tmp_path):
    ws = make_ws(tmp_path)
    with RawServer(ws) as server:
        server.send(b"hello\nGET / HTTP/1.1\n")
        assert server.next()["error"]["code"] == -32700 and server.next()["error"]["code"] == -32700
        server.handshake("by hand")
        server.request(7, "ping")
        assert server.next() == {"jsonrpc": "2.0", "id": 7, "result": {}}   # it keeps serving
        assert server.close() == 0
        assert wait_for(lambda: server.stderr, 30)     # its reader has the whole of stderr
        stderr = b"".join(server.stderr).decode()
    told = [line for line in stderr.splitlines() if "not speaking MCP" in line]
    assert len(told) == 1 and HOW in told[0] and str(ws) in told[0]
    assert "meant to be started by an MCP client" not in stderr      # stdin is no terminal
    assert "Traceback" not in stderr
