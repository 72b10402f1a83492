"""`assistant mcp serve` on the wire: raw bytes written to its stdin. Garbage, bad UTF-8, deep
nesting, an oversized message and unknown methods each get a JSON-RPC error, stdout carries
nothing but JSON-RPC, and the server keeps serving. A vault it cannot unlock stops it before it
reads a byte of stdin, with the fix on stderr."""

from __future__ import annotations

import json
import subprocess

import pytest

from mcp_harness import PASSPHRASE, PY, SECRET, WAIT, RawServer, add_vault, env, make_ws


def test_garbage_on_stdin_gets_errors_and_the_server_keeps_serving(tmp_path):
    ws = make_ws(tmp_path)
    server = RawServer(ws)
    try:
        server.handshake()
        huge = (b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"memory_write","arguments":'
                b'{"path":"big.md","content":"' + b"x" * (2 * 1024 * 1024) + b'"}}}\n')
        garbage = [
            (b"hello there\n", None, -32700),
            (b"\xff\xfe\xfa not utf-8\n", None, -32700),
            (b"{not json\n", None, -32700),
            (b"[1, 2, 3]\n", None, -32600),
            (b'{"jsonrpc":"2.0","id":7}\n', 7, -32600),
            (b"[" * 200_000 + b"\n", None, -32700),
            (huge, 8, -32600),
            (b'{"jsonrpc":"1.0","id":"x","method":"tools/list"}\n', "x", -32600),
        ]
        for data, expected_id, code in garbage:
            server.send(data)
            reply = server.next()
            assert reply["jsonrpc"] == "2.0" and reply["id"] == expected_id, reply
            assert reply["error"]["code"] == code, reply
            assert b"x" * 100 not in json.dumps(reply).encode()          # nothing echoed back
        # valid JSON-RPC that the protocol refuses: an unknown method, arguments of the wrong type
        server.request(9, "no/such/method")
        assert server.next()["error"]["code"] < 0
        server.request(10, "tools/call", {"name": "memory_read", "arguments": "people/lina.md"})
        assert server.next()["error"]["code"] < 0
        server.send(b"\n\r\n")                                           # blank lines are skipped
        # ...and it still serves
        server.request(11, "tools/call", {"name": "memory_read", "arguments": {"path": "people/lina.md"}})
        reply = server.next()
        assert reply["id"] == 11 and reply["result"]["isError"] is False
        assert "Lina" in reply["result"]["content"][0]["text"]
        assert not (ws / "memory" / "big.md").exists()
        assert server.proc.poll() is None
    finally:
        code = server.close()
    assert code == 0
    err = b"".join(server.stderr).decode()
    assert "Traceback" not in err
    runs = list((ws / "state" / "transcripts").glob("*-mcp-*.jsonl"))
    start = json.loads(runs[0].read_text().splitlines()[0])
    assert start["event"] == "session_start" and start["client"] == "raw?[31m client"   # no escape reaches a log


def test_locked_vault_refuses_to_start_and_never_reads_stdin(tmp_path):
    ws = make_ws(tmp_path)
    add_vault(ws, key_file=False)
    # the passphrase on stdin must not unlock it: stdin is the protocol, never a prompt
    r = subprocess.run([PY, "-m", "assistant", "-w", str(ws), "mcp", "serve"], input=(PASSPHRASE + "\n").encode(),
                       capture_output=True, env=env(), timeout=WAIT)
    assert r.returncode != 0 and r.stdout == b""
    err = r.stderr.decode()
    assert "locked" in err and "assistant vault remember" in err and 'unlock = "keyring"' in err
    assert "key_file" in err and "client's config" in err and "Traceback" not in err
    assert PASSPHRASE not in err and SECRET not in err


def test_vault_unlocked_from_the_key_file_or_the_env(tmp_path):
    ws = make_ws(tmp_path)
    add_vault(ws, key_file=False)
    for extra in ({"ASSISTANT_VAULT_PASSPHRASE": PASSPHRASE},):
        server = RawServer(ws, **extra)
        try:
            server.handshake()
            server.request(2, "tools/call", {"name": "memory_write",
                                             "arguments": {"path": "leak.md", "content": f"pin {SECRET}\n"}})
            reply = server.next()
            assert reply["result"]["isError"] is True
            assert "secret stored in the person's vault" in reply["result"]["content"][0]["text"]
            # a malformed request carrying the secret: the SDK's log of it (stderr, kept in the
            # client's log file) must not repeat it
            server.request(3, "tools/call", {"name": "memory_write", "arguments": f"pin {SECRET}"})
            assert server.next()["error"]["code"] < 0
            server.request(4, "resources/read", {"uri": 5, "secret": SECRET})
            assert server.next()["error"]["code"] < 0
        finally:
            assert server.close() == 0
        err = b"".join(server.stderr).decode()
        assert "Failed to validate request" in err and SECRET not in err and SECRET[:12] not in err
    wrong = ws / "vault.key"
    wrong.write_text("not the passphrase")
    wrong.chmod(0o600)
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace('key_file = ""', 'key_file = "vault.key"'))
    r = subprocess.run([PY, "-m", "assistant", "-w", str(ws), "mcp", "serve"], stdin=subprocess.DEVNULL,
                       capture_output=True, env=env(), timeout=WAIT)
    assert r.returncode != 0 and r.stdout == b"" and b"Traceback" not in r.stderr
    wrong.write_text(PASSPHRASE)
    server = RawServer(ws)
    try:
        server.handshake()
    finally:
        assert server.close() == 0


def test_a_client_that_stops_reading_stdout_does_not_crash_it(tmp_path):
    import select

    ws = make_ws(tmp_path)
    proc = subprocess.Popen([PY, "-m", "assistant", "-w", str(ws), "mcp", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    try:
        def send(msg: dict) -> None:
            proc.stdin.write(json.dumps(msg).encode() + b"\n")
            proc.stdin.flush()

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "gone", "version": "0"}}})
        ready, _, _ = select.select([proc.stdout], [], [], WAIT)
        assert ready and json.loads(proc.stdout.readline())["id"] == 1
        proc.stdout.close()                        # the client's end of stdout is gone
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i in range(50):
            send({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                  "params": {"name": "memory_read", "arguments": {"path": "people/lina.md"}}})
        proc.stdin.write(b"garbage\n")
        proc.stdin.close()
        code = proc.wait(timeout=WAIT)
        err = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=WAIT)
    assert code == 0 and "Traceback" not in err


# review (mcp): a lone-surrogate string id killed the server; an id of true got no answer
@pytest.mark.parametrize("bad", [
    # a lone surrogate in a string id: the transport's error line could not be encoded and the
    # server died ("the MCP server failed (ExceptionGroup)")
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"nosuch"}\n',
    # id true is no JSON-RPC id (string or integer): the SDK read the line as a notification,
    # failed to validate it and only logged a warning, so the client never got an answer
    b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n',
], ids=["lone-surrogate-id", "boolean-id"])
def test_a_request_the_sdk_refuses_gets_an_error_and_the_server_keeps_serving(tmp_path, bad):
    """One JSON-RPC line whose id is a string holding a lone surrogate (`"\\ud800"`, legal JSON)
    killed `assistant mcp serve`: the SDK's model refused the message, the transport's fallback
    found the id with json.loads and built its "invalid request" error line with
    json.dumps(ensure_ascii=False), whose .encode("utf-8") raised UnicodeEncodeError inside
    read_loop. Bad input gets an error and the server keeps serving."""
    with RawServer(make_ws(tmp_path)) as server:
        server.handshake()
        server.send(bad)
        server.request(7, "ping")
        first = server.next()
        assert "error" in first, f"no error for the bad request; next line: {first!r}"
        assert server.next()["id"] == 7
        assert server.proc.poll() is None, "the server exited"
