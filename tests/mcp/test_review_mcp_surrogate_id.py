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

import contextlib
import os
import select
import subprocess
import sys

from assistant.workspace import init_workspace

INIT = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        b'"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}\n')
INITED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def _line(p, timeout=20.0):
    r, _, _ = select.select([p.stdout], [], [], timeout)
    return p.stdout.readline() if r else None


@contextlib.contextmanager
def _initialized_server(tmp_path, stderr):
    """A real `assistant mcp serve` past its handshake; its stdin closed and the process reaped
    (bounded: 15 s, then killed) at the end."""
    ws = tmp_path / "ws"
    init_workspace(ws)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    p = subprocess.Popen([sys.executable, "-m", "assistant", "-w", str(ws), "mcp", "serve"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env,
                         start_new_session=True)
    try:
        p.stdin.write(INIT)
        p.stdin.flush()
        assert b'"result"' in (_line(p) or b"")
        p.stdin.write(INITED)
        yield p
    finally:
        try:
            p.stdin.close()
        except OSError:
            pass
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(15)


def test_surrogate_string_id_gets_an_error_and_the_server_keeps_serving(tmp_path):
    with _initialized_server(tmp_path, subprocess.PIPE) as p:
        p.stdin.write(b'{"jsonrpc":"2.0","id":"\\ud800","method":"nosuch"}\n')
        p.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"ping"}\n')
        p.stdin.flush()
        first = _line(p)
        second = _line(p)
        assert first and b'"error"' in first, (first, p.stderr.read1(4096) if p.poll() is not None else b"")
        assert second and b'"id":7' in second.replace(b" ", b"")
        assert p.poll() is None, "the server exited"


def test_a_request_with_a_non_jsonrpc_id_gets_an_error_not_silence(tmp_path):
    # id true / 1e3 is no JSON-RPC id (string or integer): the SDK's model reads the line as a
    # notification (extra fields allowed), fails to validate it and only logs a warning, so
    # the client, which sent a request, never gets an answer (the transport promises a
    # JSON-RPC error for a line that is not a request, notification or response).
    with _initialized_server(tmp_path, subprocess.DEVNULL) as p:
        p.stdin.write(b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n')
        p.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"ping"}\n')
        p.stdin.flush()
        first = _line(p)
        assert first is not None and b'"error"' in first, f"no error for the bad request; next line: {first!r}"
