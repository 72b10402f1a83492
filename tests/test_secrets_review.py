"""Findings of the hostile review of the secret-handling and memory-write path.

Each test pins one problem that was found (and fixed): it failed before the fix."""

from __future__ import annotations

import itertools
import json
import string
import threading
import time
from pathlib import Path

import pytest

from assistant.catalog import CatalogSettings, render
from assistant.leak_rules import RULES
from assistant.leaks import Scanner

SECRET = "Zq8#pL2!vN7xR4tW"
GH_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _bounded(fn, limit: float):
    """Run fn in a thread; fail (not hang) if it takes longer than `limit` seconds.

    The limit is generous (linear work takes well under a tenth of it); it only separates
    linear from quadratic, it is not a speed target."""
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("r", fn()), daemon=True)
    t.start()
    t.join(limit)
    assert not t.is_alive(), f"still running after {limit}s: super-linear on hostile input"
    return box.get("r")


# --- 1. private-key rule: quadratic on hostile input ----------------------------------------

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


@pytest.mark.parametrize("text", [
    pytest.param(_distinct_begin_lines(1 << 20), id="distinct-kinds"),
    pytest.param("-----BEGIN RSA PRIVATE KEY-----\n" * (1 << 15), id="same-kind"),
    pytest.param("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n" * (1 << 15), id="same-kind-body"),
])
def test_private_key_rule_is_linear_on_a_mebibyte_of_begin_lines(text):
    scanner = Scanner({})
    found = _bounded(lambda: scanner.find(text), 8.0)
    assert found and all(f.rule == "private-key" for f in found)


def test_private_key_rule_still_pairs_begin_with_its_own_end():
    rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    ec_open = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBB\n"
    text = f"a\n{ec_open}\nprose after\n{rsa}\nz"
    red = Scanner({}).redact(text)
    assert "MIIEowIBAAKCAQEA" not in red and "MHcCAQEEIBB" not in red
    assert red.startswith("a\n[redacted:private-key]") and red.endswith("\nz")
    assert "prose after" in red


# --- 2. vault matching: quadratic when hits overlap ------------------------------------------

@pytest.mark.parametrize("value,text", [
    ("a" * 16, "a" * (1 << 20)),
    ("ab" * 8, "ab" * (1 << 19)),
    ("aaaaaaaa", " a" * (1 << 19)),
])
def test_overlapping_vault_hits_are_linear_and_redacted_once(value, text):
    scanner = Scanner({"x": value})
    red = _bounded(lambda: scanner.redact(text), 20.0)
    assert red.strip() == "[redacted:x]"


def test_overlapping_hits_of_distinct_variants_map_to_exact_spans():
    # The end of one hit is the start of the next (a shared position): spans stay exact.
    text = "pre " + SECRET + SECRET[::-1] + " " + SECRET + " post"
    red = Scanner({"k": SECRET}).redact(text)
    assert red == "pre [redacted:k][redacted:k] [redacted:k] post"
