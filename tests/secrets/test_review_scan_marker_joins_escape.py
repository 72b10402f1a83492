"""Review s5: a vault value right after a lone ESC (`ESC Zq7-...`: the terminal eats `ESC Z`
and shows the rest) is redacted from the value's first letter on, so the ESC is left glued to
the marker: `ESC [redacted:bank]` is the CSI `ESC [ r` (DECSTBM, reset scroll margins) followed
by `edacted:bank]`. Likewise `ESC (` + marker and 8-bit CSI + marker. The redaction creates an
escape sequence that was not in the text and mangles its own marker.
Promise (brief): the redaction replaces exactly the secret's span; no escape sequence that
changes what a terminal shows is left or made by it.
"""

from __future__ import annotations

import re

import pytest

from assistant.secrets.scanner import Scanner

# ECMA-48 CSI (7- and 8-bit) and ESC + intermediates + final, as a terminal parses them.
SEQ = re.compile(r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\x1b[\x20-\x2f]*[\x30-\x7e]")


@pytest.mark.parametrize("lead", ["\x1b", "\x1b(", "\x9b"], ids=["esc", "esc-paren", "c1-csi"])
def test_marker_survives_terminal_parsing(lead):
    shown = Scanner({"bank": "Zq7-Plum-Orbit-9931"}).redact(lead + "Zq7-Plum-Orbit-9931 tail")
    assert "Plum" not in shown
    assert "[redacted:bank]" in SEQ.sub("", shown), repr(shown)
