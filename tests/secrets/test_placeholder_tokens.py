"""Issue 23 item 26: placeholder-shaped values that gitleaks' and detect-secrets' test suites
count as false alarms are not findings; real-shaped random tokens of the same families still are.

Before: `xoxp-1234567890`, `xoxp-1-RANDOMSTRINGHERE`, a private-key block whose body is
`anything` and an Anthropic-shaped key built of `abc123xyz-456def...` runs were all findings,
so a note quoting a README's example was refused as a secret.
"""

from __future__ import annotations

import pytest

from leak_corpus import fake_tokens

from assistant.secrets.rules import is_dummy
from assistant.secrets.scanner import Scanner

BEGIN = "-----BEGIN " + "PRIVATE KEY-----"
END = "-----END " + "PRIVATE KEY-----"
ANT = "sk-" + "ant-api03-"

PLACEHOLDERS = [
    "xo" + "xp-1234567890",
    "xo" + "xp-1-RANDOMSTRINGHERE",
    "xo" + "xb-1-YOURTOKENHERE",
    BEGIN + "\nanything\n" + END,
    "-----BEGIN RSA " + "PRIVATE KEY-----\n...\n-----END RSA " + "PRIVATE KEY-----",
    ANT + "abc123xyz-456def789ghi-012jkl345mno-678pqr901stu-234vwx567yza-890bcd",
    ANT + "abc123xyz-456def" * 6 + "AA",
]


@pytest.mark.parametrize("token", PLACEHOLDERS, ids=range(len(PLACEHOLDERS)))
def test_a_placeholder_is_not_a_finding(token: str) -> None:
    text = f"the docs say: {token}\nthat is all\n"
    assert Scanner({}).find(text) == []
    assert Scanner({}).redact(text) == text


FAMILIES = ("slack-token", "private-key", "anthropic-api-key")


@pytest.mark.parametrize("seed", range(40))
def test_real_shaped_random_tokens_of_the_same_families_are_still_found(seed: int) -> None:
    tokens = fake_tokens(seed)
    scanner = Scanner({})
    for family in FAMILIES:
        for token in tokens[family]:
            found = scanner.find(f"see {token} there\n")
            assert [f.rule for f in found] == [family], (family, seed)


def test_every_real_shaped_token_of_every_family_is_still_found() -> None:
    scanner = Scanner({})
    for seed in range(20):
        for family, tokens in fake_tokens(seed).items():
            for token in tokens:
                assert not is_dummy(token) or family == "private-key", (family, seed)
                assert scanner.find(f"see {token} there\n"), (family, seed)


def test_a_key_block_without_its_end_line_is_still_a_finding() -> None:
    """Its body may still be coming (a stream): only a block that ends holding no key is a placeholder."""
    assert [f.rule for f in Scanner({}).find(BEGIN + "\nanything\n")] == ["private-key"]


def test_a_real_token_with_a_placeholder_word_glued_on_is_still_found() -> None:
    token = fake_tokens(3)["slack-token"][0] + "-YOURTOKENHERE"
    assert [f.rule for f in Scanner({}).find(f"see {token} there\n")] == ["slack-token"]
