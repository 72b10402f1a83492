"""Review 23, attack 7: small twists of the cheap encodings the scanner covers went through.

A memory write carried the vault value as rot13 in lower or upper case, HTML numeric references
without their `;`, zero-padded or for one character only, a byte list joined by `;`, hex bytes
joined by `:`, the UTF-16 bytes as hex, or base32 in the base32hex alphabet: none was refused and
a hand edit holding one was read back unredacted. Each is now refused on the way in and redacted
on the way out, over its whole span.
"""

from __future__ import annotations

import base64
import codecs

import pytest

from secrets_support import assert_refused_in_redacted_out, vault_value_session

from assistant.secrets.scanner import Scanner

KEY = "sk-" + "srv-" + "Hq4nW8zR" + "Lp2vXc6T"        # the model server's API key, in the vault
NAME = "SERVER_KEY"
RAW = KEY.encode()
_B32HEX = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789ABCDEFGHIJKLMNOPQRSTUV")

TWISTS = {
    "rot13-lower": codecs.encode(KEY, "rot13").lower(),
    "rot13-upper": codecs.encode(KEY, "rot13").upper(),
    "reversed-lower": KEY[::-1].lower(),
    "html-decimal-no-semicolon": "".join(f"&#{ord(c)}" for c in KEY),
    "html-decimal-zero-padded": "".join(f"&#{ord(c):05d};" for c in KEY),
    "html-hex-zero-padded": "".join(f"&#x{ord(c):04x};" for c in KEY),
    "html-one-character": KEY[:6] + f"&#{ord(KEY[6])};" + KEY[7:],
    "html-hex-one-character": KEY[:9] + f"&#X{ord(KEY[9]):X}" + KEY[10:],
    "decimal-list-semicolon": ";".join(str(b) for b in RAW),
    "hex-colon": ":".join(f"{b:02x}" for b in RAW),
    "hex-colon-upper": ":".join(f"{b:02X}" for b in RAW),
    "hex-list-semicolon": "; ".join(f"0x{b:02x}" for b in RAW),
    "utf16le-hex": KEY.encode("utf-16-le").hex(),
    "utf16be-hex": KEY.encode("utf-16-be").hex().upper(),
    "base32hex": base64.b32encode(RAW).decode().translate(_B32HEX),
    "base32hex-lower-inside": base64.b32encode(b"tok=" + RAW).decode().translate(_B32HEX).lower().rstrip("="),
}


@pytest.fixture
def session(tmp_path):
    s = vault_value_session(tmp_path, NAME, KEY)
    yield s
    s.close()


@pytest.mark.parametrize("twist", list(TWISTS))
def test_each_twisted_encoding_is_refused_on_the_way_in_and_redacted_on_the_way_out(session, twist):
    assert_refused_in_redacted_out(session, TWISTS[twist], NAME)


@pytest.mark.parametrize("twist", [t for t in TWISTS if not t.endswith("-inside")])
def test_the_redaction_covers_the_whole_twisted_form(twist):
    red = Scanner({NAME: KEY}).redact(f"<<{TWISTS[twist]}>>")
    assert red.startswith("<<") and red.endswith(">>")
    rest = red[2:-2].replace(f"[redacted:{NAME}]", "")
    assert len(rest) < 8, (twist, rest)


def test_html_references_and_other_values_in_the_same_forms_are_not_findings():
    other = "sk-" + "srv-" + "Zz1aYy2b" + "Xx3cWw4d"
    text = "\n".join([
        "Fish &#38; chips, &#x26; more; &#0; &#xD800; &#99999999; plain text",
        codecs.encode(other, "rot13").lower(), "".join(f"&#{ord(c)}" for c in other),
        ":".join(f"{b:02x}" for b in other.encode()), other.encode("utf-16-le").hex(),
        base64.b32encode(other.encode()).decode().translate(_B32HEX)])
    assert Scanner({NAME: KEY}).find(text) == []
    assert Scanner({NAME: KEY}).redact(text) == text
