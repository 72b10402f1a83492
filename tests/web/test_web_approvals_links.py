"""The signed links and the notify template: every field a link is made from is bound by its
signature, the placeholders are filled in one pass, and [approvals] web_url / push are checked."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

import pytest

from assistant.approvals.links import ACTIONS, LinkClaim, load_signer
from assistant.workspace.config import ConfigError, parse
from policy.notify import fill


@dataclass(frozen=True)
class Req:
    id: str = "0123456789ab"
    sha256: str = "a" * 64
    expires: float = 2_000_000_000.7


def test_each_field_of_a_link_is_bound(tmp_path):
    signer = load_signer(tmp_path / "state", "https://example.net/assistant")
    req = Req()
    url = signer.url(req, "approve")
    assert url.startswith("https://example.net/assistant/r/0123456789ab/approve?exp=2000000000&sig=")
    sig = url.split("sig=")[1]
    good = LinkClaim(req.id, req.sha256, 2_000_000_000, "approve")
    assert signer.check(good, sig)
    for other in (LinkClaim("0123456789ac", req.sha256, 2_000_000_000, "approve"),
                  LinkClaim(req.id, "b" + "a" * 63, 2_000_000_000, "approve"),
                  LinkClaim(req.id, req.sha256, 2_000_000_001, "approve"),
                  LinkClaim(req.id, req.sha256, 2_000_000_000, "deny"),
                  LinkClaim(req.id, req.sha256, 2_000_000_000, "show")):
        assert not signer.check(other, sig)
    for bad in ("", sig[:-1], sig + "A", sig.upper(), "x" * 43, None):
        assert not signer.check(good, bad)
    # another workspace's key signs differently
    assert not load_signer(tmp_path / "other", "").check(good, sig)
    assert set(signer.urls(req)) == {f"{a}_url" for a in ACTIONS}
    assert signer.urls(req)["show_url"] != signer.urls(req)["deny_url"]


def test_the_key_is_0600_and_kept(tmp_path):
    s1 = load_signer(tmp_path / "state")
    key = tmp_path / "state" / "approval_links.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_size == 32
    s2 = load_signer(tmp_path / "state")
    claim = LinkClaim("0123456789ab", "a" * 64, 1, "show")
    assert s2.check(claim, s1.signature(claim))
    # a key others could read is not used: a new one replaces it (old links die)
    os.chmod(key, 0o644)
    s3 = load_signer(tmp_path / "state")
    assert not s3.check(claim, s1.signature(claim))
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_csrf_tokens_are_bound_to_their_nonce(tmp_path):
    signer = load_signer(tmp_path / "state")
    token = signer.csrf_token("n" * 43)
    assert signer.check_csrf("n" * 43, token)
    assert not signer.check_csrf("m" * 43, token) and not signer.check_csrf("", token)
    # a CSRF token is never a link signature (separate labels under one key)
    assert not signer.check(LinkClaim("n" * 43, "", 0, "show"), token)


def test_placeholders_are_filled_in_one_pass():
    links = {"show_url": "https://h/r/1/show?exp=1&sig=S", "approve_url": "https://h/r/1/approve?exp=1&sig=A",
             "deny_url": "https://h/r/1/deny?exp=1&sig=D"}
    argv = ["cmd", "{summary}", "see {show_url}", "{approve_url}", "{deny_url}", "{other}"]
    out = fill(argv, "write {deny_url}\u202e now", links)
    assert out == ["cmd", "write {deny_url}\\u202e now", "see https://h/r/1/show?exp=1&sig=S",
                   "https://h/r/1/approve?exp=1&sig=A", "https://h/r/1/deny?exp=1&sig=D", "{other}"]
    assert fill(["{approve_url}"], "x", None) == [""]          # no links: empty, never the raw placeholder


def _approvals(**values):
    return parse({"approvals": values}, "config.toml")


def test_web_url_and_push_are_checked():
    cfg = _approvals(web_url="https://example.net/assistant/", push=["ntfys://ntfy.sh/topic"],
                     notify=["notify-send", "{show_url}"])
    assert cfg.approvals.web_url == "https://example.net/assistant" and cfg.approvals.push == ("ntfys://ntfy.sh/topic",)
    for bad in ("ftp://x", "http://u:p@h", "http://h/?a=1", "http://h/#f", "http:///nohost", "http://h/a b",
                'http://h/"x', "http://h:99999"):
        with pytest.raises(ConfigError, match="approvals.web_url"):
            _approvals(web_url=bad).approvals
    with pytest.raises(ConfigError) as exc:
        _approvals(push=["pover://user@SECRETTOKEN now"]).approvals
    assert "approvals.push" in str(exc.value) and "SECRETTOKEN" not in str(exc.value)
    with pytest.raises(ConfigError, match="need"):
        _approvals(notify=["notify-send", "{approve_url}"]).approvals
