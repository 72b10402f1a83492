"""Issue 23 item 7: the model server could hand its own API key back encoded.

The raw key was refused, but base32, rot13, upper case, a decimal byte list, HTML entities and
UTF-16 base64 forms of it went through to an approval request and the transcript. Each of these
cheap reversible encodings of a vault value is now one of the scanner's variants: a memory
write carrying it is refused on the way in, and a note holding it (a hand edit) is read back
redacted. What stays uncovered (compression, arbitrary ciphers) is stated in docs/leaks.md.
"""

from __future__ import annotations

import base64
import codecs

import pytest

from secrets_support import assert_refused_in_redacted_out, vault_value_session

from assistant.secrets.scanner import Scanner

KEY = "sk-" + "local-" + "Qm7v2Lx9" + "Tz4pWc8R"        # the model server's API key, in the vault
NAME = "MODEL_API_KEY"


def _b64_utf16(value: str, codec: str) -> str:
    return base64.b64encode(value.encode(codec)).decode()


ENCODINGS = {
    "base32": base64.b32encode(KEY.encode()).decode(),
    "base32-lower": base64.b32encode(KEY.encode()).decode().lower(),
    "base32-unpadded-inside": base64.b32encode(b"key=" + KEY.encode()).decode().rstrip("="),
    "rot13": codecs.encode(KEY, "rot13"),
    "upper": KEY.upper(),
    "lower": KEY.lower(),
    "mixed-case": "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(KEY)),
    "html-decimal": "".join(f"&#{ord(c)};" for c in KEY),
    "html-hex": "".join(f"&#x{ord(c):x};" for c in KEY),
    "html-hex-upper": "".join(f"&#X{ord(c):X};" for c in KEY),
    "decimal-list": ", ".join(str(b) for b in KEY.encode()),
    "decimal-list-brackets": "[" + ",".join(str(b) for b in KEY.encode()) + "]",
    "decimal-list-spaces": " ".join(str(b) for b in KEY.encode()),
    "hex-list": " ".join(f"0x{b:02x}" for b in KEY.encode()),
    "hex-list-comma": ", ".join(f"0x{b:02X}" for b in KEY.encode()),
    "utf16le-base64": _b64_utf16(KEY, "utf-16-le"),
    "utf16be-base64": _b64_utf16(KEY, "utf-16-be"),
    "utf16-bom-base64": _b64_utf16(KEY, "utf-16"),
    "utf16le-base64url-inside": base64.urlsafe_b64encode(("Bearer " + KEY).encode("utf-16-le")).decode(),
}


@pytest.fixture
def session(tmp_path):
    s = vault_value_session(tmp_path, NAME, KEY)
    yield s
    s.close()


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_each_cheap_encoding_is_refused_on_the_way_in_and_redacted_on_the_way_out(session, encoding):
    assert_refused_in_redacted_out(session, ENCODINGS[encoding], NAME)


@pytest.mark.parametrize("encoding", [e for e in ENCODINGS if not e.endswith("-inside")])
def test_the_redaction_covers_the_whole_encoded_form(encoding):
    form = ENCODINGS[encoding]
    red = Scanner({NAME: KEY}).redact(f"<<{form}>>")
    assert red.startswith("<<") and red.endswith(">>")
    rest = red[2:-2].replace(f"[redacted:{NAME}]", "")
    assert len(rest) < 8, (encoding, rest)    # at most a partial edge character or a short lead


def test_other_values_in_those_encodings_are_not_findings():
    other = "sk-" + "local-" + "Zz1aYy2b" + "Xx3cWw4d"
    text = "\n".join(f.replace(KEY, other) if KEY in f else f for f in [
        base64.b32encode(other.encode()).decode(), codecs.encode(other, "rot13"), other.upper(),
        ", ".join(str(b) for b in other.encode()), _b64_utf16(other, "utf-16-le")])
    assert Scanner({NAME: KEY}).find(text) == []
