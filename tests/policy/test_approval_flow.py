"""An unattended write asks out of band and the answer decides it: the request file, approve with
each remember choice, hash-bound answers, two approvers, timeout, unreachable approvers, notify,
redaction. Written from issue 3's words (these were test_acceptance_core.py's approvals flow)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from assistant.workspace.config import parse as parse_config
from assistant.secrets.scanner import Scanner
from policy import engine
from policy.gate import Gate

from acceptance_support import out, run_cli
from gate_support import ask_in_thread, unattended_gate, wait_request_file


SECRET = "s3cr3t-Value-Xq9Zk2Lm"


def _audit(ws):
    path = ws / "state" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# acceptance (issue 3: approvals flow), written from the words
def test_request_file_contents(vault_ws):
    t, res = ask_in_thread(unattended_gate(vault_ws))
    req = wait_request_file(vault_ws)
    import hashlib
    text = json.dumps(req)
    assert req["id"] and req["kind"] == "memory" and req["target"] == "people/lina.md"
    assert "acc-run" in text                                        # run id
    assert "Lina likes tea\n" in req.values()                        # exact proposed content
    assert "Lina likes coffee\n" in req.values()                     # current content
    assert hashlib.sha256(b"Lina likes tea\n").hexdigest() in req.values()
    assert any("creat" in k for k in req) and any("expir" in k for k in req)
    assert "offers" in req
    # list / show
    r = run_cli(["approvals", "list"], ws=vault_ws)
    assert r.exit_code == 0 and req["id"] in r.output
    r = run_cli(["approvals", "list", "--json"], ws=vault_ws)
    data = json.loads(r.output)
    items = data["requests"] if isinstance(data, dict) else data
    assert [i["id"] for i in items] == [req["id"]]
    r = run_cli(["approvals", "show", req["id"]], ws=vault_ws)
    assert r.exit_code == 0, out(r)
    assert "people/lina.md" in r.output
    assert "reason" in r.output.lower()
    assert "-Lina likes coffee" in r.output and "+Lina likes tea" in r.output
    # deny with a reason
    r = run_cli(["approvals", "deny", req["id"], "--reason", "not now"], ws=vault_ws)
    assert r.exit_code == 0, out(r)
    t.join(10)
    assert not t.is_alive()
    assert res["d"].allowed is False
    assert not (vault_ws / "memory" / "people" / "never.md").exists()
    # already answered: clear error, non-zero exit
    for args in (["approvals", "approve", req["id"]], ["approvals", "deny", req["id"]]):
        r = run_cli(args, ws=vault_ws)
        assert r.exit_code != 0
    # the denial and its reason are on record
    assert "not now" in run_cli(["approvals", "show", req["id"]], ws=vault_ws).output
    assert "not now" in run_cli(["approvals", "list", "--all", "--json"], ws=vault_ws).output
    assert any("not now" in line.get("reason", "") for line in _audit(vault_ws))
    # still listed with --all, not as pending
    assert req["id"] not in run_cli(["approvals", "list"], ws=vault_ws).output
    assert req["id"] in run_cli(["approvals", "list", "--all"], ws=vault_ws).output


@pytest.mark.parametrize("remember,grant", [("once", None), ("run", None),
                                            ("exact", "people/lina.md"), ("dir", "people/*")])
def test_approve_remember(vault_ws, remember, grant):
    (vault_ws / "grants.json").unlink(missing_ok=True)
    t, res = ask_in_thread(unattended_gate(vault_ws))
    req = wait_request_file(vault_ws)
    r = run_cli(["approvals", "approve", req["id"], "--remember", remember], ws=vault_ws)
    assert r.exit_code == 0, out(r)
    t.join(10)
    assert res["d"].allowed is True
    grants = []
    if (vault_ws / "grants.json").exists():
        data = json.loads((vault_ws / "grants.json").read_text())
        assert data["version"] == 1
        grants = [(g["kind"], g["target"]) for g in data["grants"]]
        for g in data["grants"]:
            assert {"kind", "target", "granted_at", "note"} <= set(g)
    if grant is None:
        assert grants == []
    else:
        assert grants == [("memory", grant)]
    if remember == "dir":
        s = engine.Session("later", grants=__import__("policy.grants").grants.GrantStore(
            vault_ws / "grants.json"))
        assert engine.decide("memory", "people/x.md", "unattended", s).verdict == "allow"
        assert engine.decide("memory", "people/sub/x.md", "unattended", s).verdict == "ask"
    lines = _audit(vault_ws)
    assert any(line.get("verdict") == "allow" or line.get("verdict") == "approved"
               for line in lines)
    for line in lines:
        assert {"time", "run", "kind", "target", "verdict", "reason"} <= set(line)
        assert any("sha256" in k for k in line)


def test_approve_with_mismatched_hash_refused(vault_ws):
    t, res = ask_in_thread(unattended_gate(vault_ws, timeout="3s"))
    req = wait_request_file(vault_ws)
    r = run_cli(["approvals", "approve", req["id"], "--sha256", "0" * 64], ws=vault_ws)
    assert r.exit_code != 0
    time.sleep(0.2)
    assert t.is_alive(), "a refused answer must not end the wait"
    run_cli(["approvals", "deny", req["id"]], ws=vault_ws)
    t.join(10)
    assert res["d"].allowed is False


def test_no_dir_offer_at_memory_root(vault_ws):
    t, res = ask_in_thread(unattended_gate(vault_ws), target="top.md")
    req = wait_request_file(vault_ws)
    r = run_cli(["approvals", "approve", req["id"], "--remember", "dir"], ws=vault_ws)
    assert r.exit_code != 0
    r = run_cli(["approvals", "approve", req["id"], "--remember", "once"], ws=vault_ws)
    assert r.exit_code == 0, out(r)
    t.join(10)
    assert res["d"].allowed is True
    if (vault_ws / "grants.json").exists():
        assert json.loads((vault_ws / "grants.json").read_text())["grants"] == []


def test_two_approvers_at_once_lose_no_grant(vault_ws):
    import subprocess
    (vault_ws / "grants.json").unlink(missing_ok=True)
    gate = unattended_gate(vault_ws)
    targets = [f"people/p{i}.md" for i in range(4)]
    threads = [ask_in_thread(gate, target=tg) for tg in targets]
    inbox = vault_ws / "state" / "approvals"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        reqs = [p for p in inbox.glob("*.json") if "answer" not in p.name]
        if len(reqs) == len(targets):
            break
        time.sleep(0.02)
    ids = [json.loads(p.read_text())["id"] for p in reqs]
    assert len(ids) == len(targets)
    exe = Path(sys.executable).with_name("assistant")
    procs = [subprocess.Popen([str(exe), "-w", str(vault_ws), "approvals", "approve", i,
                               "--remember", "exact"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT) for i in ids]
    for p in procs:
        p.wait(30)
        assert p.returncode == 0, p.stdout.read()
    for t, res in threads:
        t.join(10)
        assert res["d"].allowed is True
    data = json.loads((vault_ws / "grants.json").read_text())
    assert sorted(g["target"] for g in data["grants"]) == targets


def test_timeout_is_deny_recorded_expired(vault_ws):
    t, res = ask_in_thread(unattended_gate(vault_ws, timeout="1s"))
    req = wait_request_file(vault_ws)
    t.join(10)
    assert res["d"].allowed is False
    r = run_cli(["approvals", "list", "--all", "--json"], ws=vault_ws)
    data = json.loads(r.output)
    items = data["requests"] if isinstance(data, dict) else data
    assert [(i["id"], i["state"]) for i in items] == [(req["id"], "expired")]
    assert req["id"] in run_cli(["approvals", "list", "--all"], ws=vault_ws).output
    assert "expired" in run_cli(["approvals", "list", "--all"], ws=vault_ws).output
    r = run_cli(["approvals", "approve", req["id"]], ws=vault_ws)
    assert r.exit_code != 0 and "expired" in out(r)
    assert any("expired" in json.dumps(line) or "timeout" in json.dumps(line)
               for line in _audit(vault_ws))


@pytest.mark.parametrize("setting", [{"channel": "none"},
                                     {"notify": ["/nonexistent/notify-send", "{summary}"]},
                                     {"notify": ["false", "{summary}"]}])
def test_unreachable_approver_is_deny(vault_ws, setting):
    start = time.monotonic()
    d = unattended_gate(vault_ws, **setting).authorize("memory", "people/lina.md", content=b"x\n",
                                       current=None, summary="s")
    assert d.allowed is False and d.verdict == "deny"
    assert time.monotonic() - start < 10
    lines = _audit(vault_ws)
    assert lines and lines[-1]["verdict"] == "deny" and lines[-1]["reason"]


def test_notify_command_gets_summary(vault_ws, tmp_path):
    got = tmp_path / "notified.txt"
    notify = [sys.executable, "-c",
              f"import sys; open({str(got)!r}, 'w').write(sys.argv[1])", "{summary}"]
    t, res = ask_in_thread(unattended_gate(vault_ws, notify=notify))
    req = wait_request_file(vault_ws)
    deadline = time.monotonic() + 10
    while not (got.exists() and got.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "people/lina.md" in got.read_text() or "lina" in got.read_text()
    assert "{summary}" not in got.read_text()
    run_cli(["approvals", "deny", req["id"]], ws=vault_ws)
    t.join(10)
    assert res["d"].allowed is False


def test_inbox_not_a_directory_is_deny(vault_ws):
    import shutil
    inbox = vault_ws / "state" / "approvals"
    shutil.rmtree(inbox)
    inbox.write_text("not a folder")
    d = unattended_gate(vault_ws).authorize("memory", "people/lina.md", content=b"x\n", current=None,
                            summary="s")
    assert d.allowed is False and d.verdict == "deny"
    assert _audit(vault_ws)[-1]["verdict"] == "deny"


def test_corrupt_request_while_waiting_is_deny(vault_ws):
    t, res = ask_in_thread(unattended_gate(vault_ws, timeout="2s"))
    req = wait_request_file(vault_ws)
    path = vault_ws / "state" / "approvals" / f"{req['id']}.json"
    assert path.exists()
    os.chmod(path, 0o600)
    path.write_text("{ corrupt")
    r = run_cli(["approvals", "approve", req["id"]], ws=vault_ws)
    assert r.exit_code != 0
    t.join(10)
    assert res["d"].allowed is False
    last = _audit(vault_ws)[-1]
    assert last["verdict"] == "deny" and last["reason"]


def test_approval_request_is_redacted(vault_ws):
    scanner = Scanner(secrets={"github": SECRET})
    gate = Gate.for_workspace("unattended", run_id="acc-run",
                              config=parse_config({"approvals": {"channel": "inbox", "timeout": "20s"}}),
                              grants_path=vault_ws / "grants.json",
                              approvals_dir=vault_ws / "state" / "approvals",
                              audit_path=vault_ws / "state" / "audit.jsonl", redact=scanner.redact)
    t, res = ask_in_thread(gate, content=b"new text\n",
                            current=f"old text with {SECRET}\n".encode())
    req = wait_request_file(vault_ws)
    raw = "".join(p.read_text() for p in (vault_ws / "state" / "approvals").glob("*.json"))
    assert SECRET not in raw and "[redacted:github]" in raw
    r = run_cli(["approvals", "show", req["id"]], ws=vault_ws)
    assert SECRET not in r.output
    run_cli(["approvals", "deny", req["id"]], ws=vault_ws)
    t.join(10)
    assert SECRET not in (vault_ws / "state" / "audit.jsonl").read_text()
