"""Issue 23 item 4: secret refusals are no oracle across runs either. A refusal ends a run, but a
model keeping its progress in files/ could bisect a vault value over several runs. A workspace
keeps a persistent budget ([limits] secret_refusals_per_day = 3, a rolling 24 hours): once it is
spent, unattended runs do not start (and MCP writes are refused: tests/mcp) until the person runs
`assistant approvals ack`; `approvals list` shows the block, `doctor` names it, the notify
command says it when it begins; a missing counter is zero, a corrupt one blocks."""

from __future__ import annotations

import json

import pytest

from assistant.secrets.budget import FILE, WINDOW, RefusalBudget
from secrets_support import WIFI, audit_events, cli, make_ws, vault_env, write_script
from workspaces import notify_with


def _notify(tmp_path, ws):
    log = tmp_path / "notified.txt"
    notify_with(ws, f'printf "%s\\n" "$*" >> {log}\n')
    return log


def _refused_run(tmp_path, ws, i: int):
    """One unattended run whose model writes the vault value (a probe): refused, exit 4."""
    script = write_script(tmp_path, [{"tool": "memory_write", "args": {"path": f"p{i}.md", "content": f"{WIFI}\n"}},
                                     {"reply": "probed"}], name=f"probe{i}.json")
    return cli("-w", str(ws), "run", "--model", f"script:{script}", "probe", environ=vault_env())


def _clean_run(tmp_path, ws):
    script = write_script(tmp_path, [{"reply": "all fine"}], name="clean.json")
    return cli("-w", str(ws), "run", "--model", f"script:{script}", "say hi", environ=vault_env())


def test_three_refused_runs_block_the_fourth_until_approvals_ack(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    told = _notify(tmp_path, ws)
    for i in range(3):
        r = _refused_run(tmp_path, ws, i)
        assert r.returncode == 4, r.stdout + r.stderr
    # the notify command said the block when it began (and never the value)
    notes = told.read_text()
    assert "approvals ack" in notes and "blocked" in notes and WIFI not in notes
    # a fourth run does not start: one error line naming the fix; the model never ran
    r = _clean_run(tmp_path, ws)
    assert r.returncode == 1, r.stdout + r.stderr
    [line] = r.stdout.splitlines()
    assert line.startswith("error: this unattended run does not start") and "assistant approvals ack" in line
    assert "all fine" not in r.stdout + r.stderr
    # `approvals list` shows the block, `doctor` names it
    listed = cli("-w", str(ws), "approvals", "list", environ=vault_env())
    assert listed.returncode == 0 and "blocked:" in listed.stdout and "approvals ack" in listed.stdout
    doc = cli("-w", str(ws), "doctor", "--no-notify", environ=vault_env())
    assert "refusals:" in doc.stdout and "approvals ack" in doc.stdout, doc.stdout
    assert doc.returncode != 0
    # the person acknowledges: it says what it reset, and is audited
    ack = cli("-w", str(ws), "approvals", "ack", environ=vault_env())
    assert ack.returncode == 0, ack.stderr
    assert "lifted the block" in ack.stdout and "3 refused secrets" in ack.stdout
    acks = [a for a in audit_events(ws) if a["event"] == "secret_refusal_ack"]
    assert len(acks) == 1 and acks[0]["reset"] == "block" and acks[0]["refusals"] == 3
    assert len([a for a in audit_events(ws) if a["event"] == "secret_refusal_block"]) == 1
    # ...and runs start again, the count afresh
    r = _clean_run(tmp_path, ws)
    assert r.returncode == 0 and r.stdout.startswith("done: all fine"), r.stdout + r.stderr
    assert "no block" in cli("-w", str(ws), "approvals", "ack", environ=vault_env()).stdout
    assert "blocked:" not in cli("-w", str(ws), "approvals", "list", environ=vault_env()).stdout


def test_a_corrupt_counter_blocks_and_says_how_to_fix_it(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    (ws / "state").mkdir(exist_ok=True)
    (ws / "state" / FILE).write_text('{"version": 1, "refusals": [')
    r = _clean_run(tmp_path, ws)
    assert r.returncode == 1 and "unreadable" in r.stdout and "assistant approvals ack" in r.stdout, r.stdout
    ack = cli("-w", str(ws), "approvals", "ack", environ=vault_env())
    assert ack.returncode == 0 and "replaced the unreadable" in ack.stdout, ack.stdout + ack.stderr
    r = _clean_run(tmp_path, ws)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_watched_chat_still_starts_and_says_the_block_once(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    (ws / "state").mkdir(exist_ok=True)
    RefusalBudget(ws / "state", per_day=1).record("20260101T000000Z-run-abcdef")
    script = write_script(tmp_path, [{"reply": "hello there"}])
    r = cli("-w", str(ws), "chat", "--model", f"script:{script}", input="hi\n", environ=vault_env())
    assert "hello there" in r.stdout, r.stdout + r.stderr
    assert r.stderr.count("approvals ack") == 1, r.stderr


def test_the_budget_is_a_rolling_24_hours_and_a_missing_counter_is_zero(tmp_path):
    now = [1_000_000.0]
    budget = RefusalBudget(tmp_path, per_day=3, clock=lambda: now[0])
    assert budget.block() is None and budget.counted() == 0          # missing: zero
    assert not budget.record("r1").began
    now[0] += WINDOW - 60
    assert not budget.record("r2").began
    now[0] += 120                                                      # r1 left the window
    assert budget.counted() == 1 and not budget.record("r3").began
    assert budget.record("r4").began                                   # r2, r3, r4 within 24 h
    now[0] += 10 * WINDOW
    assert budget.block() is not None                                  # a block never expires by itself
    reset = budget.reset()
    assert reset.block is not None and budget.block() is None and budget.counted() == 0


@pytest.mark.parametrize("content", ['[]', '{"version": 1, "refusals": [], "blocked": null, "x": 1}',
                                     '{"version": 1, "refusals": ["soon"], "blocked": null}',
                                     '{"version": 1, "refusals": [], "blocked": null, "blocked": null}',
                                     '{"version": 1, "refusals": [NaN], "blocked": null}', "\xff"])
def test_anything_but_a_counter_blocks(tmp_path, content):
    (tmp_path / FILE).write_text(content, encoding="latin-1")
    budget = RefusalBudget(tmp_path)
    assert budget.block() is not None and budget.block().problem
    counted = budget.record("r")                 # a refusal leaves a corrupt counter as it is
    assert counted.block is not None and (tmp_path / FILE).read_text(encoding="latin-1") == content


def test_a_linked_counter_blocks(tmp_path):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"version": 1, "refusals": [], "blocked": None}))
    (tmp_path / FILE).symlink_to(elsewhere)
    assert RefusalBudget(tmp_path).block().problem


def test_refusals_at_the_cli_are_audited_like_chat_and_mcp_but_not_counted(tmp_path):
    """Issue 23 item 23: `assistant memory write` with your own secret in the text is refused and
    now audited with the same `secret_refused` record (through the session's SecretRefusals).
    It is not counted toward the budget: whoever runs the CLI has unlocked the vault, so a
    refusal tells them nothing they could not read."""
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    for _ in range(4):
        r = cli("-w", str(ws), "memory", "write", "wifi.md", input=f"the wifi is {WIFI}\n", environ=vault_env())
        assert r.returncode != 0 and "WIFI" in r.stderr and WIFI not in r.stdout + r.stderr
    refused = [a for a in audit_events(ws) if a["event"] == "secret_refused"]
    assert len(refused) == 4
    assert refused[0]["tool"] == "memory write" and refused[0]["secrets"] == ["WIFI"]
    assert refused[0]["target"] == "wifi.md" and "-cli-" in refused[0]["run"]
    assert RefusalBudget(ws / "state").counted() == 0
    assert _clean_run(tmp_path, ws).returncode == 0


def test_a_chat_refusal_that_begins_the_block_says_it(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace("secret_refusals_per_day = 3", "secret_refusals_per_day = 1"))
    script = write_script(tmp_path, [{"tool": "memory_write", "args": {"path": "a.md", "content": f"{WIFI}\n"}},
                                     {"reply": "ok"}])
    r = cli("-w", str(ws), "chat", "--model", f"script:{script}", input="one\n", environ=vault_env())
    assert "unattended runs and MCP writes are blocked" in r.stdout and "approvals ack" in r.stdout, r.stdout
    assert WIFI not in r.stdout + r.stderr
    assert RefusalBudget(ws / "state").block() is not None


def test_a_refusal_that_cannot_be_counted_ends_the_session(tmp_path):
    """Fail closed: when the count cannot be recorded (here state/ is not a folder), the refusal
    stands, it is audited as uncounted, and the session takes no more calls."""
    from assistant.secrets.refusals import SecretRefusals

    not_a_folder = tmp_path / "state"
    not_a_folder.write_text("")
    lines: list[dict] = []

    class Audit:
        def append(self, event: dict) -> None:
            lines.append(event)

    refusals = SecretRefusals(None, Audit(), run_id="r", budget=RefusalBudget(not_a_folder))
    assert refusals.refuse("memory_write", "a.md", ["WIFI"]) is True and refusals.ended
    assert [e["event"] for e in lines] == ["secret_refused", "secret_refusal_uncounted"]
