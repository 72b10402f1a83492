"""Times as a person reads them: local time with its zone, the same way on every screen.

Guards one spelling for every time the CLI shows (runs, memory log, approvals, audit show,
grants, vault list, schedule list, memory ls --sort changed): `2026-12-01 06:00:27 CET`, in the
machine's local zone (TZ honoured), with the zone's name (or its offset when the zone has no
name). What is stored stays UTC (ISO 8601 with Z); `--json` output keeps the stored value.
A value that is not a time is shown escaped as it is, never guessed.
"""

from __future__ import annotations

from datetime import datetime, timezone

from assistant.display.terminal import escape

def parse(value: str) -> datetime | None:
    """An ISO 8601 time as stored here ('2026-12-01T05:00:27Z', with milliseconds, or with an
    offset) as an aware datetime; a time without a zone is taken as UTC. None if it is not one."""
    text = value.strip()
    if not text or len(text) > 64:
        return None
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def local_time(value: str | float | int | datetime | None, *, seconds: bool = True) -> str:
    """`value` (a stored ISO time, seconds since the epoch, or a datetime; naive = UTC) in local
    time with its zone: '2026-12-01 06:00:27 CET'. '?' for None or an empty value; anything that
    is not a time is returned escaped, as it is."""
    if value is None or value == "":
        return "?"
    if isinstance(value, datetime):
        when = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            when = datetime.fromtimestamp(float(value), timezone.utc)
        except (OverflowError, OSError, ValueError):
            return escape(str(value), newlines=False)
    else:
        parsed = parse(str(value))
        if parsed is None:
            return escape(str(value), newlines=False)
        when = parsed
    try:
        local = when.astimezone()
    except (OverflowError, OSError, ValueError):
        return escape(str(value), newlines=False)
    zone = local.tzname() or local.strftime("%z")
    # (formatted by hand: strftime costs ~6 us a call, and memory log shows 10,000 of these)
    text = (f"{local.year:04d}-{local.month:02d}-{local.day:02d} {local.hour:02d}:{local.minute:02d}"
            + (f":{local.second:02d}" if seconds else ""))
    return text + (f" {zone}" if zone else "")


__all__ = ["local_time", "parse"]
