"""Review (scan): the "every subdomain" offer for a net target must never cover IP addresses.

A host whose last label is a number ("evil.0.0.1") is no DNS name (no top-level domain is
numeric; the WHATWG URL standard parses such a host as IPv4 and fails it), but web_fetch
accepted it and the approval offered `*.0.0.1`, a grant which policy matching applies to
127.0.0.1, 10.0.0.1, 192.0.0.1...: one "subdomain" approval and the model reaches this
machine's loopback services without being asked again.
"""

from __future__ import annotations

import pytest

from assistant.tools.base import ToolError
from assistant.tools.web import fetch_target as web_target
from policy.kinds import DIR, offers
from policy.match import match


@pytest.mark.parametrize("target", ["evil.0.0.1", "x.168.0.5", "a.b.1", "a.b.1:8080", "foo.10", "a.b.0x7f"])
def test_no_subdomain_offer_for_a_host_ending_in_a_number(target):
    wider = [o.pattern for o in offers("net", target) if o.scope == DIR]
    assert wider == []


def test_the_offer_this_replaces_covered_loopback():
    # what was offered for evil.0.0.1 before: a grant that matches the loopback address
    assert match("*.0.0.1", "127.0.0.1")


@pytest.mark.parametrize("host", ["evil.0.0.1", "a.b.1", "foo.10", "x.0x7f", "a.1.2.3"])
def test_web_fetch_refuses_a_host_ending_in_a_number(host):
    with pytest.raises(ToolError, match="number"):
        web_target(f"http://{host}/")


@pytest.mark.parametrize("host", ["example.com", "a1.example.com", "1.example.com", "127.0.0.1", "x.b2"])
def test_ordinary_hosts_are_unaffected(host):
    assert web_target(f"http://{host}/")[0] == host
