"""Review s4 (timeouts vs writes, chat): Ctrl-C while a memory_write is past its writer's point
of no return. The chat waits 2 s, says "interrupted; its write had already begun and was not
stopped", and the person leaves (/quit): the process exits with the write's tail still running
in a daemon thread, so the note is on disk but the audit log never gets its "written" line
(history's lock was busy for 5 s, within its own 10 s bound). Promise: nothing is half-written;
every write is in the audit log."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from s4_screen import ASSISTANT, init_ws  # noqa: E402

import pty
import select
import signal
import struct
import termios


def test_interrupt_after_commit_then_quit_loses_the_audit_line(tmp_path: Path) -> None:
    ws = init_ws(tmp_path)
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"tool": "memory_write", "args": {"path": "notes/e.md", "content": "landed\n"}},
                                  {"reply": "ok"}]))
    hist = os.open(ws / "history" / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    proc = subprocess.Popen([ASSISTANT, "-w", str(ws), "chat", "--model", f"script:{script}"],
                            stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                            env={**os.environ, "TERM": "dumb", "NO_COLOR": "1"})
    os.close(slave)
    out = b""

    def pump(until: float) -> None:
        nonlocal out
        while time.monotonic() < until:
            r, _, _ = select.select([master], [], [], 0.05)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                out += chunk
    note = ws / "memory" / "notes" / "e.md"
    try:
        t0 = time.monotonic()
        while b"you> " not in out and time.monotonic() - t0 < 30:
            pump(time.monotonic() + 0.1)
        fcntl.flock(hist, fcntl.LOCK_EX)
        os.write(master, b"write it\n")
        t0 = time.monotonic()
        while not note.exists() and time.monotonic() - t0 < 20:
            pump(time.monotonic() + 0.02)
        assert note.exists(), out.decode("utf-8", "replace")
        os.kill(proc.pid, signal.SIGINT)          # Ctrl-C: the writer has committed
        pump(time.monotonic() + 3.0)
        os.write(master, b"/quit\n")
        deadline = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < deadline:
            pump(time.monotonic() + 0.1)
        time.sleep(max(0.0, 5 - (time.monotonic() - t0)))
        fcntl.flock(hist, fcntl.LOCK_UN)          # history's lock: held 5 s (its bound is 10 s)
    finally:
        os.close(hist)
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        os.close(master)
    subprocess.run([ASSISTANT, "-w", str(ws), "memory", "log", "notes/e.md"], capture_output=True, timeout=60)
    assert note.read_bytes() == b"landed\n"
    records = [json.loads(line) for line in (ws / "state" / "audit.jsonl").read_text().splitlines() if line.strip()]
    assert any(r.get("event") == "written" and r.get("target") == "notes/e.md" for r in records), (
        "notes/e.md is on disk but the audit log has no 'written' line for it:\n" + out.decode("utf-8", "replace"))
