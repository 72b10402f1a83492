"""Review s5: a vault value holding non-ASCII letters is not found in its canonically
decomposed (NFD) spelling, nor is an NFD-stored value found in its usual (NFC) spelling.

`café-Secret-77` with `é` written as `e` + U+0301 renders identically and is NFKC-equal to the
value (NFKC composes it), but the view folds one character at a time, so a combining mark is
never composed with its base. Promise (docs/vault.md, docs/leaks.md): a value in any
compatibility form "NFKC-equal to the value" is blocked and redacted.
"""

from __future__ import annotations

import unicodedata

import pytest

from assistant.secrets.scanner import Scanner

VALUES = ["café-Secret-77", "비밀번호-Secret-77", "Ångström-Key-2024"]


@pytest.mark.parametrize("value", VALUES)
def test_nfd_spelling_of_an_nfc_value_is_redacted(value):
    text = "token: " + unicodedata.normalize("NFD", value) + " end"
    assert unicodedata.normalize("NFKC", text) == "token: " + value + " end"
    assert Scanner({"k": value}).redact(text) == "token: [redacted:k] end"


@pytest.mark.parametrize("value", VALUES)
def test_nfc_spelling_of_an_nfd_stored_value_is_redacted(value):
    stored = unicodedata.normalize("NFD", value)
    assert Scanner({"k": stored}).redact("token: " + value + " end") == "token: [redacted:k] end"
