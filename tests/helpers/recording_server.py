"""Test support: a loopback HTTP server that records each request and answers as told."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

from loopback import start_http, stop_http


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler speaking HTTP/1.1 that logs nothing (test output stays clean)."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass


class Recorder:
    """A loopback HTTP server: `answer(handler, path, body) -> None` writes the reply."""

    def __init__(self, answer):
        self.requests: list[dict] = []
        rec = self

        class Handler(QuietHandler):
            def _handle(self, method):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else None
                rec.requests.append({"method": method, "path": self.path, "headers": dict(self.headers),
                                     "body": body})
                answer(self, self.path, body)

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

        self.httpd = start_http(Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        stop_http(self.httpd)

    def posts(self, path):
        return [r for r in self.requests if r["method"] == "POST" and r["path"] == path]


def send_json(h, obj, status=200):
    data = json.dumps(obj).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


def send_stream(h, lines, ctype="text/event-stream"):
    h.send_response(200)
    h.send_header("Content-Type", ctype)
    h.send_header("Connection", "close")
    h.end_headers()
    for line in lines:
        h.wfile.write(line.encode() + b"\n")
        h.wfile.flush()
    h.close_connection = True


def models(owner, ids=("m1",)):
    return {"object": "list", "data": [{"id": i, "object": "model", "owned_by": owner} for i in ids]}
