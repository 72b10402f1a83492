"""JSON objects with one value per key: a key given twice is refused, never settled by a guess.

Guards every JSON this project trusts for a decision (the model's actions, grants.json): with
a key twice, which value counts differs between parsers, so an object like that is an error
the caller names in its own words.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["unique_keys"]

Pairs = list[tuple[str, object]]


def unique_keys(error: Callable[[str], Exception]) -> Callable[[Pairs], dict[str, object]]:
    """A json `object_pairs_hook` that raises `error(key)` for a key given twice."""

    def hook(pairs: Pairs) -> dict[str, object]:
        out: dict[str, object] = {}
        for key, value in pairs:
            if key in out:
                raise error(key)
            out[key] = value
        return out

    return hook
