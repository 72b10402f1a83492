"""Long calls into C (loading a GGUF model) made interruptible by Ctrl-C and SIGTERM.

Guards "Ctrl-C stops at once": Python delivers a signal to the main thread only between
bytecodes, so a model load that spends seconds inside llama.cpp would swallow Ctrl-C until it
returns (and a run then went on as if nothing happened). The call runs in a daemon worker while
the main thread waits in short slices, so KeyboardInterrupt is raised in the caller at once; the
worker is abandoned (it holds no lock, writes nothing, and dies with the process).
"""

from __future__ import annotations

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

    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(_SLICE)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


__all__ = ["call_interruptibly"]
