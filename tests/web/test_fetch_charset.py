"""Review (scan): a page's declared charset must not pick a Python codec the web never uses.

web_fetch decoded the body with whatever `charset=` the server named, and Python knows
codecs no browser does. `punycode` decodes in quadratic time: 256 KiB (the default
web.max_bytes) of "-aaaa..." took ~1.6 s of CPU after the fetch's deadline had stopped
being checked, and it grows with the square of web.max_bytes. `unicode_escape` and friends
turn the page into something other than its text. Only the web's text encodings are
honoured; anything else is read as UTF-8 (with replacement characters), like a browser would.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


from assistant.session import open_session  # noqa: E402
from assistant.tools.registry import tools_by_name  # noqa: E402
from assistant.workspace.layout import open_workspace  # noqa: E402

from e2e_support import Site, make_ws  # noqa: E402


def _fetch(tmp_path, charset: str, body: bytes) -> str:
    pages = {"/p": (200, {"Content-Type": f"text/plain; charset={charset}"}, body)}
    with Site(pages) as site:
        ws = make_ws(tmp_path / charset.replace("/", "_"))
        with open_session(open_workspace(ws), "watched", kind="test", inline_ask=lambda q: "once") as s:
            return tools_by_name(s.tools)["web_fetch"].run({"url": site.url("/p")}, s.ctx)


@pytest.mark.parametrize("charset", ["punycode", "idna", "unicode_escape", "raw_unicode_escape", "rot13", "base64"])
def test_non_web_codecs_are_not_used(tmp_path, charset):
    body = b"-" + b"a" * 4000 + b" \\u0041 end"
    assert _fetch(tmp_path, charset, body) == body.decode("utf-8")


@pytest.mark.parametrize("charset,text", [
    ("utf-8", "caf\u00e9 \u2603"), ("ISO-8859-1", "caf\u00e9"), ("windows-1252", "caf\u00e9 \u20ac"),
    ("utf-16", "caf\u00e9"), ("shift_jis", "\u65e5\u672c"), ("koi8-r", "\u043f\u0440\u0438"),
])
def test_web_text_encodings_are_honoured(tmp_path, charset, text):
    assert _fetch(tmp_path, charset, text.encode(charset)) == text
