"""The wider credential-shape rules (issue 10 item 19) and the false alarms they must not
raise (item 20). Every fake value is assembled at run time from a seeded RNG; documented
example values are spelled by concatenation, so no live-looking secret sits in the repo."""

from __future__ import annotations

import random
import string
import sys
import time
from pathlib import Path

import pytest


from assistant.secrets.scanner import Scanner  # noqa: E402
from leak_corpus import B62, B64URL, fake_tokens, ordinary_notes, random_secrets  # noqa: E402

SHAPES = Scanner({})
GATED = Scanner(random_secrets(5, seed=4))
BOTH = pytest.mark.parametrize("scanner", [SHAPES, GATED], ids=["shapes", "gated"])
R = random.Random(2026)
HEX = "0123456789abcdef"


def pick(alphabet: str, n: int) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def rules_in(scanner: Scanner, text: str) -> list[str]:
    return [f.rule for f in scanner.find(text)]


# ---- item 19: formats a person's notes realistically hold

SLACK_PATH = "/services/T" + pick(string.ascii_uppercase + string.digits, 8) + "/B" \
    + pick(string.ascii_uppercase + string.digits, 8) + "/" + pick(B62, 24)
TELEGRAM = pick("123456789", 1) + pick(string.digits, 9) + ":" + "AA" + pick(B64URL, 33)

POSITIVES = [
    # (rule, text around it, the exact secret span)
    ("slack-webhook", "webhook: {}", "hooks" + ".slack.com" + SLACK_PATH),
    ("slack-webhook", "POST to {} daily", "//hooks" + ".slack.com" + SLACK_PATH),
    ("slack-webhook", "old one {}", "http://hooks" + ".slack.com" + SLACK_PATH),
    ("slack-token", "legacy {}", "xo" + "xo-" + pick(string.digits, 11) + "-" + pick(B62, 24)),
    ("authorization-header", "Authorization: token {}", pick(HEX, 40)),
    ("authorization-header", "Authorization: ApiKey {}", pick(B62, 32)),
    ("authorization-header", "Authorization: {}", pick(B64URL, 30) + "9"),
    ("authorization-header", "-H 'authorization: Negotiate {}'", "YII" + pick(B62, 60)),
    ("authorization-header", "Proxy-Authorization: Basic {}", "YWxpY2U6" + pick(B62, 20)),
    ("authorization-header", '{{"Authorization": "SSWS {}"}}', "00" + pick(B62, 40)),
    ("curl-user-password", "curl -u admin:{} https://nas.local/api", pick(B62, 14)),
    ("curl-user-password", "curl -sS --user=deploy:{} https://ci.example.com/x", pick(B62 + "!#%", 16)),
    ("curl-user-password", "curl -X POST -ubob:{} http://10.0.0.2/", pick(B62, 12)),
    ("gitlab-token", "GITLAB_TOKEN={}", "gl" + "pat-" + pick(B64URL, 20)),
    ("gitlab-token", "deploy token {}", "gl" + "dt-" + pick(B64URL, 20)),
    ("gitlab-token", "runner {}", "gl" + "rt-" + pick(B64URL, 20)),
    ("gitlab-token", "oauth secret {}", "gl" + "oas-" + pick(B64URL, 64)),
    ("gitlab-token", "registration {}", "GR1348" + "941" + pick(B64URL, 20)),
    ("npm-token", "//registry.npmjs.org/:_authToken={}", "np" + "m_" + pick(B62, 36)),
    ("pypi-token", "password = {}", "py" + "pi-AgEIcHlwaS5vcmc" + pick(B64URL, 120)),
    ("pypi-token", "test.pypi: {}", "py" + "pi-AgENdGVzdC5weXBpLm9yZw" + pick(B64URL, 100)),
    ("telegram-bot-token", "bot token {} for alerts", TELEGRAM),
    ("discord-webhook", "hook {}", "discord" + "app.com/api/webhooks/" + pick(string.digits, 19) + "/" + pick(B64URL, 68)),
    ("sendgrid-key", "SENDGRID_API_KEY={}", "S" + "G." + pick(B64URL, 22) + "." + pick(B64URL, 43)),
    ("twilio-key", "twilio key sid {}", "S" + "K" + pick(HEX, 32)),
    ("digitalocean-token", "doctl token {}", "do" + "p_v1_" + pick(HEX, 64)),
    ("digitalocean-token", "refresh {}", "do" + "r_v1_" + pick(HEX, 64)),
    ("1password-secret-key", "emergency kit: {}", "A" + "3-" + pick(string.ascii_uppercase + string.digits, 6) + "-"
     + pick(string.ascii_uppercase + string.digits, 6) + "-" + "-".join(pick(string.ascii_uppercase + string.digits, 5) for _ in range(4))),
    ("vault-token", "VAULT_TOKEN={}", "hv" + "s." + "CAESI" + pick(B64URL, 100)),
    ("vault-token", "batch {}", "hv" + "b." + "AAAAAQ" + pick(B64URL, 150)),
    ("doppler-token", "DOPPLER_TOKEN={}", "dp" + ".st.dev." + pick(B62, 40)),
    ("doppler-token", "cli {}", "dp" + ".ct." + pick(B62, 43)),
    ("notion-token", "NOTION_KEY={}", "nt" + "n_" + pick(string.digits, 11) + pick(B62, 35)),
    ("linear-key", "LINEAR_API_KEY={}", "lin" + "_api_" + pick(B62, 40)),
    ("atlassian-token", "jira token {}", "AT" + "ATT3xFfGF0" + pick(B64URL, 170) + "=" + pick("0123456789ABCDEF", 8)),
    ("atlassian-token", "org admin {}", "AT" + "CTT3xFfGN0" + pick(B64URL, 170) + "=" + pick("0123456789ABCDEF", 8)),
    ("huggingface-token", "HF org {}", "api" + "_org_" + pick(string.ascii_letters, 34)),
    ("perplexity-key", "PPLX={}", "pp" + "lx-" + pick(B62, 48)),
    ("shopify-token", "admin api {}", "shp" + "at_" + pick(HEX, 32)),
    ("shopify-token", "custom app {}", "shp" + "ca_" + pick(HEX, 32)),
    ("square-token", "square prod {}", "EA" + "AA" + pick(B64URL, 60)),
    ("square-token", "square sandbox {}", "sq0" + "atp-" + pick(B64URL, 22)),
    ("aws-access-key", "bearer key {}", "AB" + "IA" + pick(string.ascii_uppercase + "234567", 16)),
    ("aws-access-key", "context key {}", "AC" + "CA" + pick(string.ascii_uppercase + "234567", 16)),
]
POSITIVES += [(rule, "value {} here", tok) for rule, toks in fake_tokens().items() for tok in toks
              if rule in ("aws-bedrock-key", "discord-token", "1password-token")]


@BOTH
@pytest.mark.parametrize("rule,around,secret", POSITIVES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(POSITIVES)])
def test_format_is_found_and_only_the_secret_is_redacted(scanner, rule, around, secret):
    text = "note line\n" + around.format(secret) + "\nend"
    found = scanner.find(text)
    assert [f.rule for f in found] == [rule]
    assert text[found[0].start:found[0].end] == secret
    assert scanner.redact(text) == text.replace(secret, f"[redacted:{rule}]")


# ---- item 20: placeholders, runs and documented examples are not findings

NEGATIVES = [
    "gh" + "p_" + "x" * 36,
    "gh" + "p_" + "X" * 36,
    "xo" + "xb-" + "x" * 9 + "-" + "x" * 13 + "-" + "x" * 24,
    "xo" + "xb-" + "0" * 12 + "-" + "0" * 13 + "-" + "x" * 24,
    "AK" + "IA" + "X" * 16,
    "AK" + "IA" + "IOSFODNN7" + "EXAMPLE",                 # AWS's documented example
    "AK" + "IA" + "I44QH8DHB" + "EXAMPLE",
    "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
    "hf" + "_" + "x" * 34,
    "hf" + "_requiredCharacteristicTypesForDisplayMetadata",   # an Objective-C name
    "sk" + "_live_" + "0" * 24,
    "sk" + "_test_" + "4eC39HqLyjWDarjtT1zdp7dc",            # Stripe's documented test key
    "gh" + "p_" + "16C7e42F292c6912E7710c838347Ae178B4a",    # GitHub's documented example
    "xo" + "xb-" + "17653672481-19874698323-" + "pdFZKVeTuE8sk7oOcBrzbqgy",   # Slack's docs
    "110201543:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",      # Telegram's Bot API docs
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
    + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",            # jwt.io's sample
    "https://hooks" + ".slack.com/services/T00000000/B00000000/" + "X" * 24,
    "gl" + "pat-" + "x" * 20,
    "np" + "m_" + "abcdefghijklmnopqrstuvwxyz0123456789",
    "dp" + ".pt." + "A" * 43,
    "Authorization: Bearer YOUR_API_KEY",
    "Authorization: Bearer YOUR_TOKEN_HERE",
    "Authorization: required for every endpoint",
    "Authorization: implemented in the middleware layer",
    "authorization: Bearer ${TOKEN}",
    "Authorization: Bearer <token>",
    "curl -u user:password https://example.com/",
    "curl -u $USER:$PASS https://example.com/",
    'curl -u "admin:${ADMIN_PASSWORD}" https://example.com/',
    "curl -u admin:<password> https://example.com/",
    "git push -u origin:main",                               # -u but not curl
    "see docs.python.org/3/library for details",             # ".python." is no Discord token
    "NetworkManagerConnection" + ".config." + "someVeryLongIdentifierNameHereForTest",   # nor is this
    "EA" + "AA" + "A" * 60,
    "hv" + "s." + "x" * 95,
]


@BOTH
@pytest.mark.parametrize("text", NEGATIVES, ids=range(len(NEGATIVES)))
def test_placeholder_and_documented_examples_are_not_findings(scanner, text):
    assert scanner.find(f"example:\n{text}\nend") == []


def test_long_identifiers_sharing_a_prefix_are_not_tokens():
    for text in ("hf" + "_" + "a" + pick(string.ascii_letters, 34),          # 35 letters: too long
                 "my" + "npm_" + pick(B62, 36), "secret_" + "key_for_the_staging_environment_rotation"):
        assert SHAPES.find(text) == [], text


def test_a_real_looking_key_is_still_found_beside_a_placeholder():
    real = "AK" + "IA" + pick(string.ascii_uppercase + "234567", 16)
    text = "placeholder " + "AK" + "IA" + "X" * 16 + " and the real one " + real
    found = SHAPES.find(text)
    assert [text[f.start:f.end] for f in found] == [real]


def test_ordinary_notes_stay_clean_with_the_wider_rules():
    notes = ordinary_notes(600, seed=77)
    assert [(i, f.rule) for i, note in enumerate(notes) for f in SHAPES.find(note)] == []
    assert [(i, f.rule) for i, note in enumerate(notes) for f in GATED.find(note)] == []


HOSTILE = {
    "telegram-colons": "1234567:" * 40_000,
    "telegram-aa": ("12345:AA" + "b" * 33 + "_") * 6_000,
    "discord-dots": ".abcdef." * 50_000,
    "discord-ids": ("MTIzNDU2Nzg5MDEyMzQ1Njc4.abcdef." * 8_000),
    "curl-flags": "curl " + "-u a:b " * 40_000,
    "curl-no-curl": "-u a:" * 60_000,
    "slack-hooks": "hooks.slack.com/services/" * 10_000,
    "auth-schemes": "Authorization: " + "scheme " * 40_000,
    "gitlab-run": "glpat-" * 50_000,
    "one-char-run": "A" * 300_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_for_the_new_rules_does_not_hang(name):
    """A hang guard, not a speed measurement (bench/leaks.py measures speed)."""
    t = time.monotonic()
    GATED.redact(HOSTILE[name])
    SHAPES.redact(HOSTILE[name])
    assert time.monotonic() - t < 10
