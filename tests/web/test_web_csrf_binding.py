"""The approval page's CSRF tokens are bound to the browser's binding, the request and the
action: a token made for any other one of the three is refused (assistant.approvals.links)."""

from __future__ import annotations

from assistant.approvals.links import LinkSigner


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
