"""The needle prefilter never drops a match (issue 10, scanner speed).

The scanner runs a shape rule's regex only when one of the rule's needles (the literal its
regex starts with) occurs in the normalised, case-folded view the automaton scans; with no
vault the automaton holds the needles alone. These tests compare that fast path with the
same scanner whose gate is off (every rule's regex over the whole text, and over its
invisible-free view), on the rules' own samples and on a property-style corpus of ordinary
notes with planted, mutated tokens: case flips, glue characters, escapes, invisible
characters, truncation, non-ASCII text and lone surrogates around them.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant.secrets.rules import RULES  # noqa: E402
from assistant.secrets.scanner import Finding, Scanner  # noqa: E402
from leak_corpus import fake_credential_values, fake_tokens, ordinary_notes, random_secrets  # noqa: E402


class Ungated(Scanner):
    """The same scanner with the needle gate off: every rule runs over the whole text."""

    def _scan(self, text: str, truncated: bool = False):
        found, _active = super()._scan(text, truncated)
        return found, None


SECRETS = random_secrets(5, seed=4)
PAIRS = {
    "shapes": (Scanner({}), Ungated({})),
    "gated": (Scanner(SECRETS), Ungated(SECRETS)),
}
BOTH = pytest.mark.parametrize("pair", sorted(PAIRS))

SAMPLES = [t for toks in fake_tokens().values() for t in toks] + [
    text for text, _secret in fake_credential_values().values()]


def test_the_reference_really_runs_every_rule():
    """The comparison below means something only if the gate is on in the fast scanner and
    off in the reference: on a text with no needle at all, the fast path runs no gated rule."""
    text = "plain words only, nothing to see\n" * 50
    fast, _ = PAIRS["shapes"][0]._scan(text)
    assert fast == [] and _ is not None
    gated_rules = {i for i, r in enumerate(RULES) if r.needles}
    assert not (_ & gated_rules)
    assert PAIRS["shapes"][1]._scan(text)[1] is None


@BOTH
@pytest.mark.parametrize("sample", range(len(SAMPLES)))
def test_every_rule_sample_is_found_through_the_prefilter(pair, sample):
    fast, ref = PAIRS[pair]
    text = "Some notes.\n" + SAMPLES[sample] + "\nMore notes."
    expected = ref.find(text)
    assert expected, "the sample matches no rule at all"
    assert fast.find(text) == expected


def test_each_rule_alone_is_found_with_no_vault():
    """A note holding one token and nothing else: the needle-only automaton must open that
    rule's gate (with no vault, before this change, every rule ran unconditionally)."""
    scanner = Scanner({})
    for rule_id, toks in fake_tokens().items():
        for tok in toks:
            assert rule_id in {f.rule for f in scanner.find(tok)}, rule_id
            assert rule_id in {f.rule for f in scanner.find(tok.upper() if rule_id == "aws-access-key" else tok)}


INVISIBLE = ["\u200b", "\u00ad", "\u2060", "\ufeff", "\u034f"]
GLUE = ["", "", "", " ", "\n", "\\n", "\\", "x", "_", "-", ".", ":", "/", "\"", "'", "=", "\t",
        "é", "\u212a", "\u0130", "\U0001d11e", "\ud800", "\u03a3"]


def _mutate(r: random.Random, tok: str) -> str:
    kind = r.randrange(9)
    if kind == 0 and len(tok) > 4:       # an invisible character inside
        i = r.randrange(1, len(tok))
        return tok[:i] + r.choice(INVISIBLE) + tok[i:]
    if kind == 1:                         # case flips
        return "".join(c.swapcase() if r.random() < 0.2 else c for c in tok)
    if kind == 2 and len(tok) > 6:       # truncated
        return tok[: r.randrange(3, len(tok))]
    if kind == 3:                         # whitespace / line break inside
        i = r.randrange(len(tok) + 1)
        return tok[:i] + r.choice([" ", "\n", "\r\n", "\t"]) + tok[i:]
    if kind == 4:                         # JSON-escaped line breaks around it
        return tok.replace("\n", "\\n")
    if kind == 5:                         # doubled
        return tok + r.choice(GLUE) + tok
    if kind == 6 and len(tok) > 4:       # a character changed
        i = r.randrange(len(tok))
        return tok[:i] + r.choice("aZ9_-.:/+=é") + tok[i + 1:]
    return tok


def _corpus_text(r: random.Random, notes: list[str]) -> str:
    parts = [r.choice(notes)[: r.randrange(50, 2000)]]
    for _ in range(r.randrange(1, 6)):
        tok = _mutate(r, r.choice(SAMPLES))
        parts.append(r.choice(GLUE) + tok + r.choice(GLUE))
        parts.append(r.choice(notes)[: r.randrange(0, 400)])
    r.shuffle(parts)
    text = "".join(parts)
    if r.random() < 0.2:                  # the vault values too, raw or split
        v = r.choice(list(SECRETS.values()))
        i = r.randrange(len(text) + 1)
        text = text[:i] + (v if r.random() < 0.5 else v[:5] + "\n " + v[5:]) + text[i:]
    return text


@BOTH
@pytest.mark.parametrize("seed", range(8))
def test_prefilter_matches_running_every_rule_on_a_corpus(pair, seed):
    fast, ref = PAIRS[pair]
    r = random.Random(1000 + seed)
    notes = ordinary_notes(60, seed=seed)
    compared = hits = 0
    for _ in range(60):
        text = _corpus_text(r, notes)
        expected = ref.find(text)
        assert fast.find(text) == expected
        assert fast.find(text, truncated=True) == ref.find(text, truncated=True)
        assert fast.redact(text) == ref.redact(text)
        compared += 1
        hits += bool(expected)
    # The corpus must exercise the rules, not only plain text.
    assert hits > compared // 2


def test_vault_spans_are_right_after_non_ascii_and_lone_surrogates():
    """The automaton runs over UTF-8 bytes: offsets after multi-byte characters (and a lone
    surrogate, which strict UTF-8 cannot encode) are mapped back to character offsets."""
    value = "Zq8#vT2m!kP4wX9r"
    scanner = Scanner({"KEY": value})
    for before in ["", "é" * 3, "\U0001d11e \u212a", "\ud800 x \udfff", "日本語のメモ\n", "\u200b" * 2]:
        text = before + "the key is " + value + " ok " + "ü" * 3
        start = text.index(value)
        assert [f for f in scanner.find(text) if f.rule == "vault"] == [
            Finding("KEY", "vault", start, start + len(value))]
        assert value not in scanner.redact(text)


def test_the_dfa_and_the_nfa_automata_find_the_same(monkeypatch):
    """Past DFA_MAX_KEYS keys the automaton is a contiguous NFA (1,000 vault values are): both
    kinds must report every overlapping key occurrence alike."""
    import assistant.secrets.scanner as leaks_mod

    secrets = random_secrets(40, seed=9)
    dfa = Scanner(secrets)
    monkeypatch.setattr(leaks_mod, "DFA_MAX_KEYS", 0)
    nfa = Scanner(secrets)
    r = random.Random(77)
    notes = ordinary_notes(30, seed=3)
    values = list(secrets.values())
    with_vault_hits = 0
    for _ in range(40):
        text = _corpus_text(r, notes)
        for v in r.sample(values, 3):
            i = r.randrange(len(text) + 1)
            text = text[:i] + r.choice([v, v.upper(), v[:6] + "\n" + v[6:], "é" + v]) + text[i:]
        expected = dfa.find(text)
        assert nfa.find(text) == expected
        with_vault_hits += any(f.rule == "vault" for f in expected)
    assert with_vault_hits >= 30
