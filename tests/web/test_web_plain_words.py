"""The phone page in plain words (issue 23, item 19): no "root policy", the diff's
`---`/`+++`/`@@` lines said in words, local times (Details too), no shell command in backticks;
`approvals serve` says in one line how a phone reaches it; `approvals show` names the run's task.
Real `assistant approvals serve` on loopback and the real CLI; the request is filed as the gate
files it, with the gate's own reason."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import threading

from policy.approvals import Inbox, sha256_hex
from policy.kinds import offers

from assistant.display.localtime import local_time
from web_approvals_support import Serve, env, links, make_ws

RUN = "20261201T000000Z-run-abcdef"
TASK = "Tidy the notes about Ana before her visit"
REASON = "root policy for memory in an unattended run is ask"


def _file(ws):
    (ws / "state" / "transcripts").mkdir(parents=True, exist_ok=True)
    (ws / "state" / "transcripts" / f"{RUN}.jsonl").write_text(
        json.dumps({"event": "session_start", "session": RUN, "task": TASK, "label": "run"}) + "\n")
    current = "# Ana\nlikes coffee\nlives in Leeds\n"
    content = "# Ana\nlikes tea\nlives in Leeds\n"
    inbox = Inbox(ws / "state" / "approvals")
    req, _ = inbox.create(run_id=RUN, kind="memory", target="people/ana.md", summary="memory_write people/ana.md",
                          reason=REASON, sha256=sha256_hex(content.encode()), content=content, current=current,
                          content_exact=True, offers=offers("memory", "people/ana.md"), timeout=600)
    return req


def _more_lines(server: Serve, until: str, timeout: float = 30) -> str:
    """What serve printed after its login line, up to the line holding `until` (read in a
    thread, bounded: the pipe's text buffer may hold those lines already)."""
    got: list[str] = []

    def read() -> None:
        for line in server.proc.stdout:
            got.append(line)
            if until in line:
                return
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    return "".join(got)


def test_the_phone_page_is_in_plain_words_and_serve_says_how_a_phone_reaches_it(tmp_path):
    ws = make_ws(tmp_path)
    req = _file(ws)
    show = links(ws, req, "http://x")["show_url"].replace("http://x", "")
    with Serve(ws) as server, server.client() as c:
        printed = _more_lines(server, "Ctrl-C stops it")
        page = c.get(show)
    assert page.status_code == 200
    text = html.unescape(page.text)
    assert "root policy" not in text
    assert "A run you are not watching always asks you before any change to your notes." in text
    diff = text.split('<pre class="diff">', 1)[1].split("</pre>", 1)[0]
    shown = re.findall(r"<span[^>]*>(.*?)</span>", diff)
    assert not any(line.startswith(("--- ", "+++ ", "@@")) for line in shown), shown
    assert shown[0].startswith("The change to this note: lines marked - (red) are taken out")
    assert "Lines 1-3:" in shown and "-likes coffee" in shown and "+likes tea" in shown
    details = text.split("<summary>Details</summary>", 1)[1]
    assert local_time(req.created_at) in details and req.created_at not in text
    assert "`" not in text                                        # no shell command in backticks
    [reach] = [line for line in printed.splitlines() if line.startswith("from a phone:")]
    assert "VPN" in reach and "reverse proxy" in reach and "docs/usage.md" in reach


def test_approvals_show_names_the_runs_task(tmp_path):
    ws = make_ws(tmp_path)
    req = _file(ws)
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "approvals", "show", req.id],
                       capture_output=True, text=True, env=env(), timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert f"  task:     {TASK}" in r.stdout
