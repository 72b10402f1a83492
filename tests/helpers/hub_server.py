"""Test support: a loopback Hugging Face-style hub serving files from memory or disk, the way the
hub's resolve endpoint answers (HEAD with X-Repo-Commit / ETag / X-Linked-Etag / X-Linked-Size,
GET with Range), recording each request."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from loopback import start_http, stop_http
from recording_server import QuietHandler

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class Hub:
    def __init__(self, files: dict[str, Path], *, lie_sha: bool = False, cut_after: int | None = None):
        self.files = files            # "owner/name/file" -> path on disk
        self.requests: list[tuple[str, str, str | None]] = []
        self.lie_sha = lie_sha
        self.cut_after = cut_after    # first GET stops after this many bytes (then resume works)
        self._sha = {k: hashlib.sha256(p.read_bytes()).hexdigest() for k, p in files.items()}
        hub = self

        class Handler(QuietHandler):
            def _find(self):
                m = re.match(r"^/(?:api/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)$", self.path.split("?")[0])
                if not m:
                    return None, None
                key = f"{m.group(1)}/{m.group(3)}"
                return key, hub.files.get(key)

            def _head(self, key, path):
                size = path.stat().st_size
                sha = "f" * 64 if hub.lie_sha else hub._sha[key]
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{sha}"')
                self.send_header("X-Linked-Etag", f'"{sha}"')
                self.send_header("X-Linked-Size", str(size))
                self.send_header("Accept-Ranges", "bytes")
                return size

            def _not_found(self):
                self.send_response(404)
                self.send_header("X-Error-Code", "EntryNotFound")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self):
                hub.requests.append(("HEAD", self.path, None))
                key, path = self._find()
                if path is None:
                    return self._not_found()
                self.send_response(200)
                size = self._head(key, path)
                self.send_header("Content-Length", str(size))
                self.end_headers()

            def do_GET(self):
                rng = self.headers.get("Range")
                hub.requests.append(("GET", self.path, rng))
                key, path = self._find()
                if path is None:
                    return self._not_found()
                data = path.read_bytes()
                start = 0
                if rng:
                    m = re.match(r"bytes=(\d+)-", rng)
                    start = int(m.group(1)) if m else 0
                body = data[start:]
                self.send_response(206 if start else 200)
                self._head(key, path)
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if hub.cut_after is not None:
                    n, hub.cut_after = hub.cut_after, None
                    self.wfile.write(body[:n])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                view = memoryview(body)
                for i in range(0, len(view), 1 << 20):
                    self.wfile.write(view[i:i + (1 << 20)])

        self.httpd = start_http(Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        stop_http(self.httpd)
