"""Durations in config: '30s', '15m', '2h', '1d', '250ms', or a plain number of seconds.

Guards that every timeout in config.toml means the same thing wherever it is read: this is
the one parser (policy/ and assistant/ both use it; it imports nothing of either).
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}
EXAMPLE = '"30s"'   # what a good value looks like, for error messages


def parse_duration(value: object, setting: str = "duration") -> float:
    """'15m' -> 900.0; a number >= 0 is seconds. ValueError naming `setting` otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    if isinstance(value, str):
        m = _DURATION.match(value)
        if m:
            return float(m.group(1)) * _UNITS[m.group(2)]
    raise ValueError(f"{setting}: expected a duration like '30s' or '15m', got {value!r}")


__all__ = ["parse_duration", "EXAMPLE"]
