"""The approval page's audit budget: one client's flood of one kind spends only its own budget,
and what is over budget is counted and summed up, never silently dropped."""

from __future__ import annotations

from assistant.web.audit_budget import AuditBudget, kind_of
from web_approvals_support import Serve, audit_events, file_request, links, make_ws


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_flood_spends_only_its_own_client_and_kind():
    clock = Clock()
    budget = AuditBudget(per_minute=3, clock=clock)
    assert [budget.admit("10.0.0.1", "wrong login token").write for _ in range(3)] == [True] * 3
    over = budget.admit("10.0.0.1", "wrong login token")
    assert not over.write and len(over.notes) == 1 and "budget reached" in over.notes[0].why
    assert budget.admit("10.0.0.1", "wrong login token").notes == ()       # said once a minute
    assert budget.admit("10.0.0.1", "bad link signature").write            # another kind
    assert budget.admit("10.0.0.2", "wrong login token").write             # another client
    clock.now += 60
    again = budget.admit("10.0.0.1", "wrong login token")
    assert again.write
    assert [(n.client, n.kind, n.why, n.suppressed) for n in again.notes] == [
        ("10.0.0.1", "wrong login token", "2 refusals suppressed", 2)]


def test_detail_in_parentheses_is_one_kind_and_keys_are_bounded():
    assert kind_of("link for another request (0123456789ab)") == "link for another request"
    budget = AuditBudget(per_minute=1, max_keys=2, clock=Clock())
    assert budget.admit("a", "x").write and budget.admit("b", "x").write
    assert budget.admit("c", "x").write              # the overflow pair's first line
    assert not budget.admit("d", "x").write          # shares the overflow budget
    assert len(budget._windows) == 3                 # two pairs and the overflow, no more


# review (web approvals): a flood of wrong-login refusals used up one global audit budget and silenced a tampered link's and a login's audit lines
def test_unauthenticated_flood_does_not_hide_a_tampered_link_or_a_login(tmp_path):
    """Anyone who can reach the port can silence its audit lines.

    Refusal and login lines of the approval page share one global budget of
    AUDIT_PER_MINUTE (30) lines a minute, whoever causes them. A client with no credential at all
    sends 30 requests with a wrong login token (each one audited), and for the rest of that minute a
    tampered link gets its refusal page but no audit line, and a login with the (stolen) serve token
    is not audited either. The brief promises "tampered, replayed, expired or cross-request links
    refused with a clear page and an audit line".
    Real `assistant approvals serve` on loopback."""
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
