"""Gate.on_request: told the moment a request is filed; display only, never a ruling."""

from policy.approvals import ApprovalSettings
from policy.duration import parse_duration
from policy.approvals import APPROVED, Inbox
from policy.audit import AuditLog
from policy.gate import Gate


def make_gate(tmp_path, on_request, timeout="300ms"):
    inbox = Inbox(tmp_path / "approvals")
    (tmp_path / "approvals").mkdir()
    gate = Gate("unattended", run_id="run-h", audit=AuditLog(tmp_path / "audit.jsonl"),
                approvals=ApprovalSettings(timeout=parse_duration(timeout)), inbox=inbox, on_request=on_request)
    return gate, inbox


def test_hook_sees_the_filed_request_before_the_wait(tmp_path):
    seen = []

    def answer_at_once(req):
        seen.append((req.id, req.kind, req.target))
        inbox.answer(req.id, APPROVED, sha256=req.sha256, remember="once")

    gate, inbox = make_gate(tmp_path, answer_at_once, timeout="30s")
    d = gate.authorize("memory", "people/ana.md", content=b"Ana.\n", current=None, summary="write people/ana.md")
    assert d.allowed and seen == [(d.request_id, "memory", "people/ana.md")]


def test_a_failing_hook_changes_nothing(tmp_path):
    def boom(req):
        raise RuntimeError("display broke")

    gate, inbox = make_gate(tmp_path, boom)
    d = gate.authorize("memory", "people/ana.md", content=b"Ana.\n", current=None, summary="write people/ana.md")
    assert not d.allowed and d.verdict == "deny"
    [entry] = inbox.list(all=True)
    assert entry.state == "expired"


def test_notify_command_never_sees_the_vault_passphrase(tmp_path, monkeypatch):
    import sys

    from policy.notify import run_notify

    monkeypatch.setenv("ASSISTANT_VAULT_PASSPHRASE", "correct horse battery staple")
    monkeypatch.setenv("ASSISTANT_VAULT_NEW_PASSPHRASE", "another horse battery")
    monkeypatch.setenv("HOME_OK", "kept")
    out = tmp_path / "env.txt"
    argv = [sys.executable, "-c",
            "import os,sys; open(sys.argv[1],'w').write('\\n'.join(sorted(os.environ)))", str(out)]
    assert run_notify(argv, "approve memory people/ana.md?") is None
    names = out.read_text().splitlines()
    assert "HOME_OK" in names
    assert not [n for n in names if n.startswith("ASSISTANT_VAULT_")]
