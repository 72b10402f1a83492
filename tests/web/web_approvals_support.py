"""Helpers for the approval page tests (no tests here): a workspace, requests in its inbox, the
real `assistant approvals serve` on loopback in a child process, and form parsing."""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from assistant.workspace.layout import init_workspace
from policy.approvals import Inbox, Request, sha256_hex
from policy.kinds import offers

from bounded import wait_for  # noqa: F401 - re-exported: the web tests import it from here

PY = sys.executable


def env(**extra: str) -> dict:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    out.update(extra)
    return out


def make_ws(tmp_path: Path, *, approvals: str = "") -> Path:
    """A fresh workspace; `approvals` replaces the example's `notify = []` line in [approvals]."""
    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    cfg = ws / "config.toml"
    text = cfg.read_text().replace("opslimit = 3", "opslimit = 1").replace("memlimit_mib = 256", "memlimit_mib = 8")
    text = re.sub(r'(?m)^(web_url = ""|push = \[\])\n', "", text)     # set_approvals / approvals= say them
    if approvals:
        assert "notify = []" in text
        text = text.replace("notify = []", approvals)
    cfg.write_text(text)
    (ws / "state" / "approvals").mkdir(parents=True, exist_ok=True)
    return ws


def set_approvals(ws: Path, lines: str) -> None:
    """Put `lines` into [approvals] (replacing the notify line written by make_ws or the example)."""
    cfg = ws / "config.toml"
    text = cfg.read_text()
    text = re.sub(r"(?m)^notify = .*$", lines.replace("\\", "\\\\"), text, count=1)
    cfg.write_text(text)


def file_request(ws: Path, content: str, *, target: str = "people/ana.md", current: str | None = None,
                 timeout: float = 600.0, run_id: str = "20261201T000000Z-run-abcdef") -> Request:
    """A memory request in the inbox, as the gate files it."""
    inbox = Inbox(ws / "state" / "approvals")
    req, _ = inbox.create(run_id=run_id, kind="memory", target=target, summary=f"memory_write {target}",
                          reason="memory writes in unattended runs need approval", sha256=sha256_hex(content.encode()),
                          content=content, current=current, content_exact=True, offers=offers("memory", target),
                          timeout=timeout)
    return req


def links(ws: Path, req: Request, base: str) -> dict[str, str]:
    from assistant.approvals.links import load_signer

    return dict(load_signer(ws / "state", base).urls(req))


def answer_file(ws: Path, rid: str) -> Path:
    return ws / "state" / "approvals" / f"{rid}.answer.json"


def audit_events(ws: Path) -> list[dict]:
    p = ws / "state" / "audit.jsonl"
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()] if p.exists() else []


def web_refusals(ws: Path) -> list[dict]:
    return [e for e in audit_events(ws) if e.get("event") == "web" and e.get("verdict") == "refused"]


class Serve:
    """`assistant approvals serve --listen 127.0.0.1:0` in a child; .base, .login_url."""

    def __init__(self, ws: Path, *extra: str, listen: str = "127.0.0.1:0") -> None:
        self.proc = subprocess.Popen([PY, "-m", "assistant", "-w", str(ws), "approvals", "serve", "--listen", listen,
                                      *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env(), stdin=subprocess.DEVNULL, start_new_session=True)
        self.lines: list[str] = []
        self.login_url = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            if line.startswith("log in: "):
                self.login_url = line.split("log in: ", 1)[1].strip()
                break
        if not self.login_url:
            self.stop()
            raise AssertionError("serve did not start: " + "".join(self.lines) + self.proc.stderr.read())
        self.base = self.login_url.split("/login?", 1)[0]
        self.token = self.login_url.split("token=", 1)[1]
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(self.base + "/", timeout=2)
                return
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError("serve never answered")

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, follow_redirects=False, timeout=20)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)
        for f in (self.proc.stdout, self.proc.stderr):
            if f:
                f.close()

    def __enter__(self) -> "Serve":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_INPUT = re.compile(r'<input type="hidden" name="([a-z0-9]+)" value="([^"]*)">')
_FORM = re.compile(r'<form method="post" action="([^"]+)"[^>]*>(.*?)</form>', re.S)


def forms(page: str) -> dict[str, tuple[str, dict[str, str]]]:
    """{"approve"|"deny": (action path, hidden fields)} of a request page."""
    out = {}
    for action, inner in _FORM.findall(page):
        action = html.unescape(action)
        fields = {k: html.unescape(v) for k, v in _INPUT.findall(inner)}
        out[action.rsplit("/", 1)[1]] = (action, fields)
    return out


