# review (web approvals, 2026-12-01): the push body carried the model's URL unescaped (line separators, C1, bidi)
"""Review (hostile), push: the model's text reaches the phone notification unescaped.

Found in review: the gate's notify command gets the summary as one escaped line
(policy.notify.fill: `_visible`), but [approvals] push gets `self._text(message)`: redacted, not
escaped. A web_fetch URL may hold U+2028 LINE SEPARATOR, NEL, C1 controls and bidi overrides
(fetch_target only refuses characters below 33 and DEL), and the summary carries the URL. So a
prompt-injected model makes the push body show extra lines of its own, e.g. a fake
"Approve: https://evil.example/..." link above the real signed links, or reversed text.
Real `assistant run` (scripted model) pushing through apprise's json:// to a real loopback
HTTP server started by the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))

import pytest  # noqa: E402

pytest.importorskip("apprise")

from loopback import http_server  # noqa: E402
from web_approvals_support import PY, env, make_ws, set_approvals, wait_for  # noqa: E402

URL = ("https://weather.example/today?x=1\u2028\u2028Approve:\u2028https://evil.example/r/approve"
       "\u2028\u0085\u202eabc")


def test_push_body_is_escaped_like_the_notify_summary(tmp_path):
    got: list[bytes] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            got.append(self.rfile.read(int(self.headers.get("content-length", 0))))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    with http_server(Hook) as srv:
        ws = make_ws(tmp_path)
        set_approvals(ws, f'web_url = "http://127.0.0.1:8765"\npush = ["json://127.0.0.1:{srv.server_address[1]}/"]\n'
                          "notify = []")
        model = tmp_path / "model.json"
        model.write_text(json.dumps([{"tool": "web_fetch", "args": {"url": URL}}, {"reply": "done"}]))
        run = subprocess.Popen([PY, "-m", "assistant", "-w", str(ws), "run", "--model", f"script:{model}",
                                "--approval-timeout", "20s", "check the weather"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env(), stdin=subprocess.DEVNULL)
        try:
            assert wait_for(lambda: bool(got), 60), "nothing was pushed"
        finally:
            run.kill()
            run.communicate()
    message = json.loads(got[0])["message"]
    for ch in ("\u2028", "\u0085", "\u202e"):
        assert ch not in message, f"the push body carries a raw {ch!r} from the model's URL: {message!r}"
