"""Test support (no tests here): a real HTTP server on 127.0.0.1 for a test to talk to (a model
server that misbehaves, a hub, a push receiver, a page to fetch). Never a mock: the code under
test opens a real socket."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator


def start_http(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """Serve `handler` on 127.0.0.1 at a free port (server_address[1]) from a daemon thread, one
    daemon thread per request; stop it with stop_http."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stop_http(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()


@contextmanager
def http_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    """start_http for the length of a `with` block."""
    server = start_http(handler)
    try:
        yield server
    finally:
        stop_http(server)
