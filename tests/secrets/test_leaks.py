"""Leak scanner: every shape rule, every encoding of a vault value, redaction, false positives."""

from __future__ import annotations

import base64
import json
import random
import re
import textwrap
import urllib.parse

import pytest

from assistant.secrets.rules import RULE_IDS
from assistant.secrets.scanner import Finding, Scanner, variants
from leak_corpus import (
    fake_credential_values,
    fake_tokens,
    ordinary_notes,
    random_secrets,
)
import itertools
import string
import threading
from bounded import bounded

TOKENS = fake_tokens()
SHAPES = Scanner({})
# With vault values, the shape rules are gated by their needles in the same automaton pass:
# every shape test runs against both.
WITH_VAULT = Scanner(random_secrets(5, seed=4))
SCANNERS = pytest.mark.parametrize("scanner", [SHAPES, WITH_VAULT], ids=["shapes", "gated"])


# -- shape rules --------------------------------------------------------------------------

def test_every_rule_has_a_fake_token():
    covered = set(TOKENS) | {k.split("/")[0] for k in fake_credential_values()}
    assert covered == set(RULE_IDS)


@SCANNERS
@pytest.mark.parametrize(
    "rule,token", [(rule, tok) for rule, toks in TOKENS.items() for tok in toks],
    ids=lambda v: v if v in TOKENS else "",
)
def test_shape_rule_finds_token_and_redaction_keeps_context(scanner, rule, token):
    text = f"Notes for today.\nThe value is {token} (do not share).\nBye."
    found = scanner.find(text)
    start = text.index(token)
    assert found == [Finding(rule, rule, start, start + len(token))]
    redacted = scanner.redact(text)
    assert redacted == f"Notes for today.\nThe value is [redacted:{rule}] (do not share).\nBye."
    assert token not in redacted


@SCANNERS
@pytest.mark.parametrize("key", sorted(fake_credential_values()))
def test_contextual_rules_redact_only_the_credential(scanner, key):
    text, secret = fake_credential_values()[key]
    rule = key.split("/")[0]
    note = f"log line: {text}\nnext line"
    found = scanner.find(note)
    assert [(f.name, f.rule) for f in found] == [(rule, rule)]
    assert note[found[0].start:found[0].end] == secret
    assert scanner.redact(note) == note.replace(secret, f"[redacted:{rule}]")


@pytest.mark.parametrize("text", [
    "AKIA" + "IOSFODNN7EXAMPL",                        # one short
    "XAKIA" + "IOSFODNN7EXAMPLE",                      # inside a longer word
    "gh" + "p_" + "abc123",                            # too short
    "my_gh" + "p_" + "A" * 36,                         # part of an identifier
    "sk" + "-this-is-a-kebab-case-config-name-not-a-key",
    "Authorization: Bearer $API_TOKEN",
    'headers = {"Authorization": f"Bearer {token}"}',
    "Authorization: Bearer <token>",
    "postgres://app:${DB_PASSWORD}@db:5432/app",
    "https://user@example.com:8080/path",
    "http://[::1]:8080/x",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "eyJhbGciOiJIUzI1NiJ9 is only a header",
    "hf" + "_hub_download(repo_id='x')",
])
def test_near_misses_are_not_findings(text):
    assert SHAPES.find(text) == [] and WITH_VAULT.find(text) == []


def test_truncated_private_key_block_still_caught():
    token = TOKENS["private-key"][0]
    cut = token[: token.index("-----END")].rstrip()
    text = "pasted:\n" + cut + "\n\nand then some prose after a blank line."
    found = SHAPES.find(text)
    assert [f.rule for f in found] == ["private-key"]
    assert SHAPES.redact(text) == "pasted:\n[redacted:private-key]\n\nand then some prose after a blank line."


# -- vault values in every encoding ------------------------------------------------------

SECRET = "Tr0ub4dor&3-" + "horse/battery+staple?"


def _b64_forms(data: bytes) -> list[str]:
    std = base64.b64encode(data).decode()
    url = base64.urlsafe_b64encode(data).decode()
    return [std, std.rstrip("="), url, url.rstrip("=")]


ENCODINGS = {
    "raw": SECRET,
    "hex-lower": SECRET.encode().hex(),
    "hex-upper": SECRET.encode().hex().upper(),
    "hex-mixed": "".join(c.upper() if i % 3 else c for i, c in enumerate(SECRET.encode().hex())),
    "percent": urllib.parse.quote(SECRET, safe=""),
    "percent-default": urllib.parse.quote(SECRET),
    "percent-path": urllib.parse.quote(SECRET, safe="/:@&+"),
    "percent-encodeURIComponent": urllib.parse.quote(SECRET + "!*()", safe="!*'()~"),
    "percent-lower": urllib.parse.quote(SECRET, safe="").lower().replace("tr0ub4dor", "Tr0ub4dor"),
    "percent-form": urllib.parse.quote_plus(SECRET),
    "percent-all": "".join(f"%{b:02x}" for b in SECRET.encode()),
    "json": json.dumps(SECRET)[1:-1],
    "json-quoted": json.dumps({"k": SECRET}),
    "json-unicode-escapes": "".join(f"\\u{ord(c):04X}" for c in SECRET),
    "backslash": re.sub(r"([\\\"'&$ ?+/])", r"\\\1", SECRET),
    "hex-escapes": "".join(f"\\x{b:02x}" for b in SECRET.encode()),
    "reversed": SECRET[::-1],
    "split-space": SECRET[:7] + " " + SECRET[7:],
    "split-newline": SECRET[:5] + "\n" + SECRET[5:14] + "\r\n" + SECRET[14:],
    "split-indented": SECRET[:10] + "\n    " + SECRET[10:],
    "b64-user-colon": base64.b64encode(b"user:" + SECRET.encode()).decode(),
    "b64-trailing-newline": base64.b64encode(SECRET.encode() + b"\n").decode(),
    "b64-offset-1": base64.b64encode(b"x" + SECRET.encode() + b"yz").decode(),
    "b64-offset-2": base64.b64encode(b"xy" + SECRET.encode()).decode(),
    "b64-unpadded": base64.b64encode(SECRET.encode()).decode().rstrip("="),
    "b64url-user-colon": base64.urlsafe_b64encode(b"user:" + SECRET.encode()).decode(),
    "b64url-offset-1": base64.urlsafe_b64encode(b"\xff" + SECRET.encode() + b"\xfe").decode().rstrip("="),
    "b64-wrapped-76": "\n".join(textwrap.wrap(
        base64.b64encode(b"prefix bytes " * 9 + SECRET.encode() + b" suffix" * 9).decode(), 76)),
    "b64-wrapped-64-crlf": "\r\n".join(textwrap.wrap(
        base64.b64encode(b"Z" * 50 + SECRET.encode() + b"\n" * 40).decode(), 64)),
}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_vault_value_found_in_every_encoding(encoding):
    encoded = ENCODINGS[encoding]
    scanner = Scanner({"mail": SECRET})
    text = f"Header line.\nvalue = <{encoded}> end\nFooter."
    found = scanner.find(text)
    assert found, encoding
    assert {(f.name, f.rule) for f in found} == {("mail", "vault")}
    redacted = scanner.redact(text)
    assert "[redacted:mail]" in redacted
    assert redacted.startswith("Header line.\nvalue = <")
    assert redacted.endswith("> end\nFooter.")
    assert scanner.find(redacted) == []


def test_base64_redaction_leaves_no_determined_character():
    """After redaction no base64 run of >= 4 chars that the value determines survives."""
    scanner = Scanner({"mail": SECRET})
    for prefix in (b"", b"u", b"us", b"user:", b"\x00\x01"):
        for suffix in (b"", b"\n", b"!!", b"tail"):
            enc = base64.b64encode(prefix + SECRET.encode() + suffix).decode()
            redacted = scanner.redact(enc)
            head, _, tail = redacted.partition("[redacted:mail]")
            assert _ and len(head) <= (len(prefix) * 4 + 2) // 3
            assert len(tail.rstrip("=")) <= (len(suffix) * 4 + 2) // 3


def test_randomised_base64_alignments_and_wrapping():
    rng = random.Random(2024)
    secrets = random_secrets(40, seed=3, length=(8, 60))
    scanner = Scanner(secrets)
    for _ in range(300):
        name, value = rng.choice(sorted(secrets.items()))
        data = rng.randbytes(rng.randint(0, 40)) + value.encode() + rng.randbytes(rng.randint(0, 40))
        enc = rng.choice([base64.b64encode, base64.urlsafe_b64encode])(data).decode()
        if rng.random() < 0.5:
            enc = enc.rstrip("=")
        width = rng.choice([0, 64, 76])
        if width:
            enc = rng.choice(["\n", "\r\n"]).join(textwrap.wrap(enc, width))
        text = "see " + enc + " done"
        names = {f.name for f in scanner.find(text)}
        assert name in names, (len(value), len(data))
        assert scanner.redact(text).startswith("see ") and scanner.redact(text).endswith(" done")


def test_randomised_line_splits():
    rng = random.Random(7)
    secrets = random_secrets(20, seed=11, length=(8, 50))
    scanner = Scanner(secrets)
    for name, value in secrets.items():
        for _ in range(5):
            cuts = sorted(rng.sample(range(1, len(value)), k=min(3, len(value) - 1)))
            pieces, last = [], 0
            for c in cuts:
                pieces.append(value[last:c])
                last = c
            pieces.append(value[last:])
            joined = "".join(p + rng.choice([" ", "\n", "\r\n", "\n\t  ", "  "]) for p in pieces[:-1]) + pieces[-1]
            text = "before:\n" + joined + "\n:after"
            found = [f for f in scanner.find(text) if f.name == name]
            assert found
            assert scanner.redact(text).startswith("before:\n")
            assert scanner.redact(text).endswith("\n:after")
            # the span starts and ends exactly on the value's first and last characters
            assert text[found[0].start] == value[0] and text[found[-1].end - 1] == value[-1]


def test_variants_cover_the_promised_encodings():
    vs = variants("n", SECRET)
    kinds = {v.encoding for v in vs}
    for a in (0, 1, 2):  # URL-safe form exists whenever it differs from the standard one
        std = next(v.exact for v in vs if v.encoding == f"base64/{a}")
        assert (f"base64/{a}-url" in kinds) == bool(set(std) & set("+/"))
    # (JSON and other backslash escapes need no variant: the normalised view drops
    # backslashes; nor does an ASCII value's percent form since review s5: the view decodes
    # %XX and \uXXXX; test_vault_value_found_in_every_encoding proves they are found.)
    for expected in ("raw", "reversed", "hex", "base64/0", "base64/1", "base64/2"):
        assert expected in kinds
    assert "percent" in {v.encoding for v in variants("n", "caf\u00e9-" + SECRET)}   # its UTF-8 bytes


# -- redaction ---------------------------------------------------------------------------

def test_redaction_keeps_surrounding_text_exactly():
    scanner = Scanner({"a": "alpha-secret-1", "b": "bravo-secret-22"})
    text = "x alpha-secret-1, y\n\tbravo-secret-22!z alpha-secret-1"
    assert scanner.redact(text) == "x [redacted:a], y\n\t[redacted:b]!z [redacted:a]"


def test_overlapping_hits_redacted_once():
    scanner = Scanner({"left": "abcdefgh12345678", "right": "12345678zyxwvuts"})
    text = "start abcdefgh12345678zyxwvuts stop"
    found = scanner.find(text)
    assert {f.name for f in found} == {"left", "right"}
    redacted = scanner.redact(text)
    assert redacted.count("[redacted:") == 1
    assert redacted.startswith("start [redacted:") and redacted.endswith("] stop")
    assert "abcdefgh" not in redacted and "zyxwvuts" not in redacted


def test_vault_value_that_is_also_a_shape_is_redacted_once_by_name():
    token = TOKENS["github-token"][0]
    scanner = Scanner({"github": token})
    text = f"push with {token} please"
    rules = sorted(f.rule for f in scanner.find(text))
    assert rules == ["github-token", "vault"]
    assert scanner.redact(text) == "push with [redacted:github] please"


def test_repeated_and_adjacent_hits():
    scanner = Scanner({"k": "kilo-value-99"})
    text = "kilo-value-99kilo-value-99 and kilo-value-99"
    assert scanner.redact(text) == "[redacted:k][redacted:k] and [redacted:k]"


def test_unicode_text_and_values():
    scanner = Scanner({"u": "pässwörd-✓-ünïcode"})
    text = "Grüße — İstanbul ΣΑΣ: pässwörd-✓-ünïcode ✔ end"
    assert scanner.redact(text) == "Grüße — İstanbul ΣΑΣ: [redacted:u] ✔ end"
    split = "Grüße pässwörd-✓\n  -ünïcode end"
    assert scanner.redact(split) == "Grüße [redacted:u] end"
    hexed = "pässwörd-✓-ünïcode".encode().hex().upper()
    assert scanner.redact("İ " + hexed) == "İ [redacted:u]"


def test_raw_values_are_found_in_any_case():
    """Issue 23 item 7: a value handed back upper- or lower-cased is the value (it was not a hit)."""
    scanner = Scanner({"c": "CaseSensitive123"})
    for spelled in ("CaseSensitive123", "casesensitive123", "CASESENSITIVE123", "cAsEsEnSiTiVe123"):
        assert [(f.start, f.end) for f in scanner.find(f"x {spelled} y")] == [(2, 18)]
    assert scanner.find("CaseSensitive124") == []


# -- values never leak through the scanner ---------------------------------------------

def test_findings_and_reprs_never_carry_values():
    secret = "hidden-" + "value-" + "4242"
    scanner = Scanner({"n": secret})
    text = f"a {secret} b {secret.encode().hex()}"
    found = scanner.find(text)
    assert found
    blob = repr(scanner) + repr(found) + str(found) + repr(variants("n", secret))
    for form in (secret, secret.encode().hex(), secret[::-1]):
        assert form not in blob
    assert set(Finding.__dataclass_fields__) == {"name", "rule", "start", "end"}


# -- false positives ---------------------------------------------------------------------

def test_thousand_ordinary_notes_produce_zero_findings():
    notes = ordinary_notes(1000)
    assert len(notes) >= 1000
    joined = "\n".join(notes)
    # the corpus really has the material it claims to
    assert "data:image/png;base64," in joined and "```" in joined and "https://" in joined
    assert re.search(r"\b[0-9a-f]{64}\b", joined) and re.search(r"\b[0-9a-f]{40}\b", joined)
    assert re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-", joined)
    scanner = Scanner(random_secrets(200))
    hits = [(i, f.rule) for i, note in enumerate(notes) for f in scanner.find(note)]
    assert hits == []
    assert [(i, f.rule) for i, note in enumerate(notes) for f in SHAPES.find(note)] == []
    # and the same scanner does see a value planted into one of those notes
    planted = notes[3] + random_secrets(200)["secret-17"]
    assert [f.name for f in scanner.find(planted)] == ["secret-17"]


def test_whitespace_table_matches_python():
    from assistant.secrets.scanner import _WS_ALL

    assert set(_WS_ALL) == {chr(c) for c in range(0x110000) if chr(c).isspace()}


def test_scanner_rejects_bad_input():
    with pytest.raises(TypeError):
        Scanner({"a": 12345678})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        Scanner({"": "something-long"})
    with pytest.raises(TypeError):
        Scanner({}).find(b"bytes")  # type: ignore[arg-type]


def test_every_rule_token_contains_one_of_its_needles():
    from assistant.secrets.rules import RULES

    for rule in RULES:
        tokens = TOKENS.get(rule.id) or [t for k, (t, _) in fake_credential_values().items()
                                          if k.startswith(rule.id)]
        matched = [t for t in tokens if list(rule.spans(t))]
        assert matched, rule.id
        if not rule.needles:   # no literal to gate on: the rule always runs
            continue
        for t in matched:
            assert any(n in t.lower() for n in rule.needles), rule.id


# -- hostile input stays linear --------------------------------------------------------

HOSTILE = {
    "jwt-prefix-run": "eyJ" * 100_000,
    "slack-numeric-groups": "xoxb-" + "12345678-" * 33_000 + "_",
    "github-prefix-run": "ghp_" * 75_000,
    "openai-dash-run": " sk-" + "sk-" * 100_000 + "!",
    "url-colons": "http://" + "a:" * 150_000,
    "url-schemes": "://a:" * 60_000,
    "auth-spaces": ("Authorization: " + " " * 50) * 5_000,
    "pem-begin-lines": "-----BEGIN RSA " + "PRIVATE KEY-----\n" * 1 + ("-----BEGIN RSA " + "PRIVATE KEY-----\n") * 9_000,
    "pem-kind-words": "-----BEGIN " + "A " * 150_000,
    "aws-prefix-run": "AKIA" * 75_000,
    "whitespace": " \n\t" * 100_000,
    "backslashes": "\\" * 300_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_does_not_hang(name):
    """Hang guard, not a speed measurement: the quadratic versions of these regexes took
    10-50 s on 100 KB; linear ones take milliseconds on 300 KB. The bound is generous."""
    import time

    scanner = Scanner({"x": "abcdefgh12345678"})
    text = HOSTILE[name]
    t = time.monotonic()
    scanner.redact(text)
    assert time.monotonic() - t < 10


def test_many_hits_of_one_value():
    scanner = Scanner({"x": "abcdefgh12345678"})
    text = "abcdefgh12345678 " * 5000
    found = scanner.find(text)
    assert len(found) == 5000
    assert scanner.redact(text) == "[redacted:x] " * 5000


def test_short_values_given_directly_are_still_matched_raw():
    scanner = Scanner({"pin": "4821"})
    assert scanner.redact("code 4821 ok") == "code [redacted:pin] ok"
    kinds = {v.encoding for v in variants("pin", "4821")}
    assert "raw" in kinds and "reversed" not in kinds and "base64/1" not in kinds  # too short


def test_offset_mapping_with_unicode_whitespace_and_backslashes():
    """Spans map back exactly through every kind of dropped character, ASCII text or not."""
    rng = random.Random(99)
    gaps = [" ", "\n", "\t", "\r\n", "\xa0", "\u2028", "\u3000", "\\", "\\\\", " \\\n "]
    fillers = ["plain words here", "ünïcödé wörds — “quoted”", "İstanbul ΣΑΣ", "x\\y z", "a\u2003b"]
    value = "Qm7-vault-" + "value-Zx42"
    scanner = Scanner({"v": value})
    for _ in range(200):
        cut = rng.randint(1, len(value) - 1)
        piece = value[:cut] + rng.choice(gaps) + value[cut:]
        before = "".join(rng.choice(fillers) + rng.choice(gaps) for _ in range(rng.randint(0, 6)))
        after = "".join(rng.choice(gaps) + rng.choice(fillers) for _ in range(rng.randint(0, 6)))
        text = before + " " + piece + " " + after
        found = scanner.find(text)
        assert [f.name for f in found] == ["v"], repr(text)
        f = found[0]
        assert text[f.start:f.end] == piece
        assert scanner.redact(text) == before + " [redacted:v] " + after


ACC_SECRET = "s3cr3t-Value-Xq9Zk2Lm"


def _b64_variants(raw: bytes):
    out_ = set()
    for enc in (base64.b64encode, base64.urlsafe_b64encode):
        e = enc(raw).decode()
        out_.add(e)
        out_.add(e.rstrip("="))
    return out_


ACC_ENCODINGS = {
    "raw": lambda v: v,
    "hex-lower": lambda v: v.encode().hex(),
    "hex-upper": lambda v: v.encode().hex().upper(),
    "percent": lambda v: "".join(f"%{b:02X}" for b in v.encode()),
    "percent-lower": lambda v: "".join(f"%{b:02x}" for b in v.encode()),
    "json": lambda v: json.dumps(v, ensure_ascii=True)[1:-1],
    "reversed": lambda v: v[::-1],
    "split-space": lambda v: v[:7] + " " + v[7:],
    "split-newline": lambda v: v[:9] + "\n" + v[9:],
}


FAKE_TOKENS = [
    "AKIA" + "Z7Q3X9LM2NB4VC8D",
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github_pat_" + "11AQ7ZK2LM0x9Rt3Vb8NcW_" + "h4Jd9sQe2Lr7Ty1Uo6Pa3Sf5Dg8Hj0Kl2Zx4Cv6Bn8Mq1Wz3Ex5Rc7Tv9Yb2Nu4",
    "sk-" + "proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3kLm6nOp9qRs2tUv5wXy8zA",
    "sk-ant-" + "api03-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3kLm6nOp9qRs2tUv5wXy8zAb3dEf6hIj9kLm2nOp5qRs-AAAAAA",
    "xoxb-" + "1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "https://hooks.slack.com/services/" + "T01234567/B01234567/AbCdEfGhIjKlMnOpQrStUvWx",
    "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc9Z",
    "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "AGE-SECRET-KEY-" + "1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" + "QPZRY9X8GF2TVDW0S3JN54KHCE",
]


# acceptance (issue 4: leaks), written from the words
def test_scanner_vault_hit_shape():
    s = Scanner(secrets={"github": ACC_SECRET})
    text = f"hello {ACC_SECRET} world"
    found = s.find(text)
    assert len(found) == 1
    f = found[0]
    assert f.name == "github" and f.rule == "vault"
    assert (f.start, f.end) == (6, 6 + len(ACC_SECRET))
    assert ACC_SECRET not in repr(f)
    assert s.redact(text) == "hello [redacted:github] world"


def test_scanner_without_secrets_has_shapes():
    for s in (Scanner(), Scanner(secrets={})):
        key = "AKIA" + "Q3ZT7LBN2WXK5RPM"   # AWS's documented example is not a finding
        text = f"key={key} end"
        assert [f.rule for f in s.find(text)] == ["aws-access-key"]
        assert s.redact(text) == "key=[redacted:aws-access-key] end"


@pytest.mark.parametrize("enc", sorted(ACC_ENCODINGS))
def test_vault_value_encodings(enc):
    value = 'pa"ss/wo\\rd+Val=ue~42'
    s = Scanner(secrets={"db": value})
    encoded = ACC_ENCODINGS[enc](value)
    text = f"before {encoded} after"
    found = s.find(text)
    assert any(f.name == "db" for f in found), (enc, encoded)
    red = s.redact(text)
    assert "[redacted:db]" in red
    assert red.startswith("before ") and red.endswith(" after")


@pytest.mark.parametrize("prefix", ["", "x", "xy", "user:"])
@pytest.mark.parametrize("suffix", ["", "\n", "zz"])
def test_vault_value_base64(prefix, suffix):
    s = Scanner(secrets={"tok": ACC_SECRET})
    raw = (prefix + ACC_SECRET + suffix).encode()
    for e in _b64_variants(raw):
        text = f"data: {e} ."
        assert any(f.name == "tok" for f in s.find(text)), e
        assert "[redacted:tok]" in s.redact(text)


def test_vault_value_base64_wrapped():
    s = Scanner(secrets={"tok": ACC_SECRET})
    e = base64.b64encode(("prefix-bytes " + ACC_SECRET + " and more").encode()).decode()
    wrapped = "\n".join(e[i:i + 16] for i in range(0, len(e), 16))
    assert any(f.name == "tok" for f in s.find(wrapped))


@pytest.mark.parametrize("tok", FAKE_TOKENS, ids=lambda t: t[:12])
def test_shape_rules(tok):
    s = Scanner(secrets={})
    text = f"note: {tok} end"
    found = s.find(text)
    assert found, tok
    assert all(f.rule != "vault" for f in found)
    red = s.redact(text)
    assert tok not in red and red.startswith("note: ") and red.endswith(" end")
    assert "[redacted:" in red


def test_shape_rules_multiline_and_headers():
    s = Scanner()
    pem = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4d8Qk1+abcdefghijklmnop\n"
           "qrstuvwxyz0123456789ABCDEFGH==\n-----END RSA PRIVATE KEY-----")
    ssh = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
           "AAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQ\n-----END OPENSSH PRIVATE KEY-----")
    for text in (pem, ssh, "Authorization: Bearer Zq8Lm2Xv9Rt4Kp7Wn3Bc6Yd1",
                 "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==",
                 "see https://alice:hunter2pass@example.com/path"):
        doc = "top\n" + text + "\nbottom"
        assert s.find(doc), text
        red = s.redact(doc)
        assert red.startswith("top\n") and red.endswith("\nbottom")
        assert "[redacted:" in red


def test_no_false_positives_on_ordinary_text():
    import hashlib
    import uuid
    s = Scanner(secrets={"k": ACC_SECRET})
    parts = ["# Notes\n\nLina likes green tea and hiking in the Alps.\n",
             "```python\ndef f(x):\n    return x * 2\n```\n",
             "https://example.com/docs/page?id=42&lang=en\n"]
    for i in range(200):
        parts.append(str(uuid.UUID(int=i * 7919 + 1)))
        parts.append(hashlib.sha256(str(i).encode()).hexdigest())
        parts.append(hashlib.sha1(str(i).encode()).hexdigest())
    parts.append("![img](data:image/png;base64,"
                 + base64.b64encode(bytes(range(256)) * 4).decode() + ")")
    text = "\n".join(parts)
    assert s.find(text) == []


@pytest.mark.parametrize("how", ["quote", "quote_plus", "quote_all", "json_dumps",
                                 "json_non_ascii", "multi_split", "crlf_split"])
def test_vault_value_more_encodings(how):
    import urllib.parse
    value = "pa ss/wo+rd&Val=ue~42"
    enc = {
        "quote": lambda: urllib.parse.quote(value),
        "quote_plus": lambda: urllib.parse.quote_plus(value),
        "quote_all": lambda: urllib.parse.quote(value, safe=""),
        "json_dumps": lambda: json.dumps({"password": value}),
        "json_non_ascii": lambda: json.dumps("ü" + value),
        "multi_split": lambda: "pa ss/w o+rd&V al=ue~42".replace(" ", "\n  ", 1),
        "crlf_split": lambda: value[:6] + "\r\n" + value[6:],
    }[how]()
    s = Scanner(secrets={"db": value})
    text = f"start {enc} stop"
    assert any(f.name == "db" for f in s.find(text)), enc
    red = s.redact(text)
    assert "[redacted:db]" in red and red.startswith("start ") and red.endswith(" stop")


def test_finding_equality():
    from assistant.secrets.scanner import Finding
    s = Scanner(secrets={"github": ACC_SECRET})
    assert s.find("hello " + ACC_SECRET) == [Finding(name="github", rule="vault", start=6,
                                                 end=6 + len(ACC_SECRET))]


REVIEW_SECRET = "Zq8#pL2!vN7xR4tW"


def _distinct_begin_lines(size: int) -> str:
    parts, n = [], 0
    for k in itertools.count(1):
        for t in itertools.product(string.ascii_uppercase, repeat=k):
            p = f"-----BEGIN {''.join(t)} PRIVATE KEY-----\n"
            parts.append(p)
            n += len(p)
            if n >= size:
                return "".join(parts)
    raise AssertionError


REVIEW_LONG = "Zq8#pL2!vN7xR4tWsecretvalue123456"


# review (secrets): 1. private-key rule: quadratic on hostile input
@pytest.mark.parametrize("text", [
    pytest.param(_distinct_begin_lines(1 << 20), id="distinct-kinds"),
    pytest.param("-----BEGIN RSA PRIVATE KEY-----\n" * (1 << 15), id="same-kind"),
    pytest.param("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n" * (1 << 15), id="same-kind-body"),
])
def test_private_key_rule_is_linear_on_a_mebibyte_of_begin_lines(text):
    scanner = Scanner({})
    found = bounded(lambda: scanner.find(text), 8.0)
    assert found and all(f.rule == "private-key" for f in found)


def test_private_key_rule_still_pairs_begin_with_its_own_end():
    rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    ec_open = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBB\n"
    text = f"a\n{ec_open}\nprose after\n{rsa}\nz"
    red = Scanner({}).redact(text)
    assert "MIIEowIBAAKCAQEA" not in red and "MHcCAQEEIBB" not in red
    assert red.startswith("a\n[redacted:private-key]") and red.endswith("\nz")
    assert "prose after" in red


# review (secrets): 2. vault matching: quadratic when hits overlap
@pytest.mark.parametrize("value,text", [
    ("a" * 16, "a" * (1 << 20)),
    ("ab" * 8, "ab" * (1 << 19)),
    ("aaaaaaaa", " a" * (1 << 19)),
])
def test_overlapping_vault_hits_are_linear_and_redacted_once(value, text):
    scanner = Scanner({"x": value})
    # The bound is set by a quarter of the input, redacted first on this machine at its present
    # load: linear work on the whole takes about 4 times as long (the bound is 12), quadratic 16 (the bug took
    # minutes). A fixed bound failed on a loaded machine (14.7 s for linear work at load 9 on 2 cores).
    import time
    t0 = time.perf_counter()
    assert scanner.redact(text[: len(text) // 4]).strip() == "[redacted:x]"
    quarter = time.perf_counter() - t0
    red = bounded(lambda: scanner.redact(text), max(5.0, 12 * quarter))
    assert red.strip() == "[redacted:x]"


def test_overlapping_hits_of_distinct_variants_map_to_exact_spans():
    # The end of one hit is the start of the next (a shared position): spans stay exact.
    text = "pre " + REVIEW_SECRET + REVIEW_SECRET[::-1] + " " + REVIEW_SECRET + " post"
    red = Scanner({"k": REVIEW_SECRET}).redact(text)
    assert red == "pre [redacted:k][redacted:k] [redacted:k] post"


# review (secrets): 3. a secret cut by the end of a note's head showed in part in the catalog
def test_redact_prefix_redacts_a_vault_value_cut_by_the_end_in_any_encoding():
    import base64
    scanner = Scanner({"k": REVIEW_LONG})
    forms = [REVIEW_LONG, REVIEW_LONG.encode().hex().upper(), base64.b64encode(b"user:" + REVIEW_LONG.encode()).decode()]
    for form in forms:
        for keep in (16, 20, len(form) - 1):
            text = "x" * 400 + " " + form[:keep]
            out = scanner.redact_prefix(text)
            assert form[:8] not in out
            assert out.startswith("x" * 80)


def test_redact_prefix_keeps_text_before_the_guard_and_marks_the_cut():
    scanner = Scanner({"k": REVIEW_LONG})
    text = "hello " * 200
    out = scanner.redact_prefix(text)
    assert out.endswith("\u2026") and out.startswith("hello hello")
    assert len(out) < len(text)
    assert scanner.redact_prefix("tiny") == "\u2026"


# review (secrets): 5. encodings and matching the scanner missed
@pytest.mark.parametrize("before,after", [("token ", " more"), ("İ token ", " more"), ("x", "y")])
def test_value_with_a_capital_sigma_is_found_whatever_follows(before, after):
    value = "abcdefghΣ"   # str.lower() gives final sigma alone, medial sigma before a letter
    red = Scanner({"k": value}).redact(before + value + after)
    assert red == before + "[redacted:k]" + after


def test_value_with_a_final_sigma_is_found_lower_cased_too():
    """"abcdefghς" is "abcdefghΣ".lower(): since issue 23 item 7 a value is found in any case."""
    assert Scanner({"k": "abcdefghΣ"}).redact("token abcdefghς more") == "token [redacted:k] more"
    assert Scanner({"k": "abcdefghΣ"}).find("token abcdefghx more") == []


@pytest.mark.parametrize("encoded", [
    # Go's encoding/json escapes <, > and & (json.Marshal's default HTML escaping)
    '{"pw":"p\\u0026ss\\u003cw\\u003erd\\"q\'1"}',
    # PHP json_encode with JSON_HEX_TAG|JSON_HEX_AMP|JSON_HEX_APOS|JSON_HEX_QUOT
    '{"pw":"p\\u0026ss\\u003Cw\\u003Erd\\u0022q\\u00271"}',
])
def test_json_with_html_safe_unicode_escapes_is_found(encoded):
    value = "p&ss<w>rd\"q'1"
    assert Scanner({"k": value}).redact(encoded) == '{"pw":"[redacted:k]"}'


# review (secrets): encodings the scanner missed
@pytest.mark.parametrize("value", ["pässwörd-ünïcode", "emoji🔑key-12345678", "ΣΑΛΑΜΙ-secret-ΣΣ"])
def test_c_style_byte_escapes_of_a_non_ascii_value_are_found(value):
    escaped = repr(value.encode("utf-8"))          # b'p\xc3\xa4ssw...'
    scanner = Scanner({"k": value})
    assert scanner.redact(f"log: {escaped} end") == "log: b'[redacted:k]' end"
    assert scanner.redact(f"log: {escaped.upper()} end") != f"log: {escaped.upper()} end"


# review (scan): a vault value with only some characters escaped (JSON \u002d, %2D) was not found
PARTLY_ESCAPED_SECRET = "Zq7-Plum-Orbit-9931"

PARTLY_ESCAPED = {
    "json-one-u-escape": '{"k": "Zq7\\u002dPlum-Orbit-9931"}',
    "json-letter-escaped": '{"k": "\\u005aq7-Plum-Orbit-9931"}',
    "percent-one-byte": "https://x.example/?k=Zq7%2DPlum-Orbit-9931",
}


@pytest.mark.parametrize("text", list(PARTLY_ESCAPED.values()), ids=list(PARTLY_ESCAPED))
def test_partly_escaped_value_is_found(text):
    """The scanner indexed "every character escaped" and "only what the encoder must escape",
    and dropped backslashes from the view: `Zq7\\u002dPlum-Orbit-9931` became `Zq7u002dPlum...`,
    matching neither, though every JSON / URL / C decoder reads it as the value. Promise (docs/
    vault.md): blocked however spelled, JSON-escaped included."""
    decoded = (json.loads(text)["k"] if text.startswith("{")
               else urllib.parse.unquote(text.split("k=")[1]))
    assert decoded == PARTLY_ESCAPED_SECRET        # what any reader of this text gets
    shown = Scanner({"bank": PARTLY_ESCAPED_SECRET}).redact(text)
    assert "[redacted:bank]" in shown, shown
