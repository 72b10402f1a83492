"""Review (scan): a credential at the start of a line inside JSON-escaped text is still found.

Every prefix rule refuses a token glued to a longer identifier (`xghp_...`): the character
before it must not be a letter or digit. In JSON (an API response web_fetch returns, a
JSON-lines log, a config blob holding a multi-line .env), a line break is the two characters
backslash + "n", so a token that starts a line sits right after an "n" and was taken as glued:
`"A=1\\nghp_..."` showed the token in full. The same for `\\t`, `\\r`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest


from assistant.secrets.scanner import Scanner  # noqa: E402

from leak_corpus import fake_tokens  # noqa: E402

TOKENS = [(rule, tok) for rule, toks in fake_tokens().items() for tok in toks if rule != "private-key"]


@pytest.mark.parametrize("rule,token", TOKENS, ids=[f"{r}-{i}" for i, (r, _) in enumerate(TOKENS)])
@pytest.mark.parametrize("sep", ["\n", "\t", "\r\n"], ids=["lf", "tab", "crlf"])
def test_token_after_an_escaped_line_break_is_redacted(rule, token, sep):
    text = json.dumps({"env": "HOME=/home/me" + sep + token + sep + "EDITOR=vi"})
    shown = Scanner({}).redact(text)
    assert token not in shown
    assert f"[redacted:{rule}]" in shown
    assert "HOME=/home/me" in shown and "EDITOR=vi" in shown


@pytest.mark.parametrize("text", ["\\nxghp_" + "Ab3" * 12, "glued_ghp_" + "Ab3" * 12, "\\n" + "my" + "AKIA" + "Q7" * 8])
def test_a_token_glued_to_an_identifier_is_still_not_one(text):
    assert Scanner({}).find(text) == []
