"""The approval page's CSRF tokens are bound to the browser's binding, the request and the
action: a token made for any other one of the three is refused (assistant.approvals.links)."""

from __future__ import annotations

from assistant.approvals.links import LinkSigner
from web_approvals_support import Serve, file_request, forms, links, make_ws


def test_a_csrf_token_answers_only_its_own_request_action_and_session():
    signer = LinkSigner(b"k" * 32)
    token = signer.csrf_token("session:aa", "0123456789ab", "approve")
    assert signer.check_csrf("session:aa", token, "0123456789ab", "approve")
    for binding, rid, action in (("session:bb", "0123456789ab", "approve"),   # another session
                                 ("nonce:aa", "0123456789ab", "approve"),     # the same text as a nonce
                                 ("session:aa", "ba9876543210", "approve"),   # another request
                                 ("session:aa", "0123456789ab", "deny"),      # another action
                                 ("", "0123456789ab", "approve")):            # no binding at all
        assert not signer.check_csrf(binding, token, rid, action), (binding, rid, action)


# review (web approvals): the CSRF token was bound only to its own (plantable) cookie nonce, so a token from another request's link answered in a login session
def test_token_from_another_link_does_not_answer_in_a_login_session(tmp_path):
    """The CSRF token is bound to nothing but its own cookie.

    The form token is MAC(key, nonce) where nonce is whatever the browser's
    assistant_csrf cookie says; it is bound neither to the login session nor to the request nor to
    the link. So a pair (nonce, token) that someone got from ANY page (here: the page of a deny-only
    link for another request) answers every request in every logged-in browser whose CSRF cookie is
    set to that nonce, and the cookie is not rotated at login. Cookies are not isolated by port:
    any other web service on 127.0.0.1 can set assistant_csrf for the victim's browser (cookie
    tossing), and its pages are same-site, so the SameSite=Strict session cookie goes along.
    Signed double-submit tokens must be bound to the session.
    Real `assistant approvals serve` on loopback."""
    ws = make_ws(tmp_path)
    other = file_request(ws, "unrelated\n", target="people/bob.md")
    victim_req = file_request(ws, "Ana's doctor is Dr X.\n", target="people/ana.md")
    deny_only = links(ws, other, "http://x")["deny_url"].replace("http://x", "")
    with Serve(ws) as server:
        with server.client() as attacker:           # holds only a deny link for another request
            _action, fields = forms(attacker.get(deny_only).text)["deny"]
            nonce, token = attacker.cookies.get("assistant_csrf"), fields["csrf"]
        with server.client() as victim:
            victim.cookies.set("assistant_csrf", nonce)  # tossed by a same-site page before login
            assert victim.get(f"/login?token={server.token}").status_code == 303
            r = victim.post(f"/r/{victim_req.id}/approve",
                            data={"csrf": token, "sha256": victim_req.sha256, "remember": "exact"})
    assert r.status_code == 403, f"a CSRF token from another request's deny link answered: {r.status_code}"
