"""policy.engine.decide: the order of a ruling, grants, session grants, fail-closed grants."""

import pytest

from policy.engine import Session, decide
from policy.grants import GrantStore
from policy.kinds import PolicyConfigError


def test_root_policy_per_mode():
    s = Session("r1", inline=True)
    assert decide("memory", "people/lina.md", "watched", s).verdict == "allow"
    assert decide("memory", "people/lina.md", "unattended", s).verdict == "ask"
    assert decide("file", "out.txt", "unattended", s).verdict == "allow"
    r = decide("net", "example.com", "watched", s)
    assert (r.verdict, r.channel) == ("ask", "inline")
    r = decide("net", "example.com", "unattended", s)
    assert (r.verdict, r.channel) == ("ask", "out_of_band")
    assert [o.scope for o in r.offers] == ["once", "run", "exact"]


def test_invalid_input_is_deny_with_reason():
    s = Session("r1")
    r = decide("memory", "../etc/passwd", "watched", s)
    assert r.verdict == "deny" and "invalid target" in r.reason and "'..'" in r.reason
    assert decide("shell", "ls", "watched", s).verdict == "deny"
    assert decide("memory", "a.md", "sleepy", s).verdict == "deny"


def test_tightened_config_denies_even_with_a_grant(tmp_path):
    store = GrantStore(tmp_path / "grants.json")
    store.add("memory", "people/*")
    s = Session("r1", grants=store, policy={"memory_unattended": "deny"})
    r = decide("memory", "people/lina.md", "unattended", s)
    assert r.verdict == "deny" and "memory_unattended" in r.reason


def test_config_cannot_loosen():
    with pytest.raises(PolicyConfigError):
        Session("r1", policy={"memory_unattended": "allow"})


def test_durable_and_run_grants(tmp_path):
    store = GrantStore(tmp_path / "grants.json")
    s = Session("r1", grants=store)
    assert decide("memory", "people/x.md", "unattended", s).verdict == "ask"
    store.add("memory", "people/*")
    r = decide("memory", "people/x.md", "unattended", s)
    assert r.verdict == "allow" and "people/*" in r.reason
    assert decide("memory", "people/sub/x.md", "unattended", s).verdict == "ask"
    s.grant_for_run("memory", "people/sub/x.md")
    r = decide("memory", "people/sub/x.md", "unattended", s)
    assert r.verdict == "allow" and "run r1" in r.reason
    # a new run does not inherit it
    assert decide("memory", "people/sub/x.md", "unattended", Session("r2", grants=store)).verdict == "ask"


def test_corrupt_grants_means_no_grants_and_says_so(tmp_path):
    path = tmp_path / "grants.json"
    store = GrantStore(path)
    store.add("memory", "people/*")
    store.add("net", "example.com")
    path.write_text('{"version": 9, "grants": [{"kind": "memory", "target": "*"}]}')
    s = Session("r1", grants=store, inline=True)
    for kind, target, mode in [("memory", "people/x.md", "unattended"), ("net", "example.com", "watched"),
                               ("net", "example.com", "unattended")]:
        r = decide(kind, target, mode, s)
        assert r.verdict == "ask", (kind, r)
        assert "grants.json unreadable" in r.reason and "unknown version 9" in r.reason


def test_ask_with_nobody_to_ask_is_deny(tmp_path):
    r = decide("memory", "people/x.md", "unattended", Session("r1", channel="none"))
    assert r.verdict == "deny" and "channel is 'none'" in r.reason
    r = decide("net", "example.com", "watched", Session("r1", inline=False))
    assert r.verdict == "deny" and "inline" in r.reason
    (tmp_path / "grants.json").write_text("{")
    r = decide("memory", "people/x.md", "unattended",
               Session("r1", channel="none", grants=GrantStore(tmp_path / "grants.json")))
    assert r.verdict == "deny" and "grants.json unreadable" in r.reason
