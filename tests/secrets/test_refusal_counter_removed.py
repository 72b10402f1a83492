"""Review 23, attack 4: deleting state/secret_refusals.json lifted the refusal block without
`approvals ack` (a missing counter was zero), and the probes went on. A missing counter is now
zero only if the audit log agrees: a counted refusal within 24 hours, or a block, after the last
`approvals ack` means the counter was removed, and that blocks like a corrupt counter until the
person acknowledges. Refusals at the person's own CLI are not counted and do not block."""

from __future__ import annotations

from assistant.secrets.budget import FILE, RefusalBudget
from secrets_support import WIFI, audit_events, cli, make_ws, vault_env, write_script


def _run(tmp_path, ws, steps, name):
    script = write_script(tmp_path, steps, name=name)
    return cli("-w", str(ws), "run", "--model", f"script:{script}", "task", environ=vault_env())


def _probe(tmp_path, ws, i):
    return _run(tmp_path, ws, [{"tool": "memory_write", "args": {"path": f"p{i}.md", "content": f"{WIFI}\n"}},
                               {"reply": "probed"}], f"probe{i}.json")


def _clean(tmp_path, ws):
    return _run(tmp_path, ws, [{"reply": "all fine"}], "clean.json")


def test_removing_the_counter_after_a_refusal_blocks_until_ack(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    assert _probe(tmp_path, ws, 1).returncode == 4
    counter = ws / "state" / FILE
    assert counter.exists()
    counter.unlink()                                   # whoever can write state/
    r = _clean(tmp_path, ws)
    assert r.returncode == 1 and "all fine" not in r.stdout, r.stdout + r.stderr
    assert "it was removed" in r.stdout and "approvals ack" in r.stdout
    assert _probe(tmp_path, ws, 2).returncode == 1      # no probe runs either
    listed = cli("-w", str(ws), "approvals", "list", environ=vault_env())
    assert "blocked:" in listed.stdout and "it was removed" in listed.stdout
    ack = cli("-w", str(ws), "approvals", "ack", environ=vault_env())
    assert ack.returncode == 0 and "unreadable" in ack.stdout, ack.stdout + ack.stderr
    assert _clean(tmp_path, ws).returncode == 0
    counter.unlink()                                   # after the ack: the log agrees nothing is counted
    assert _clean(tmp_path, ws).returncode == 0
    assert WIFI not in "".join(str(e) for e in audit_events(ws))


def test_removing_a_spent_budget_keeps_the_block(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    for i in range(3):
        assert _probe(tmp_path, ws, i).returncode == 4
    (ws / "state" / FILE).unlink()
    r = _clean(tmp_path, ws)
    assert r.returncode == 1 and "a block" in r.stdout and "it was removed" in r.stdout, r.stdout


def test_a_missing_counter_is_zero_when_the_audit_log_agrees(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    for _ in range(2):      # the person's own CLI: audited, never counted
        r = cli("-w", str(ws), "memory", "write", "wifi.md", input=f"the wifi is {WIFI}\n", environ=vault_env())
        assert r.returncode != 0
    assert [e.get("counted") for e in audit_events(ws) if e["event"] == "secret_refused"] == [None, None]
    assert not (ws / "state" / FILE).exists()
    budget = RefusalBudget(ws / "state", audit_path=ws / "state" / "audit.jsonl")
    assert budget.block() is None and budget.counted() == 0
    assert _clean(tmp_path, ws).returncode == 0
