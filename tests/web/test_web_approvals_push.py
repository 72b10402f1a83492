"""[approvals] push against a real loopback HTTP receiver standing in for the push service
(apprise's json:// and ntfy:// pointed at 127.0.0.1): the signed links arrive (as ntfy "view"
actions, which only open a page), they work, nothing secret is in what was pushed, and a push
that fails denies the request at once and is logged."""

from __future__ import annotations

import http.server
import json
import subprocess
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from loopback import http_server, start_http, stop_http
from web_approvals_support import (PY, Serve, answer_file, audit_events, env, forms, make_ws, set_approvals,
                                   wait_for)

PASSPHRASE = "correct horse battery staple"
WIFI = "tangerine-Dream-4412-xyzzy"          # a vault value (never printed by this test)
NOTE = "Ana prefers green tea\n"


class Receiver:
    """A real HTTP server on 127.0.0.1 recording every request (path, headers, body)."""

    def __init__(self, status: int = 200) -> None:
        self.seen: list[dict] = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace")
                receiver.seen.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *a):
                pass

        self.server = start_http(Handler)
        self.port = self.server.server_address[1]

    def close(self) -> None:
        stop_http(self.server)


def _ws_with_vault(tmp_path: Path) -> Path:
    from assistant.secrets.vault import Vault

    ws = make_ws(tmp_path)
    Vault.create(ws / "vault.enc", PASSPHRASE, opslimit=1, memlimit=8 << 20).set("wifi", WIFI)
    return ws


def _run(ws: Path, tmp_path: Path):
    import subprocess

    script = tmp_path / "model.json"
    script.write_text(json.dumps([{"tool": "memory_write", "args": {"path": "people/ana.md", "content": NOTE}},
                                  {"reply": "saved"}]))
    return subprocess.Popen([PY, "-m", "assistant", "-w", str(ws), "run", "--model", f"script:{script}",
                             "--approval-timeout", "120s", f"note that Ana likes tea; the wifi password is {WIFI}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env(ASSISTANT_VAULT_PASSPHRASE=PASSPHRASE), stdin=subprocess.DEVNULL)


def test_push_carries_open_links_and_no_secret(tmp_path):
    ws = _ws_with_vault(tmp_path)
    receiver = Receiver()
    try:
        with Serve(ws) as server:
            set_approvals(ws, f'web_url = "{server.base}"\n'
                              f'push = ["json://127.0.0.1:{receiver.port}/hook", "ntfy://127.0.0.1:{receiver.port}/assistant"]\n'
                              'notify = []')
            run = _run(ws, tmp_path)
            try:
                assert wait_for(lambda: len(receiver.seen) >= 2, 90), "nothing was pushed"
                json_push = next(s for s in receiver.seen if s["path"] == "/hook")
                ntfy_push = next(s for s in receiver.seen if s["path"] != "/hook")
                message = json.loads(json_push["body"])["message"]
                approve_url = next(line.split(": ", 1)[1] for line in message.splitlines()
                                   if line.startswith("Approve: "))
                assert approve_url.startswith(server.base + "/r/") and "/approve?exp=" in approve_url
                for line in ("Review: ", "Deny: "):
                    assert any(m.startswith(line + server.base + "/r/") for m in message.splitlines())
                assert "people/ana.md" in message
                # ntfy: a click-through and "view" actions (open a URL), never an "http" action
                ntfy = json.dumps(ntfy_push)
                assert server.base in ntfy and "view, Approve" in ntfy and "http, " not in ntfy
                for push in receiver.seen:                   # nothing secret, not the content
                    blob = json.dumps(push)
                    assert WIFI not in blob and "green tea" not in blob
                with server.client() as c:
                    page = c.get("/" + approve_url.split("://", 1)[1].split("/", 1)[1])
                    assert page.status_code == 200 and WIFI not in page.text
                    action, fields = forms(page.text)["approve"]
                    assert c.post(action, data={**fields, "remember": "once"}).status_code == 200
                out, err = run.communicate(timeout=90)
            finally:
                if run.poll() is None:
                    run.kill()
                    run.wait()
    finally:
        receiver.close()
    assert run.returncode == 0, out[-2000:] + err[-2000:]
    assert (ws / "memory" / "people" / "ana.md").read_bytes() == NOTE.encode()


def test_a_failing_push_denies_at_once_and_is_logged(tmp_path):
    ws = make_ws(tmp_path)
    receiver = Receiver(status=500)
    try:
        set_approvals(ws, 'web_url = "http://127.0.0.1:9"\n'
                          f'push = ["json://127.0.0.1:{receiver.port}/tok-Zq81secretish"]\nnotify = []')
        run = _run(ws, tmp_path)
        out, err = run.communicate(timeout=120)
    finally:
        receiver.close()
    assert receiver.seen, "the push was never tried"
    assert run.returncode == 3, out[-2000:] + err[-2000:]
    assert not (ws / "memory" / "people" / "ana.md").exists()
    [answer] = list((ws / "state" / "approvals").glob("*.answer.json"))
    ans = json.loads(answer.read_text())
    assert ans["verdict"] == "denied" and ans["by"] == "run" and "push #1 (json://)" in ans["reason"]
    logged = [e for e in audit_events(ws) if "push #1" in str(e.get("reason", ""))]
    assert logged and all(e["verdict"] == "deny" for e in logged)
    everything = answer.read_text() + (ws / "state" / "audit.jsonl").read_text() + out + err
    assert "tok-Zq81secretish" not in everything          # the push URL (its token) is never echoed


def test_doctor_tries_the_push(tmp_path):
    import subprocess

    for status, expect in ((200, "took a test notification"), (500, "was not delivered")):
        ws = make_ws(tmp_path / str(status))
        receiver = Receiver(status=status)
        try:
            set_approvals(ws, f'push = ["json://127.0.0.1:{receiver.port}/hook-tok123"]\nnotify = []')
            r = subprocess.run([PY, "-m", "assistant", "-w", str(ws), "doctor"], capture_output=True, text=True,
                               env=env(), timeout=120)
        finally:
            receiver.close()
        assert expect in r.stdout + r.stderr
        assert receiver.seen and "test notification" in receiver.seen[0]["body"]
        assert "tok123" not in r.stdout + r.stderr


# review (web approvals): the push body carried the model's URL unescaped (line separators, C1, bidi)
URL = ("https://weather.example/today?x=1\u2028\u2028Approve:\u2028https://evil.example/r/approve"
       "\u2028\u0085\u202eabc")


def test_push_body_is_escaped_like_the_notify_summary(tmp_path):
    """The model's text reaches the phone notification unescaped.

    The gate's notify command gets the summary as one escaped line
    (policy.notify.fill: `_visible`), but [approvals] push gets `self._text(message)`: redacted, not
    escaped. A web_fetch URL may hold U+2028 LINE SEPARATOR, NEL, C1 controls and bidi overrides
    (fetch_target only refuses characters below 33 and DEL), and the summary carries the URL. So a
    prompt-injected model makes the push body show extra lines of its own, e.g. a fake
    "Approve: https://evil.example/..." link above the real signed links, or reversed text.
    Real `assistant run` (scripted model) pushing through apprise's json:// to a real loopback
    HTTP server started by the test."""
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
