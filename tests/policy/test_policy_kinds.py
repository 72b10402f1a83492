"""policy.kinds: target forms, the ruling table, config tightening and the widening rule."""

import pytest

from policy.kinds import KINDS, ROOT_POLICY, PolicyConfigError, TargetError, policy_table
from policy.match import match


def scopes(kind, target):
    return {o.scope: o.pattern for o in KINDS[kind].offers(target)}


def test_table_matches_design():
    assert ROOT_POLICY == {
        "memory": {"watched": "allow", "unattended": "ask"},
        "file": {"watched": "allow", "unattended": "allow"},
        "net": {"watched": "ask", "unattended": "ask"},
    }


# --- widening: exactly one step, never * / ** / a grandparent, none at the root
def test_offers_people_lina():
    assert scopes("memory", "people/lina.md") == {
        "once": "people/lina.md", "run": "people/lina.md",
        "exact": "people/lina.md", "dir": "people/*",
    }


def test_offers_nested_is_one_step_only():
    s = scopes("memory", "a/b/c.md")
    assert s["dir"] == "a/b/*"
    assert not match(s["dir"], "a/x.md")        # not the grandparent
    assert not match(s["dir"], "a/b/d/c.md")    # not below


def test_offers_root_note_has_no_dir():
    s = scopes("memory", "top.md")
    assert set(s) == {"once", "run", "exact"}


@pytest.mark.parametrize("target", ["people/lina.md", "a/b/c.md", "top.md", "x/y/z/w.md", "p/[x]*.md"])
def test_no_offer_is_ever_wide(target):
    for offer in KINDS["memory"].offers(target):
        assert offer.pattern not in ("*", "**", "*/*")
        assert match(offer.pattern, target)
        assert "**" not in offer.pattern
        # a wider offer never reaches another folder than the target's own
        assert not match(offer.pattern, "elsewhere/" + target.rsplit("/", 1)[-1])


def test_exact_offer_escapes_metacharacters():
    s = scopes("memory", "p/[x]*.md")
    assert match(s["exact"], "p/[x]*.md") and not match(s["exact"], "p/xyz.md")
    assert s["dir"] == "p/*"


def test_net_offers():
    assert scopes("net", "api.example.com")["dir"] == "*.example.com"
    assert scopes("net", "api.example.com:8443")["dir"] == "*.example.com:8443"
    for no_parent in ("example.com", "10.0.0.1", "[::1]:80", "www.example.co.uk"[4:], "localhost"):
        assert "dir" not in scopes("net", KINDS["net"].normalise(no_parent)), no_parent


def test_file_offers():
    assert scopes("file", "reports/week.txt")["dir"] == "reports/*"
    assert "dir" not in scopes("file", "notes.txt")


# --- target forms
@pytest.mark.parametrize("bad,why", [
    ("", "empty"), ("/etc/x.md", "absolute"), ("a//b.md", "empty component"), ("a/", "empty component"),
    ("../x.md", "'..'"), ("./x.md", "'.'"), (".hidden.md", "dot-leading"), ("a/.git/x.md", "dot-leading"),
    ("a\\b.md", "backslash"), ("a\0.md", "NUL"), ("a\nb.md", "control"), ("a\u202eb.md", "bidirectional"),
    ("people/lina.txt", ".md"), ("/".join(["d"] * 33) + ".md", "deeper"), ("x" * 300 + ".md", "longer"),  # depth 32 (issue 9; was 16)
])
def test_memory_target_refusals(bad, why):
    with pytest.raises(TargetError, match=why):
        KINDS["memory"].normalise(bad)


def test_memory_target_is_kept_exactly():
    assert KINDS["memory"].normalise("people/Lina Ölund.md") == "people/Lina Ölund.md"


@pytest.mark.parametrize("raw,norm", [
    ("Example.COM", "example.com"), ("example.com.", "example.com"), ("example.com:0443", "example.com:443"),
    ("[::0001]:80", "[::1]:80"), ("bücher.de", "xn--bcher-kva.de"), ("10.0.0.1:8080", "10.0.0.1:8080"),
])
def test_net_normalise(raw, norm):
    assert KINDS["net"].normalise(raw) == norm


@pytest.mark.parametrize("bad", ["", "http://x.com/", "x.com:0", "x.com:70000", "x.com:ab", "a b.com",
                                 "user@x.com", "::1", "[zz]:80", "-x.com", "x..com"])
def test_net_refusals(bad):
    with pytest.raises(TargetError):
        KINDS["net"].normalise(bad)


# --- config may only tighten
def test_tighten_cells():
    t = policy_table({"memory_unattended": "deny", "file_unattended": "ask", "memory_watched": "ask"})
    assert t[("memory", "unattended")].verdict == "deny"
    assert "memory_unattended" in t[("memory", "unattended")].why
    assert t[("file", "unattended")].verdict == "ask"
    assert t[("net", "watched")].verdict == "ask"


@pytest.mark.parametrize("cfg,why", [
    ({"memory_unattended": "allow"}, "loosen"),
    ({"net_watched": "allow"}, "loosen"),
    ({"memory_unatended": "deny"}, "unknown setting"),
    ({"memory_watched": "maybe"}, "must be"),
    ({"memory_watched": True}, "must be"),
])
def test_bad_policy_config(cfg, why):
    with pytest.raises(PolicyConfigError, match=why):
        policy_table(cfg)
