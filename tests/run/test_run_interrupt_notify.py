"""Issue 10 item 17: from the moment a request file exists, an interrupt closes it as denied,
even while the notify command is still running (a real SIGINT to a real `assistant run`)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from policy.approvals import ApprovalSettings
from bounded import wait_for
from run_support import PY, audit_events, env, make_ws, write_script
from workspaces import notify_with


def _reset_sigint() -> None:      # the runner may have been started with SIGINT ignored (nohup)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sigint_during_a_slow_notify_closes_the_request_as_denied(tmp_path):
    started = tmp_path / "notify-started"
    ws = make_ws(tmp_path)
    notify_with(ws, f"touch {started}\nsleep 30\n")
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/new.md", "content": "a new note\n"}},
        {"reply": "saved"}])
    proc = subprocess.Popen([PY, "-m", "assistant", "-w", str(ws), "run", "--model", f"script:{script}",
                             "--approval-timeout", "120s", "save it"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
                            stdin=subprocess.DEVNULL, preexec_fn=_reset_sigint)
    try:
        assert wait_for(started.exists, 30), "the notify command never started"
        [req_file] = [p for p in (ws / "state" / "approvals").glob("*.json") if not p.name.endswith(".answer.json")]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0, out + err
    assert "Traceback" not in err, err[-2000:]
    req_id = req_file.name[:-5]
    answer_file = req_file.with_name(f"{req_id}.answer.json")
    assert answer_file.exists(), "the request was left pending after the interrupt"
    answer = json.loads(answer_file.read_text())
    assert answer["verdict"] == "denied" and answer["by"] == "run" and "interrupted" in answer["reason"]
    # a person can no longer approve it
    r = subprocess.run([PY, "-m", "assistant", "-w", str(ws), "approvals", "approve", req_id],
                       capture_output=True, text=True, env=env(), timeout=60)
    assert r.returncode != 0 and "already answered" in r.stderr
    assert not (ws / "memory" / "people" / "new.md").exists()
    denied = [e for e in audit_events(ws) if e.get("request") == req_id and e.get("verdict") in ("deny", "denied")]
    assert denied, "the closing is not audited"


def test_an_exception_after_the_request_is_filed_closes_it(tmp_path, monkeypatch):
    """In process: the notify runner raising (a fault injected after the request file exists)
    leaves no pending request."""
    from policy import gate as gate_mod
    from policy.approvals import Inbox
    from policy.audit import AuditLog
    from policy.gate import Gate

    approvals = tmp_path / "approvals"
    approvals.mkdir()
    g = Gate("unattended", run_id="run-x", audit=AuditLog(tmp_path / "audit.jsonl"), inbox=Inbox(approvals),
             approvals=ApprovalSettings(notify=("true",), timeout=60.0))

    def boom(*a, **k):
        raise RuntimeError("notify runner broke")

    monkeypatch.setattr(gate_mod, "run_notify", boom)
    d = g.authorize("memory", "people/x.md", content=b"x\n", summary="memory_write people/x.md")
    assert not d.allowed
    [entry] = Inbox(approvals).list(all=True)
    assert entry.state == "denied"
    # and a KeyboardInterrupt there is re-raised after closing
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(gate_mod, "run_notify", interrupted)
    import pytest

    with pytest.raises(KeyboardInterrupt):
        g.authorize("memory", "people/y.md", content=b"y\n", summary="memory_write people/y.md")
    states = sorted(e.state for e in Inbox(approvals).list(all=True))
    assert states == ["denied", "denied"]
