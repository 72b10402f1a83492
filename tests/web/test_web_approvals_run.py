"""From a real unattended run to a written note through the approval page: the notify command
gets {approve_url} (with [approvals] web_url set), the person opens it and approves, and the
run writes exactly the approved bytes. Also the deny link, and the config rules for the links."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from web_approvals_support import PY, Serve, env, forms, make_ws, set_approvals, wait_for

NOTE = "Ana\n\nprefers <tea> & \"green\" — 緑茶\nno newline at the end"


def _notifier(tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "notified.json"
    script = tmp_path / "notify.py"
    script.write_text(f"import json, sys\nopen({str(out)!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
    return script, out


def _start_run(ws: Path, tmp_path: Path, content: str) -> subprocess.Popen:
    script = tmp_path / "model.json"
    script.write_text(json.dumps([{"tool": "memory_write", "args": {"path": "people/ana.md", "content": content}},
                                  {"reply": "saved"}]))
    return subprocess.Popen([PY, "-m", "assistant", "-w", str(ws), "run", "--model", f"script:{script}",
                             "--approval-timeout", "120s", "note Ana's tea"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env(), stdin=subprocess.DEVNULL)


def _path(url: str) -> str:
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


@pytest.mark.parametrize("answer", ["approve", "deny"])
def test_notify_link_to_written_note(tmp_path, answer):
    ws = make_ws(tmp_path)
    notify, notified = _notifier(tmp_path)
    with Serve(ws) as server:
        set_approvals(ws, f'web_url = "{server.base}"\n'
                          f'notify = ["{PY}", "{notify}", "{{approve_url}}", "{{show_url}}", "{{deny_url}}", "{{summary}}"]')
        run = _start_run(ws, tmp_path, NOTE)
        try:
            assert wait_for(notified.exists, 90), "the notify command never ran"
            approve_url, show_url, deny_url, summary = json.loads(notified.read_text())
            assert approve_url.startswith(server.base + "/r/") and "/approve?exp=" in approve_url
            assert "/show?exp=" in show_url and "/deny?exp=" in deny_url
            assert "people/ana.md" in summary and "prefers" not in summary   # the content is not in it
            with server.client() as c:
                page = c.get(_path(approve_url if answer == "approve" else deny_url))
                assert page.status_code == 200
                assert "prefers &lt;tea&gt; &amp; &quot;green&quot; — 緑茶" in page.text     # the diff, escaped
                action, fields = forms(page.text)[answer]
                extra = {"remember": "once"} if answer == "approve" else {"reason": "not now"}
                r = c.post(action, data={**fields, **extra})
                assert r.status_code == 200, r.text
            out, err = run.communicate(timeout=90)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
    note = ws / "memory" / "people" / "ana.md"
    if answer == "approve":
        assert run.returncode == 0, out + err
        assert note.read_bytes() == NOTE.encode("utf-8")       # exactly the approved bytes
    else:
        assert run.returncode == 3, out + err
        assert not note.exists()
        assert "not now" in out + err


def test_link_placeholders_need_web_url(tmp_path):
    ws = make_ws(tmp_path, approvals='notify = ["notify-send", "{approve_url}"]')
    r = subprocess.run([PY, "-m", "assistant", "-w", str(ws), "doctor", "--no-notify"], capture_output=True,
                       text=True, env=env(), timeout=120)
    assert "web_url" in r.stdout + r.stderr


def test_bad_web_url_is_a_config_problem(tmp_path):
    from assistant.workspace.config import ConfigError, read

    for bad in ("ftp://x", "http://user:pw@host", "http://host/?q=1", "http://host/a b", "nohost"):
        ws = make_ws(tmp_path / bad.replace("/", "_").replace(":", "_").replace(" ", "_").replace("?", "_"),
                     approvals=f'web_url = "{bad}"\nnotify = []')
        with pytest.raises(ConfigError) as exc:
            read(ws / "config.toml").approvals
        assert "approvals.web_url" in str(exc.value)
