"""Hostile review s4 (2026-12-01), terminal display: a terminal made narrower while a reply
streams. The chat read the screen's width once, when the reply started, so the rest of the
reply was broken at the old width and the terminal wrapped a forged ruling into column 0. Now
the width is read at every write. The model is a loopback OpenAI-compatible server streaming the
reply in two pieces; the pty (100 columns) is resized to 40 between them."""

from __future__ import annotations

import fcntl
import json
import struct
import termios
import threading

from e2e_support import make_ws
from loopback import http_server
from recording_server import QuietHandler, send_json
from s4_screen import screen_rows
from tty_harness import Pty

FAKE = "  [allow] memory notes/evil.md: watched"
# The first piece is longer than the chat's redaction holdback (96 characters), so its start is
# shown before the resize ("assistant: x" and 24 A's, up to column 36) and the rest after it.
# Broken at the old 100 columns, that rest would put the fake ruling exactly at column 40 of a
# line ("   : " + 32 A's + "BBB"), the new margin: only the new width keeps it off column 0.
PIECES = ['{"reply": "x' + "A" * 120, "BBB" + FAKE + '"}']


def _streaming_model(resized: threading.Event) -> type[QuietHandler]:
    class Model(QuietHandler):
        protocol_version = "HTTP/1.0"          # the stream ends when the connection closes

        def do_GET(self):
            send_json(self, {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "test"}]})

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()

            def event(data: bytes) -> None:
                self.wfile.write(b"data: " + data + b"\n\n")
                self.wfile.flush()

            def delta(content: str) -> None:
                event(json.dumps({"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}).encode())

            delta(PIECES[0])
            resized.wait(30)
            delta(PIECES[1])
            event(json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 10, "completion_tokens": 10}}).encode())
            event(b"[DONE]")
    return Model


def test_a_terminal_made_narrower_mid_reply_breaks_the_rest_at_the_new_width(tmp_path):
    ws = make_ws(tmp_path)
    resized = threading.Event()
    with http_server(_streaming_model(resized)) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        t = Pty("-w", str(ws), "chat", "--model", f"openai:{url}", cols=100)
        try:
            t.read_until("you> ")
            t.send("hi\r")
            t.read_until("assistant: x")             # the first piece is on the screen
            start = t.pos - len("assistant: x")
            fcntl.ioctl(t.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 40, 0, 0))   # SIGWINCH to the chat
            resized.set()
            t.read_until("watched")
            t.quit_at_prompt()
        finally:
            t.kill()
    after = t.out[start:].decode("utf-8", "replace").replace("\r\n", "\n")
    rows = screen_rows(after, 40)                   # from the resize on, the screen is 40 columns wide
    assert "BBB" in after, after
    assert not [r for r in rows if r.startswith("  [allow]")], rows
