"""When this process started and how long the model took to load, for the transcript's
session_start record: so a reader can split a door's wall time into start-up, load, the model's
steps (each `step` record's `model_s`) and the harness's own time (the rest).

Guards honest figures: the process start is the kernel's (/proc/self/stat, to its clock tick),
not a time taken once Python had already imported the program; where the kernel does not say,
the fields are left out rather than guessed.
"""

from __future__ import annotations

import os
import time

__all__ = ["process_started", "session_start_times"]


def process_started() -> float | None:
    """This process's start as a Unix time in seconds (to 1/CLK_TCK), or None if unknown."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        ticks = int(stat[stat.rindex(b")") + 2:].split()[19])    # field 22: starttime, in ticks since boot
        since_start = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return time.time() - since_start if since_start >= 0 else None


def session_start_times(load_s: float) -> dict[str, float]:
    """The session_start fields: `process_started` (Unix time), `startup_s` (process start to
    now, less the load) and `load_s` (the model's load, seconds); only load_s when the process
    start is unknown."""
    started = process_started()
    out = {"load_s": round(load_s, 3)}
    if started is not None:
        out["process_started"] = round(started, 3)
        out["startup_s"] = round(max(0.0, time.time() - started - load_s), 3)
    return out
