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
from typing import NoReturn, Callable, TextIO, TypeVar

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
    try:
        # started inside the try: the worker may already have pointed fds 1 and 2 at /dev/null
        # when a Ctrl-C lands in start() itself (it waits for the GIL the worker's imports
        # hold), and the outcome line printed after the interrupt must not go there
        worker.start()
        while worker.is_alive():
            worker.join(_SLICE)
    except KeyboardInterrupt:
        _ABANDONED.append(worker)
        for fd, real in zip((1, 2), saved):
            os.dup2(real, fd)
        # It swaps the sys.stdout/sys.stderr objects too, and the abandoned load may point fds
        # 1 and 2 at /dev/null again after this (a Ctrl-C just before it entered llama.cpp's
        # redirection): what the caller prints goes to copies of the real ones, out of reach.
        _REAL[:] = [_own_copy(sys.__stdout__, saved[0]), _own_copy(sys.__stderr__, saved[1])]
        sys.stdout, sys.stderr = _REAL
        raise
    finally:
        for real in saved:
            os.close(real)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


class DoneFlag:
    """A worker's "finished" flag that the main thread can wait on while Ctrl-C may land.

    threading.Event.wait is a Condition wait: a KeyboardInterrupt raised as it re-takes its
    lock leaves the lock released, and leaving its `with` then raises RuntimeError in place of
    the KeyboardInterrupt (seen under CI load). Here the wait is one C-level lock acquire, which
    a signal interrupts cleanly."""

    def __init__(self) -> None:
        self._held = threading.Lock()
        self._held.acquire()
        self._set = False

    def set(self) -> None:
        if not self._set:
            self._set = True
            self._held.release()

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float) -> bool:
        if self._set:
            return True
        if self._held.acquire(timeout=max(0.0, timeout)):
            self._held.release()
        return self._set


_REAL: list[TextIO] = []     # after an interrupt: [stdout, stderr] on copies of the real descriptors
_ABANDONED: list[threading.Thread] = []   # workers left running in C code after an interrupt


def abandon(worker: threading.Thread) -> None:
    """Count `worker` among the threads left running (a model step the caller stopped waiting
    for): leave() then ends the process without the shutdown that can crash under native code."""
    _ABANDONED.append(worker)


def leave(code: int) -> NoReturn:
    """Exit with `code`. If an interrupted call is still running in native code (llama.cpp
    loading weights), the interpreter's normal shutdown can crash under it (SIGSEGV after the
    outcome line was printed, seen 2-3 times in 32 runs), so the process ends with os._exit once
    every stream is flushed; the caller has already closed its session (transcript end event,
    open requests denied) before calling this."""
    if any(worker.is_alive() for worker in _ABANDONED):
        for stream in (*_REAL, sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


def real_streams() -> tuple[TextIO, TextIO]:
    """(stdout, stderr) to print on after call_interruptibly raised KeyboardInterrupt: the
    load it abandoned may swap sys.stdout/sys.stderr (and fds 1, 2) for /dev/null again at any
    moment, so a caller prints its outcome here. Before any interrupt: sys.stdout, sys.stderr."""
    if _REAL:
        return _REAL[0], _REAL[1]
    return sys.stdout, sys.stderr


def _own_copy(stream: TextIO, real_fd: int) -> TextIO:
    """A text stream like `stream` (the interpreter's stdout or stderr) writing to a duplicate of
    `real_fd`; `stream` itself if that cannot be made."""
    if stream is None:
        return stream
    try:
        return open(os.dup(real_fd), "w", encoding=stream.encoding, errors=stream.errors,
                    buffering=1, closefd=True)
    except (OSError, ValueError, AttributeError):
        return stream


__all__ = ["abandon", "call_interruptibly", "leave", "real_streams"]
