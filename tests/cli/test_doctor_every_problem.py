"""`assistant doctor` reports every problem at once: each bad `[[schedule]]` entry (a bad cron and an
empty task in the same entry both), any other bad setting, a workspace folder (or memory/) every user
can write to, and notes that hold a vault value in plain text (by path only: never the value, nor
which secret). A command that needs the broken section lists every problem of it too (issue 13 item 4)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from assistant.secrets.vault import ENV_PASSPHRASE, Vault
from workspaces import cheap_kdf, example_ws

PASS = "doctor pass " + "phrase"
VALUE = "wifi-" + "Zq83Lm" + "Pv27Xc"
NAME = "Home_Wifi"

BAD_SCHEDULES = '''
[limits]
tool_timeout = "15 min"

[[schedule]]
name = "morning"
cron = "61 7 * * *"
task = "  "

[[schedule]]
name = "evening"
cron = "0 19 * * *"
task = ""
'''


@pytest.fixture
def ws(tmp_path):
    root = cheap_kdf(example_ws(tmp_path))
    cfg = root / "config.toml"
    text = cfg.read_text()
    text = re.sub(r"(?m)^\[limits\]\n(?:[^\[\n].*\n|\n)*", "", text)   # [limits] is given again below
    cfg.write_text(text)
    vault = Vault.create(root / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024)
    vault.set(NAME, VALUE)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"reply": "hi"}]))
    yield root, f"script:{script}"
    os.chmod(root, 0o700)


def cli(ws, tmp_path, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env.update(HOME=str(tmp_path), TMPDIR=str(tmp_path), **{ENV_PASSPHRASE: PASS})
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], capture_output=True,
                          text=True, env=env, timeout=120)


def test_a_healthy_workspace_has_no_note_problem(ws, tmp_path):
    root, model = ws
    r = cli(root, tmp_path, "doctor", "--no-notify", "--model", model)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no note holds a vault value in plain text" in r.stdout
    assert "the workspace folder is not writable by other users" in r.stdout


def test_every_problem_at_once(ws, tmp_path):
    root, model = ws
    with open(root / "config.toml", "a") as f:
        f.write(BAD_SCHEDULES)
    os.chmod(root, 0o777)
    os.chmod(root / "memory", 0o777)
    (root / "memory" / "router.md").write_text(f"The router's password is {VALUE}.\n")   # a hand edit
    (root / "memory" / "people" / "lina.md").write_text("Lina likes tea.\n")             # no value

    r = cli(root, tmp_path, "doctor", "--no-notify", "--model", model)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    problems = [ln for ln in r.stdout.splitlines() if ln.startswith("PROBLEM")]
    # every schedule problem, the two of the first entry both named
    assert any("schedule 'morning'" in p and "minute" in p for p in problems), problems
    assert any("schedule 'morning'" in p and "task must be a non-empty string" in p for p in problems), problems
    assert any("schedule 'evening'" in p and "task must be a non-empty string" in p for p in problems), problems
    assert any("limits.tool_timeout = '15 min'" in p for p in problems), problems
    assert any(f"the workspace folder {root} is writable by every user (mode 0777)" in p for p in problems)
    assert f"fix: chmod o-w {root}" in r.stdout
    assert any("memory is writable by every user" in p for p in problems), problems
    notes = [p for p in problems if p.startswith("PROBLEM  notes:")]
    assert len(notes) == 1 and "1 note(s) hold a vault value in plain text" in notes[0] and "router.md" in notes[0]
    assert "lina.md" not in notes[0]
    assert "assistant memory edit PATH" in r.stdout
    # never the value, nor which secret it is
    assert VALUE not in out and NAME not in out and VALUE[:8] not in out
    assert f"{len(problems)} problem(s) in {root}" in r.stdout

    r = cli(root, tmp_path, "doctor", "--no-notify", "--json", "--model", model)
    data = json.loads(r.stdout)
    assert r.returncode == 1 and data["ok"] is False and VALUE not in r.stdout and NAME not in r.stdout
    areas = [c["area"] for c in data["checks"] if not c["ok"]]
    assert areas.count("config") >= 4 and "notes" in areas and areas.count("permissions") >= 2

    # a command that needs [schedule] stops, naming every problem of it
    r = cli(root, tmp_path, "schedule", "list")
    assert r.returncode == 1 and r.stdout == ""
    assert "3 problems" in r.stderr, r.stderr
    assert r.stderr.count("task must be a non-empty string") == 2 and "morning" in r.stderr and "minute" in r.stderr
    # ...while one that needs none still works
    assert cli(root, tmp_path, "approvals", "list").returncode == 0


def test_a_locked_vault_says_the_notes_were_not_checked(ws, tmp_path):
    root, model = ws
    (root / "memory" / "router.md").write_text(f"The router's password is {VALUE}.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env.update(HOME=str(tmp_path), TMPDIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(root), "doctor", "--no-notify", "--model", model],
                       capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert "notes not checked for vault values" in r.stdout
    assert VALUE not in r.stdout + r.stderr
