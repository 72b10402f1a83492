"""The grammar holds an integer argument to its schema's bounds, as the strict validator does
(a 270M model spent its step on `"limit": 1000000000000000` when only the type was held)."""

from __future__ import annotations

import re

import pytest

from assistant.models.grammar import integer_range, schema_to_gbnf


def _as_regex(alternatives: list[str]) -> re.Pattern[str]:
    """The same alternatives as a Python regex (GBNF's "x" literals and [a-b] classes only)."""
    parts = [re.sub(r'"(\d+)"', r"\1", alt).replace(" ", "") for alt in alternatives]
    return re.compile("^(?:" + "|".join(parts) + ")$")


@pytest.mark.parametrize("lo, hi", [(0, 0), (0, 9), (1, 200), (0, 1000), (7, 7), (13, 4321), (0, 50),
                                    (99, 101), (1, 1_000_000), (250, 259), (10, 99)])
def test_exactly_the_numbers_in_range_match(lo, hi):
    pattern = _as_regex(integer_range(lo, hi))
    top = min(hi * 10 + 10, 2_000_100)
    matched = [n for n in range(0, top) if pattern.match(str(n))]
    assert matched == list(range(lo, hi + 1))
    assert not pattern.match("0" + str(max(lo, 1)))         # no leading zero
    assert not pattern.match("-1")


def test_a_bounded_integer_argument_is_bounded_in_the_grammar():
    schema = {"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 200}},
              "required": ["limit"], "additionalProperties": False}
    grammar = schema_to_gbnf(schema)
    assert "[0-9]{0,15}" not in grammar and '"-"' not in grammar
    assert _as_regex(integer_range(1, 200)).match("200") and not _as_regex(integer_range(1, 200)).match("201")
