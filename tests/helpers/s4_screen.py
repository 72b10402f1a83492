"""Review helper (not a test): run a command on a real pseudo-terminal of a known size and
replay its output through a minimal terminal model (autowrap at the right margin, 8-column tab
stops, cell widths from the C library's wcwidth, as xterm/VTE use), giving the rows a person sees."""

from __future__ import annotations

import ctypes
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
ASSISTANT = str(VENV_BIN / "assistant")

_libc = ctypes.CDLL("libc.so.6")
_libc.setlocale.restype = ctypes.c_char_p
_libc.setlocale(6, b"C.UTF-8")       # LC_ALL
_libc.wcwidth.argtypes = [ctypes.c_wchar]


def wcwidth(ch: str) -> int:
    return _libc.wcwidth(ch)


_CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\x01|\x02")


def screen_rows(data: str, width: int) -> list[str]:
    """The rows a terminal of `width` columns shows for `data` (no scrolling limit)."""
    data = data.replace("\x1b[K", "\x0b")    # erase to end of line, kept as a marker
    data = _CSI.sub("", data)
    rows: list[list[str]] = [[]]
    col = 0
    pending_wrap = False

    def put(ch: str, w: int) -> None:
        nonlocal col, pending_wrap
        if pending_wrap or col + w > width:
            rows.append([])
            col = 0
            pending_wrap = False
        row = rows[-1]
        while len(row) < col:
            row.append(" ")
        row[col:col + 1] = [ch]
        for _ in range(w - 1):
            row.append("")
        col += w
        if col >= width:
            col = width - 1
            pending_wrap = True

    for ch in data:
        if ch == "\n":
            rows.append([])
            col = 0
            pending_wrap = False
        elif ch == "\r":
            col = 0
            pending_wrap = False
        elif ch == "\t":
            col = min(width - 1, (col // 8 + 1) * 8)
            pending_wrap = False
        elif ch == "\x0b":
            del rows[-1][col:]
        elif ch == "\b":
            col = max(0, col - 1)
        else:
            w = wcwidth(ch)
            if w < 0:
                continue
            if w == 0:
                if rows[-1]:
                    rows[-1][-1] += ch
                continue
            put(ch, w)
    return ["".join(r) for r in rows]


def run_on_pty(argv: list[str], inputs: list[str], *, cols: int = 60, rows: int = 40,
               env: dict | None = None, cwd: str | None = None, timeout: float = 60.0,
               wait_for: str = "you> ") -> str:
    """Run argv on a pty of cols x rows; send each input once the prompt `wait_for` shows."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    e = dict(os.environ)
    e.pop("COLUMNS", None)
    e.pop("LINES", None)
    e["TERM"] = "dumb"
    e["NO_COLOR"] = "1"
    if env:
        e.update(env)
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=e, cwd=cwd,
                            start_new_session=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    pending = list(inputs)
    seen_prompts = 0
    try:
        while time.monotonic() < deadline:
            r, _, _ = select.select([master], [], [], 0.2)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            text = out.decode("utf-8", "replace")
            if pending and text.count(wait_for) > seen_prompts:
                seen_prompts = text.count(wait_for)
                os.write(master, pending.pop(0).encode() + b"\n")
            if proc.poll() is not None and not r:
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        os.close(master)
    return out.decode("utf-8", "replace")


def init_ws(tmp: Path) -> Path:
    ws = tmp / "ws"
    subprocess.run([ASSISTANT, "init", "--example", str(ws)], check=True, capture_output=True)
    return ws
