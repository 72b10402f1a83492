"""Review s5: a vault value whose first letter follows a lone ESC (`ESC Z`: eaten only in the
sequence-free view, which is why the scanner scans a second view with only ESC removed) and
which is also split by a colour code is found in neither view: the first view lost `Z`, the
second keeps `[m`. `\\x1bZq7-Plum-Or\\x1b[mbit-9931` passes the scanner whole, so a note can
carry every character of the value in order; stripping colour codes (the usual
`\\x1b\\[[0-9;]*m`) and reading it anywhere but a VT terminal gives the value back.
Promise (docs/leaks.md "Disguised spellings"): "ESC Z followed by a value" is still seen, and
a value split by escape sequences is found.
"""

from __future__ import annotations

import re

import pytest

from assistant.secrets.scanner import Scanner

SECRET = "Zq7-Plum-Orbit-9931"


@pytest.mark.parametrize("text", [
    "\x1bZq7-Plum-Or\x1b[mbit-9931",
    "note: \x1bZq7\x1b[1m-Plum-Orbit-9931\x1b[0m end",
])
def test_esc_before_the_value_and_a_colour_code_inside_it(text):
    assert SECRET in re.sub(r"\x1b\[[0-9;]*m", "", text).replace("\x1b", "")
    found = [f for f in Scanner({"bank": SECRET}).find(text) if f.rule == "vault"]
    assert found, "the value is not found"
