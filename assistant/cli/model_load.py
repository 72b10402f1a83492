"""Loading a session's model for `chat` and `run`: interruptible, with a progress bar on a terminal.

Guards "Ctrl-C stops at once" and "the person sees that something is happening". The load
runs through `call_interruptibly` (a load inside llama.cpp would swallow Ctrl-C otherwise).
While the model file is assembled (the embedded model, first run) or loaded, and only when
stderr is a terminal, a bar with the elapsed seconds is redrawn on one line; the loader's own
`[model] ...` lines still appear above it. Piped, stderr receives exactly the loader's lines
and nothing else. The bar writes to its own copy of the terminal's descriptor (llama.cpp
points descriptor 2 elsewhere while it loads) and is cleared before the caller prints again,
whether the load returned, failed or was interrupted.
"""

from __future__ import annotations

import io
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

from assistant.agent.interrupt import call_interruptibly
from assistant.display.terminal import is_terminal
from assistant.models.base import Model, ModelError
from assistant.models.loader import load_model

if TYPE_CHECKING:
    from assistant.session import AssistantSession

__all__ = ["LoadBar", "LoadInterrupted", "load_session_model"]

TICK = 0.1          # seconds between redraws
WIDTH = 12          # cells of the bar
PREFIX = "[model] "


class LoadBar(io.TextIOBase):
    """A text stream for the loader's progress lines that also keeps a bar moving below them.

    `write()` passes the loader's lines through; a line `[model] assembling ...` or
    `[model] loading ...` starts (or renames) the phase the bar shows, `[model] loaded ...`
    ends it. An indeterminate bar (no byte counts are offered by the loader), with seconds."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = os.dup(fd)
        self._lock = threading.Lock()
        self._phase = ""
        self._since = 0.0
        self._shown = False
        self._line_start = True   # the bar is drawn only below a finished line, never over one
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="model-load-bar", daemon=True)

    # -- the stream the loader prints to --------------------------------------------------

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            self._clear()
            self._out(text)
            if text:
                self._line_start = text.endswith("\n")
            for line in text.splitlines():
                if line.startswith(PREFIX + "loaded"):
                    self._phase = ""
                elif line.startswith(PREFIX + "assembling"):
                    self._phase, self._since = "assembling the model", time.monotonic()
                elif line.startswith(PREFIX + "loading"):
                    self._phase, self._since = "loading the model", time.monotonic()
            self._draw()
        return len(text)

    def flush(self) -> None:
        pass

    # -- the bar ----------------------------------------------------------------------------

    def __enter__(self) -> "LoadBar":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(2 * TICK + 1.0)
        with self._lock:
            self._clear()
            self._phase = ""
        if not self._thread.is_alive():
            os.close(self._fd)

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            with self._lock:
                self._draw()

    def _draw(self) -> None:
        if not self._phase or not self._line_start or self._stop.is_set():
            return
        elapsed = time.monotonic() - self._since
        pos = int(elapsed / TICK) % (2 * (WIDTH - 3))
        pos = pos if pos < WIDTH - 3 else 2 * (WIDTH - 3) - pos
        bar = " " * pos + "===" + " " * (WIDTH - 3 - pos)
        self._out(f"\r{PREFIX}{self._phase} [{bar}] {elapsed:.0f}s\x1b[K")
        self._shown = True

    def _clear(self) -> None:
        if self._shown:
            self._out("\r\x1b[K")
            self._shown = False

    def _out(self, text: str) -> None:
        try:
            os.write(self._fd, text.encode("utf-8", "replace"))
        except OSError:
            pass   # a closed terminal: the load goes on, nothing to show it on


class LoadInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM in a run) while the model loaded. The abandoned load goes on inside
    llama.cpp, which points descriptors 1 and 2 at /dev/null (and swaps sys.stdout/sys.stderr)
    around each of its steps: what the caller says now goes to `out` / `err`, streams on copies
    of the real stdout and stderr taken before the load, which no step of it can redirect."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        super().__init__()
        self.out = out
        self.err = err


def load_session_model(session: "AssistantSession", spec: str | None, *, interrupted_exit_code: int | None = None) -> "Model":
    """The session's model, loaded interruptibly, with a bar on a terminal.

    A ModelError is recorded in the transcript and raised. Ctrl-C (or SIGTERM in a run) is
    recorded as the session's end (with `interrupted_exit_code`) and raised as LoadInterrupted."""
    def load(progress: "io.TextIOBase | str") -> "Model":
        return call_interruptibly(lambda: load_model(spec, session.ws, progress=progress,  # type: ignore[arg-type]
                                                     vault=session.vault), name="model-load")

    sys.stdout.flush()
    sys.stderr.flush()
    real = [os.dup(1), os.dup(2)]
    try:
        if is_terminal(2):
            with LoadBar(2) as bar:
                return load(bar)
        return load("stderr")
    except ModelError as exc:
        if session.transcript is not None:
            session.transcript.append("error", message=str(exc))
        raise
    except KeyboardInterrupt:
        if session.transcript is not None:
            extra = {} if interrupted_exit_code is None else {"exit_code": interrupted_exit_code}
            session.transcript.append("session_end", outcome="interrupted", **extra)
        out, err = (open(fd, "w", encoding="utf-8", errors="replace", closefd=True) for fd in real)
        real = []
        raise LoadInterrupted(out, err) from None
    finally:
        for fd in real:
            os.close(fd)
