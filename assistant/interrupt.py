"""Long calls into C (loading a GGUF model) made interruptible by Ctrl-C and SIGTERM.

Guards "Ctrl-C stops at once": Python delivers a signal to the main thread only between
bytecodes, so a model load that spends seconds inside llama.cpp would swallow Ctrl-C until it
returns (and a run then went on as if nothing happened). The call runs in a daemon worker while
the main thread waits in short slices, so KeyboardInterrupt is raised in the caller at once; the
worker is abandoned (it holds no lock, writes nothing, and dies with the process), and the
real stdout/stderr are put back first, since a load may hold them pointed at /dev/null.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Callable, TypeVar

T = TypeVar("T")
_SLICE = 0.05   # seconds between checks for a pending signal


def call_interruptibly(fn: Callable[[], T], *, name: str = "worker") -> T:
    """fn() run in a daemon thread; its result or exception, or KeyboardInterrupt at once."""
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as it is
            box["error"] = exc

    # llama-cpp-python points fds 1 and 2 at /dev/null while it loads (suppress_stdout_stderr):
    # keep the real ones, so that what the caller prints after an interrupt is not lost with
    # the abandoned load still holding them redirected
    saved = [os.dup(fd) for fd in (1, 2)]
    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(_SLICE)
    except KeyboardInterrupt:
        for fd, real in zip((1, 2), saved):
            os.dup2(real, fd)
        # it swaps the sys.stdout/sys.stderr objects too: put the interpreter's own back
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        raise
    finally:
        for real in saved:
            os.close(real)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


__all__ = ["call_interruptibly"]
