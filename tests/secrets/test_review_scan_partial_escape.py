"""Review s5: a vault value with only some characters escaped (JSON `\\u002d`, `%2D`, `\\x2d`)
is not found, though every JSON / URL / C decoder reads it as the value.

The scanner indexes "every character escaped" and "only what the encoder must escape", and
drops backslashes from the view: `Zq7\\u002dPlum-Orbit-9931` becomes `Zq7u002dPlum...`,
matching neither. A model writes `{"k": "Zq7\\u002dPlum-Orbit-9931"}` into a note and the gate
lets it through. Promise (brief, docs/vault.md): blocked however spelled, JSON-escaped included.
"""

from __future__ import annotations

import json
import urllib.parse

import pytest

from assistant.secrets.scanner import Scanner

SECRET = "Zq7-Plum-Orbit-9931"

CASES = {
    "json-one-u-escape": '{"k": "Zq7\\u002dPlum-Orbit-9931"}',
    "json-letter-escaped": '{"k": "\\u005aq7-Plum-Orbit-9931"}',
    "percent-one-byte": "https://x.example/?k=Zq7%2DPlum-Orbit-9931",
}


@pytest.mark.parametrize("text", list(CASES.values()), ids=list(CASES))
def test_partly_escaped_value_is_found(text):
    decoded = (json.loads(text)["k"] if text.startswith("{")
               else urllib.parse.unquote(text.split("k=")[1]))
    assert decoded == SECRET        # what any reader of this text gets
    shown = Scanner({"bank": SECRET}).redact(text)
    assert "[redacted:bank]" in shown, shown
