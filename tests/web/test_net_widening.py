"""The "every subdomain" offer of a net approval never puts a wildcard at or above a
registrable domain, by the Public Suffix List with its private section (issue 10 item 10)."""

from __future__ import annotations

import pytest

from policy.hosts import registrable_domain
from policy.kinds import DIR, offers


def wider(target: str) -> str | None:
    found = [o.pattern for o in offers("net", target) if o.scope == DIR]
    return found[0] if found else None


@pytest.mark.parametrize("target", [
    "alice.github.io",            # private section: github.io is a public suffix
    "myapp.herokuapp.com",
    "project.pages.dev",
    "bucket.s3.amazonaws.com",
    "example.co.uk",              # ICANN: co.uk
    "example.com",
    "example.com:8443",
    "city.kawasaki.jp",           # exception rule in the list: registrable itself
    "printer.lan",                # unknown TLD: the default rule "*" makes it a suffix
    "localhost",
    "127.0.0.1:8080",
    "[::1]:9000",
])
def test_no_wildcard_at_or_above_a_registrable_domain(target):
    assert wider(target) is None


@pytest.mark.parametrize("target,pattern", [
    ("www.example.co.uk", "*.example.co.uk"),
    ("api.example.com", "*.example.com"),
    ("api.example.com:8443", "*.example.com:8443"),
    ("a.b.example.com", "*.b.example.com"),
    ("blog.alice.github.io", "*.alice.github.io"),   # under a registrable domain: fine
    ("x.myapp.herokuapp.com", "*.myapp.herokuapp.com"),
])
def test_wildcard_below_a_registrable_domain_is_offered(target, pattern):
    assert wider(target) == pattern


def test_never_a_public_suffix_whatever_the_depth():
    for target in ("a.b.github.io", "www.example.co.uk", "deep.a.b.c.example.com", "q.alice.pages.dev"):
        w = wider(target)
        assert w is not None and w.startswith("*.")
        assert registrable_domain(w[2:].split(":")[0]) is not None


def test_registrable_domain_reads_the_private_section():
    assert registrable_domain("alice.github.io") == "alice.github.io"
    assert registrable_domain("github.io") is None
    assert registrable_domain("www.example.co.uk") == "example.co.uk"
    assert registrable_domain("co.uk") is None
