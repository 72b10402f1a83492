"""The approval page in a real headless browser (Debian's chromium, driven over the DevTools
protocol): a phone-sized window opens the signed link from a real run's notification, the diff
is on the page, a scope is chosen and Approve is tapped (real mouse events, no script of ours on
the page), and the run writes the note. Skips only where chromium or websockets is not installed
(.ci/run installs both). Set ASSISTANT_DOCS_SCREENSHOT=path to keep the phone-sized screenshot (docs/)."""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from web_approvals_support import PY, Serve, env, make_ws, set_approvals, wait_for

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
pytest.importorskip("websockets", reason="websockets is not installed (pip install 'assistant[dev]')")  # the DevTools socket

PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}


class Browser:
    """chromium --headless with a DevTools websocket to its one page."""

    def __init__(self, profile: Path) -> None:
        from websockets.sync.client import connect

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
             "--disable-background-networking", "--remote-debugging-address=127.0.0.1",
             "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        port = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and port is None:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                break
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
        if port is None:
            self.close()
            raise AssertionError("chromium did not start its DevTools endpoint")
        pages = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
        page = next(p for p in pages if p.get("type") == "page")
        conn = connect(page["webSocketDebuggerUrl"], max_size=64 << 20, open_timeout=20)
        self.ws = conn.__enter__()
        self.ids = itertools.count(1)
        self.events: list[dict] = []

    def call(self, method: str, **params):
        n = next(self.ids)
        self.ws.send(json.dumps({"id": n, "method": method, "params": params}))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == n:
                if "error" in msg:
                    raise AssertionError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)
        raise AssertionError(f"{method}: no answer")

    def wait_event(self, name: str, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, e in enumerate(self.events):
                if e.get("method") == name:
                    return self.events.pop(i)
            try:
                self.events.append(json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic()))))
            except TimeoutError:
                break
        raise AssertionError(f"no {name} event")

    def navigate(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")

    def text(self) -> str:
        return self.call("Runtime.evaluate", expression="document.body.innerText", returnByValue=True)["result"]["value"]

    def tap(self, selector: str) -> None:
        """Scroll the element into view and click its centre with real mouse events."""
        rect = self.call("Runtime.evaluate", returnByValue=True, expression=(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"))
        x, y = rect["result"]["value"]
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def screenshot(self, *, full: bool = False) -> bytes:
        """The viewport, or (full) the whole page at the phone's width."""
        params: dict = {"format": "png"}
        if full:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": PHONE["width"], "height": size["height"], "scale": 1})
        return base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                self.ws.close()
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(timeout=15)
            if self.proc.stderr:
                self.proc.stderr.close()


def test_phone_browser_opens_link_sees_diff_approves_with_scope(tmp_path):
    ws = make_ws(tmp_path)
    lina = ws / "memory" / "people" / "lina.md"
    before = lina.read_text()
    after = before.replace("Likes oolong tea and long walks on the Downs.",
                           "Likes oolong tea and long walks on the Downs.\nStarted a pottery class on Thursdays.")
    assert after != before
    notified = tmp_path / "notified.json"
    notify = tmp_path / "notify.py"
    notify.write_text(f"import json, sys\nopen({str(notified)!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
    script = tmp_path / "model.json"
    from assistant.notes.frontmatter import revision
    from assistant.secrets.revision_key import load_key

    base = revision(lina.read_bytes(), load_key(ws / "state"))      # the revision memory_read would give
    script.write_text(json.dumps([{"tool": "memory_write",
                                   "args": {"path": "people/lina.md", "content": after, "base": base}},
                                  {"reply": "noted"}]))
    profile = Path(tempfile.mkdtemp(prefix="chromium-", dir=tmp_path))
    with Serve(ws) as server:
        set_approvals(ws, f'web_url = "{server.base}"\nnotify = ["{PY}", "{notify}", "{{show_url}}"]')
        run = subprocess.Popen([PY, "-m", "assistant", "-w", str(ws), "run", "--model", f"script:{script}",
                                "--approval-timeout", "180s", "Lina told me about her pottery class"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
                               stdin=subprocess.DEVNULL)
        browser = None
        try:
            assert wait_for(lambda: notified.exists() or run.poll() is not None, 90)
            assert notified.exists(), "the notify command never ran: " + "".join(run.communicate(timeout=30))
            [show_url] = json.loads(notified.read_text())
            browser = Browser(profile)
            browser.call("Page.enable")
            browser.call("Emulation.setDeviceMetricsOverride", **PHONE)
            browser.navigate(show_url)
            text = browser.text()
            assert "Approve memory people/lina.md?" in text
            assert "+Started a pottery class on Thursdays." in text          # the diff is on the page
            assert "always people/lina.md" in text and "Remembered" in text    # scopes explained in words
            colour = browser.call("Runtime.evaluate", returnByValue=True, expression=(
                "getComputedStyle(document.querySelector('button.approve')).backgroundColor"))["result"]["value"]
            assert colour == "rgb(26, 127, 55)"          # the page's own style applies under its CSP
            shot = browser.screenshot()
            assert shot.startswith(b"\x89PNG")
            keep = os.environ.get("ASSISTANT_DOCS_SCREENSHOT")
            if keep:
                Path(keep).write_bytes(browser.screenshot(full=True))
            browser.tap('input[name="remember"][value="exact"]')
            browser.events.clear()
            browser.tap("button.approve")
            browser.wait_event("Page.loadEventFired")
            assert "Approved memory people/lina.md" in browser.text()
            out, err = run.communicate(timeout=90)
        finally:
            if browser is not None:
                browser.close()
            if run.poll() is None:
                run.kill()
                run.wait()
    assert run.returncode == 0, out[-2000:] + err[-2000:]
    assert lina.read_text() == after                                       # the note is written
    grants = json.loads((ws / "grants.json").read_text())["grants"]
    assert any(g["kind"] == "memory" and g["target"] == "people/lina.md" for g in grants)   # the scope chosen
