# review (web approvals, 2026-12-01): an upper-case HTTPS:// web_url dropped the Secure flag from the session cookie
"""Review (hostile), approval page: `HTTPS://` in web_url drops the Secure cookie flag.

Found in review: config accepts [approvals] web_url by urlsplit (whose scheme is lower-cased,
so "HTTPS://host" is valid https), but `serve` decides Secure cookies with
`web_url.startswith("https://")`. With web_url = "HTTPS://assistant.example.net" (a TLS proxy
in front, as the docs advise) the session cookie is set without Secure, so a browser sends
the 12-hour session on any plain-http request to that host (e.g. an http:// link an attacker
on the path injects).
Real `assistant approvals serve` on loopback.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))

from web_approvals_support import Serve, make_ws, set_approvals  # noqa: E402


def test_uppercase_https_web_url_still_gives_secure_cookies(tmp_path):
    ws = make_ws(tmp_path)
    set_approvals(ws, 'web_url = "HTTPS://assistant.example.net"\nnotify = []')
    with Serve(ws) as server, server.client() as c:
        r = c.get(f"/login?token={server.token}", headers={"Host": "assistant.example.net"})
    assert r.status_code == 303
    cookie = r.headers.get("set-cookie", "")
    assert "assistant_session=" in cookie
    assert "secure" in cookie.lower(), f"web_url is https (upper case) but the session cookie is not Secure: {cookie}"
