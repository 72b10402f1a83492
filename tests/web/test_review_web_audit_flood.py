# review (web approvals, 2026-12-01): a flood of wrong-login refusals used up one global audit budget and silenced a tampered link's and a login's audit lines
"""Review (hostile), approval page: anyone who can reach the port can silence its audit lines.

Found in review: refusal and login lines of the approval page share one global budget of
AUDIT_PER_MINUTE (30) lines a minute, whoever causes them. A client with no credential at all
sends 30 requests with a wrong login token (each one audited), and for the rest of that minute a
tampered link gets its refusal page but no audit line, and a login with the (stolen) serve token
is not audited either. The brief promises "tampered, replayed, expired or cross-request links
refused with a clear page and an audit line".
Real `assistant approvals serve` on loopback.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))

from web_approvals_support import Serve, audit_events, file_request, links, make_ws  # noqa: E402


def test_unauthenticated_flood_does_not_hide_a_tampered_link_or_a_login(tmp_path):
    ws = make_ws(tmp_path)
    req = file_request(ws, "Ana likes tea.\n")
    approve = links(ws, req, "http://x")["approve_url"].replace("http://x", "")
    tampered = approve[:-4] + ("AAAA" if not approve.endswith("AAAA") else "BBBB")
    with Serve(ws) as server:
        with server.client() as noise:               # no credential at all
            for _ in range(30):
                assert noise.get("/login?token=guess").status_code == 403
        with server.client() as thief:
            assert thief.get(tampered).status_code == 403          # refused: a page says so
            assert thief.get(f"/login?token={server.token}").status_code == 303
    events = [e for e in audit_events(ws) if e.get("event") == "web"]
    whys = [e.get("why") for e in events]
    assert "bad link signature" in whys, "the tampered link left no audit line after the flood"
    assert "login with the serve token" in whys, "the login left no audit line after the flood"
