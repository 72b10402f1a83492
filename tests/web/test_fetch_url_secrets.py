"""Review (scan): web_fetch must refuse a URL carrying a vault value before anyone is asked,
whatever spelling of it reaches the wire, and must contact only the host spelling it checked.

Found by attacking the real tool against a real vault and loopback servers:
- the URL was scanned as the model wrote it, but its host is then NFKC/IDNA-normalised: a
  value written in full-width letters (or with superscript digits, ligatures...) in a host
  label passed the scan and became the exact value in the DNS query and the Host header;
- the percent-decoding stopped after three layers: five layers of quote() passed;
- an IPv4-mapped IPv6 literal ([::ffff:7f00:1]) was asked about as that spelling while the
  connection reached 127.0.0.1 (the legacy IPv4 spellings are already refused).
"""

from __future__ import annotations

import sys
import urllib.parse
from pathlib import Path

import pytest


from assistant.tools.base import ToolError  # noqa: E402
from assistant.tools.registry import tools_by_name  # noqa: E402
from assistant.tools.web import SecretInUrl, fetch_target  # noqa: E402

from e2e_support import Site, make_ws  # noqa: E402

# fake vault values, assembled at run time; LOWER is all lower case and digits, so it can
# sit in a host name exactly as stored
LOWER = "quokka" + "lantern" + "7731"
MIXED = "p@ss/w0rd!" + "Quokka" + " 77"


@pytest.fixture
def session(tmp_path, sessions):
    made = []

    def make(asked=None, answer="once"):
        log = asked if asked is not None else []

        def ask(q):
            log.append(q)
            return answer

        made.append(sessions(make_ws(tmp_path / f"s{len(made)}"), inline_ask=ask,
                             vault={"LOWER": LOWER, "MIXED": MIXED}))
        return made[-1]

    return make


def fetch(parts, url):
    return tools_by_name(parts.tools)["web_fetch"].run({"url": url}, parts.ctx)


def _fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if 33 <= ord(c) < 127 else c for c in s)


@pytest.mark.parametrize("spell", [
    _fullwidth,                                            # ｑｕｏｋｋａ... -> quokka...
    lambda s: s.replace("7", "\u2077"),                    # superscript seven -> 7
    lambda s: s.upper(),                                   # hosts are case-folded
    lambda s: s[:6] + "\u00ad" + s[6:],                    # a soft hyphen IDNA drops
], ids=["fullwidth", "superscript", "upper", "soft-hyphen"])
def test_vault_value_spelled_for_the_host_normaliser_is_refused_before_asking(session, spell):
    asked: list = []
    parts = session(asked=asked)
    url = f"http://{spell(LOWER)}.localhost:9/"
    assert LOWER in fetch_target(url)[0]          # what would be looked up and sent as Host
    with pytest.raises(SecretInUrl) as info:
        fetch(parts, url)
    msg = str(info.value)
    assert LOWER not in msg and "LOWER" not in msg
    assert asked == []                          # nobody was asked


def test_five_layers_of_percent_encoding_are_seen_through(session, loopback_site):
    asked: list = []
    site = loopback_site({})      # conftest: closed at teardown
    parts = session(asked=asked)
    enc = MIXED
    for _ in range(5):
        enc = urllib.parse.quote(enc, safe="")
    with pytest.raises(SecretInUrl):
        fetch(parts, site.url("/search?q=" + enc))
    assert asked == [] and site.seen_headers == []


@pytest.mark.parametrize("literal", ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:7f00:1]"])
def test_ipv4_mapped_ipv6_spelling_is_refused(session, literal, loopback_site):
    """The gate would rule on '[::ffff:7f00:1]' while the socket reaches 127.0.0.1: one host,
    two spellings. Like 127.1 or 0x7f.1, it is refused with the spelling to use instead."""
    asked: list = []
    site = loopback_site({"/": (200, {"Content-Type": "text/plain"}, b"reached")})      # conftest: closed at teardown
    parts = session(asked=asked)
    with pytest.raises(ToolError, match="IPv4"):
        fetch(parts, f"http://{literal}:{site.port}/")
    assert asked == [] and site.seen_headers == []
