"""`assistant approvals serve`: idle connections are bounded without locking the person out.
A connection that sends no request is closed after the first-request deadline, and past the
connection cap the oldest idle one makes room for a newcomer. Real server on loopback."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from web_approvals_support import Serve, make_ws  # noqa: E402

from assistant.web.server import FIRST_REQUEST_TIMEOUT, MAX_IN_FLIGHT  # noqa: E402


def _login_status(port: int, token: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"GET /login?token={token} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        return s.recv(200).split(b"\r\n", 1)[0]


def test_a_silent_connection_is_closed_and_a_crowd_of_them_does_not_lock_out(tmp_path):
    ws = make_ws(tmp_path)
    with Serve(ws) as server:
        port = int(server.base.rsplit(":", 1)[1])
        silent = socket.create_connection(("127.0.0.1", port), timeout=FIRST_REQUEST_TIMEOUT + 10)
        try:
            assert silent.recv(100) == b""        # closed by the server (a timeout raises: a failure)
        finally:
            silent.close()
        crowd = []
        try:
            # more than uvicorn would serve at once (it answers 503 past MAX_IN_FLIGHT open
            # connections): the oldest idle ones are closed to keep MAX_CONNECTIONS
            for _ in range(MAX_IN_FLIGHT + 20):
                crowd.append(socket.create_connection(("127.0.0.1", port), timeout=10))
            assert _login_status(port, server.token).startswith(b"HTTP/1.1 303")
        finally:
            for s in crowd:
                s.close()


# review (web approvals): 64 idle connections (no request sent) locked everyone out with 503
def test_idle_connections_do_not_lock_out_the_login(tmp_path):
    """Review (hostile), approval page: 64 idle connections lock the person out.

    `serve` caps connections at 64 (uvicorn limit_concurrency) and counts every
    open TCP connection, including ones that have sent nothing. A client with no credential opens
    64 connections and sends nothing (each lives CONNECTION_LIFETIME = 30 s; it simply reconnects):
    every other request, the person's login or signed link included, gets "503 Service
    Unavailable" at once. Requests then expire to deny (fail closed), but an unauthenticated
    client on the path (or anyone with --allow-remote) decides that nothing can ever be approved.
    Real `assistant approvals serve` on loopback."""
    ws = make_ws(tmp_path)
    with Serve(ws) as server:
        port = int(server.base.rsplit(":", 1)[1])
        idle = []
        try:
            for _ in range(64):
                idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            time.sleep(0.5)
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(f"GET /login?token={server.token} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Connection: close\r\n\r\n".encode())
                status = s.recv(200).split(b"\r\n", 1)[0]
        finally:
            for s in idle:
                s.close()
    assert status.startswith(b"HTTP/1.1 303"), f"the login was refused while idle sockets were open: {status!r}"
