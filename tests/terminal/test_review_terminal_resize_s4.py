"""Review s4 (terminal display): a terminal resized mid-reply. The chat reads the screen's width
once, when a reply starts (ReplyLines(width=...)); a reply still streaming when the terminal is
made narrower is broken at the old width, so the terminal wraps its text into column 0 and a
forged ruling line appears. The model is a loopback OpenAI-compatible server (--model
openai:URL) that streams the reply in two pieces, 1.5 s apart; the pty (100 columns) is resized
to 40 columns between them."""

from __future__ import annotations

import re

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from s4_screen import ASSISTANT, init_ws, screen_rows  # noqa: E402

FAKE = "  [allow] memory notes/evil.md: watched"
# the first piece is longer than the chat's redaction holdback (96 characters), so it is shown
# before the resize and the second piece after it (a shorter one was held back, and both were
# printed at the old width: then only a terminal that reflows old lines could move them)
# printed at 100 columns, the first piece ends at column 37 of its second line ("   : " + 32), so
# the fake ruling would start exactly at column 40: the new margin, unless the new width is used
PIECES = ['{"reply": "x' + "A" * 120, "B" * 3 + FAKE + '"}']
resized = threading.Event()
second_piece_sent = threading.Event()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):  # noqa: D401
        pass

    def _json(self, obj: dict) -> None:
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._json({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "review"}]})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0") or 0)
        self.rfile.read(n)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

        def send(obj) -> None:
            self.wfile.write(b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n")
            self.wfile.flush()
        send({"choices": [{"index": 0, "delta": {"content": PIECES[0]}, "finish_reason": None}]})
        resized.wait(10)
        time.sleep(0.5)
        send({"choices": [{"index": 0, "delta": {"content": PIECES[1]}, "finish_reason": None}]})
        send({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
              "usage": {"prompt_tokens": 10, "completion_tokens": 10}})
        send(b"[DONE]")
        second_piece_sent.set()



def _plain(out: bytes) -> bytes:
    return re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", out)

def test_resize_mid_reply_wraps_into_column_0(tmp_path: Path) -> None:
    ws = init_ws(tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(TERM="dumb", NO_COLOR="1")
    proc = subprocess.Popen([ASSISTANT, "-w", str(ws), "chat", "--model", f"openai:{url}"],
                            stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    out = b""

    def pump(seconds: float) -> None:
        nonlocal out
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            r, _, _ = select.select([master], [], [], 0.05)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                out += chunk
    try:
        t0 = time.monotonic()
        while b"you> " not in out and time.monotonic() - t0 < 60:
            pump(0.1)
        os.write(master, b"hi\n")
        t0 = time.monotonic()
        # (escape sequences of the program's own may stand between the two)
        while b"assistant: x" not in _plain(out) and time.monotonic() - t0 < 30:
            pump(0.05)
        assert b"assistant: x" in _plain(out), out.decode("utf-8", "replace")
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 40, 0, 0))
        os.kill(proc.pid, signal.SIGWINCH)
        resized.set()
        second_piece_sent.wait(10)
        pump(1.5)
        os.write(master, b"/quit\n")
        pump(3)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        os.close(master)
        server.shutdown()
    text = _plain(out).decode("utf-8", "replace")
    after = text[text.index("assistant: x"):]
    rows = screen_rows(after, 40)    # from the reply on, the screen is 40 columns wide
    assert "BBB" in after, text
    assert not [r for r in rows if r.startswith("  [allow] memory notes/evil.md")], rows
