"""Every project lock has a bounded wait (issue 10 item 16): a lock held by a live process
elsewhere never hangs a grants change, an approved `--remember exact` or a vault change; the
timeout is a deny (or a clear error) with a message naming the lock and its holder."""

import subprocess
import sys
import threading
import time

import pytest

from policy.approvals import ApprovalSettings

from policy.approvals import Inbox
from policy.audit import AuditLog
from policy.fileio import FileLock, LockTimeout
from policy.gate import Gate
from policy.grants import GrantsError, GrantStore

HOLDER = r"""
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, str(os.getpid()).encode())
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture
def hold():
    procs = []

    def start(path):
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout.readline().strip() == "held"
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def test_grants_add_under_a_held_lock_is_a_grants_error_within_its_bound(tmp_path, hold):
    store = GrantStore(tmp_path / "grants.json", lock_timeout=0.5)
    proc = hold(tmp_path / ".grants.json.lock")
    t = time.monotonic()
    with pytest.raises(GrantsError) as info:
        store.add("memory", "people/lina.md")
    waited = time.monotonic() - t
    assert 0.45 <= waited < 5
    msg = str(info.value)
    assert ".grants.json.lock" in msg and f"process {proc.pid}" in msg and "gave up after 0.5s" in msg
    assert not (tmp_path / "grants.json").exists()   # nothing half-written


def test_approved_remember_exact_with_a_held_grants_lock_is_a_deny_not_a_hang(tmp_path, hold):
    """The reviewer's case: an unattended memory write approved with --remember exact while
    another process holds .grants.json.lock. The run ends, denied, with the reason."""
    (tmp_path / "state" / "approvals").mkdir(parents=True)
    inbox = Inbox(tmp_path / "state" / "approvals")
    gate = Gate("unattended", run_id="run-1", audit=AuditLog(tmp_path / "state" / "audit.jsonl"),
                grants=GrantStore(tmp_path / "grants.json", lock_timeout=0.5),
                approvals=ApprovalSettings(channel="inbox", timeout=30.0, notify=()), inbox=inbox)
    hold(tmp_path / ".grants.json.lock")

    def approve():   # the person answers from another terminal, as `approvals approve --remember exact`
        end = time.monotonic() + 10
        while time.monotonic() < end and not inbox.ids():
            time.sleep(0.01)
        rid = inbox.ids()[0]
        with pytest.raises(Exception) as info:   # the CLI's own grant write is bounded too
            inbox.answer(rid, "approved", sha256=inbox.get(rid).sha256, remember="exact",
                         grants=GrantStore(tmp_path / "grants.json", lock_timeout=0.3))
        assert "could not be recorded" in str(info.value)

    t = threading.Thread(target=approve, daemon=True)
    t.start()
    start = time.monotonic()
    d = gate.authorize("memory", "people/lina.md", content=b"hello\n", summary="write people/lina.md")
    elapsed = time.monotonic() - start
    t.join(10)
    assert not d.allowed and d.verdict == "deny"
    assert "could not be recorded" in d.reason and "locked" in d.reason and "gave up after 0.5s" in d.reason
    assert elapsed < 20   # the approval timeout is 30 s: the run never waited for it
    assert not (tmp_path / "grants.json").exists()


def test_vault_change_under_a_held_vault_lock_is_a_vault_error(tmp_path, hold, monkeypatch):
    from assistant.secrets import vault as vault_mod
    v = vault_mod.Vault.create(tmp_path / "vault.enc", "correct horse", opslimit=1, memlimit=8192)
    hold(tmp_path / ".vault.enc.lock")
    monkeypatch.setattr(vault_mod, "LOCK_TIMEOUT", 0.3)
    t = time.monotonic()
    with pytest.raises(vault_mod.VaultError, match="the vault is locked"):
        v.set("github", "x" * 20)
    assert time.monotonic() - t < 5


def test_file_lock_timeout_names_the_holder(tmp_path, hold):
    proc = hold(tmp_path / "any.lock")
    with pytest.raises(LockTimeout, match=f"grants is locked by process {proc.pid}"):
        FileLock(tmp_path / "any.lock", timeout=0.2, what="grants").acquire()
