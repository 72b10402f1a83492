"""A real pseudo-terminal running `python -m assistant ARGS` for the terminal tests (no tests here).

The child gets SIGINT back at its default disposition before it starts: a test runner started
with SIGINT ignored (`nohup pytest &`) must not pass that on, or Ctrl-C would do nothing.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time

ROWS, COLS = 40, 200


def default_sigint() -> None:
    """For subprocess.Popen(preexec_fn=...): SIGINT as a terminal would deliver it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Pty:
    """`python -m assistant ARGS` on a real pseudo-terminal (input() and readline are used)."""

    def __init__(self, *args: str, env: dict | None = None, rows: int = ROWS, cols: int = COLS) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:   # child
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.execve(sys.executable, [sys.executable, "-m", "assistant", *args], env or clean_env())
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.out = b""
        self.pos = 0     # read_until looks only past the previous match

    def _pump(self, wait: float) -> bool:
        r, _, _ = select.select([self.fd], [], [], wait)
        if not r:
            return True
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            return False
        self.out += chunk
        return True

    def read_until(self, needle: str, timeout: float = 30) -> str:
        end = time.monotonic() + timeout
        want = needle.encode()
        while want not in self.out[self.pos:]:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {needle!r}; got:\n{self.text}")
            if not self._pump(left):
                raise AssertionError(f"terminal closed waiting for {needle!r}; got:\n{self.text}")
        self.pos = self.out.index(want, self.pos) + len(want)
        return self.text

    def settle(self, seconds: float) -> None:
        """Keep reading for a while (output that should NOT come must have had its chance)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if not self._pump(max(0.0, end - time.monotonic())):
                return

    def send(self, data: str) -> None:
        os.write(self.fd, data.encode())

    def interrupt(self) -> None:
        """Ctrl-C. readline can miss a SIGINT that lands just before it waits for a key, so give
        it a moment first; a person's Ctrl-C never comes that fast."""
        time.sleep(0.4)
        self.send("\x03")

    def wait(self, timeout: float = 20) -> int:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self._pump(0.05)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
        self.kill()
        raise AssertionError(f"still running; got:\n{self.text}")

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass

    def quit_at_prompt(self) -> None:
        """Wait for the next `you> `, type /quit; the chat must exit 0."""
        self.read_until("you> ")
        self.send("/quit\r")
        assert self.wait() == 0

    def one_turn_then_quit(self, said: str, *until: str, answer: str | None = None) -> str:
        """A chat's whole life: at `you> ` say `said`; with `answer`, read until the question
        (`allow?`) and answer it; read until each of `until` in turn, then /quit; the chat must
        exit 0. Returns the screen as it was at the question (or at the reply); the child is
        killed whatever happens."""
        try:
            self.read_until("you> ")
            self.send(said + "\r")
            shown = ""
            if answer is not None:
                shown = self.read_until("allow?")
                self.send(answer + "\r")
            for needle in until:
                read = self.read_until(needle)
                shown = shown or read
            self.send("/quit\r")
            assert self.wait() == 0
        finally:
            self.kill()
        return shown

    @property
    def raw(self) -> bytes:
        return self.out

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", "replace").replace("\r\n", "\n")


def clean_env(**extra: str) -> dict:
    """The child's environment: no ASSISTANT_* from the runner, and NO_COLOR=1 (these tests read
    words and escapes; tests/cli/test_colour_on_terminal.py turns colour on: NO_COLOR="")."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env["NO_COLOR"] = "1"
    env.update(extra)
    return env
