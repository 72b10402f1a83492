# review (web approvals, 2026-12-01): a wildcard --listen turned the Host check off (DNS rebinding served)
"""Review (hostile), approval page: with a wildcard --listen the Host check is off.

Found in review: docs/usage.md says "The server answers only to its own host names (loopback,
the bound address, web_url's host)", and assistant.web.server says a DNS-rebinding page gets a
400. But allowed_hosts() returns None (any host) for `--listen 0.0.0.0:PORT --allow-remote`,
exactly the exposed case, so a page at rebind.attacker.example that resolves to this machine is
answered as if it were the approval page itself (here: a full login).
Real `assistant approvals serve` (bound to 0.0.0.0, reached over loopback only).
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))

from web_approvals_support import Serve, make_ws  # noqa: E402


def test_wildcard_bind_still_refuses_a_foreign_host_name(tmp_path):
    ws = make_ws(tmp_path)
    with Serve(ws, "--allow-remote", listen="0.0.0.0:0") as server:
        port = int(server.base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(f"GET /login?token={server.token} HTTP/1.1\r\nHost: rebind.attacker.example:{port}\r\n"
                      "Connection: close\r\n\r\n".encode())
            status = s.recv(200).split(b"\r\n", 1)[0]
    assert status.startswith(b"HTTP/1.1 400"), f"a foreign Host name was served: {status!r}"
