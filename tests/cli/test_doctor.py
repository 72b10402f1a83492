"""`assistant doctor`: every problem is found, printed with its fix, and makes the exit non-zero."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from assistant.cli import main

from e2e_support import make_ws, write_script
from acceptance_support import sub


def doctor(ws, *extra, env=None):
    r = CliRunner().invoke(main, ["-w", str(ws), "doctor", "--json", *extra], env=env or {}, catch_exceptions=False)
    data = json.loads(r.stdout)
    return r.exit_code, data


def problems(data):
    return [(c["area"], c["message"], c["fix"]) for c in data["checks"] if not c["ok"]]


@pytest.fixture
def ws(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"reply": "hi"}])
    return ws, f"script:{script}"


def test_healthy_workspace_passes(ws):
    path, model = ws
    code, data = doctor(path, "--model", model)
    assert problems(data) == [] and code == 0 and data["ok"] is True
    r = CliRunner().invoke(main, ["-w", str(path), "doctor", "--model", model])
    assert r.exit_code == 0 and "all good" in r.stdout


def test_loose_permissions_and_missing_parts(ws):
    path, model = ws
    os.chmod(path / "memory", 0o755)
    os.chmod(path / "config.toml", 0o644)
    (path / "files").rename(path / "files.old")
    code, data = doctor(path, "--model", model)
    found = problems(data)
    assert code == 1
    assert any("memory is open to other users" in m and f"chmod 700 {path / 'memory'}" == f for _, m, f in found)
    assert any("config.toml is open to other users" in m and f.startswith("chmod 600") for _, m, f in found)
    assert any(m == "files is missing" and "mkdir" in f for _, m, f in found)
    r = CliRunner().invoke(main, ["-w", str(path), "doctor", "--model", model])
    assert r.exit_code == 1 and "PROBLEM" in r.stdout and "fix: chmod 700" in r.stdout


def test_symlinked_memory_is_a_problem(ws, tmp_path):
    path, model = ws
    elsewhere = tmp_path / "elsewhere"
    (path / "memory").rename(elsewhere)
    (path / "memory").symlink_to(elsewhere)
    code, data = doctor(path, "--model", model)
    assert code == 1 and any("memory is a symbolic link" in m for _, m, _ in problems(data))


def test_bad_model_file_and_bad_script(ws, tmp_path):
    path, _ = ws
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"not a model at all")
    code, data = doctor(path, "--model", str(fake))
    assert code == 1 and any("not a GGUF model file" in m for _, m, _ in problems(data))
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, data = doctor(path, "--model", f"script:{bad}")
    assert code == 1 and any("not valid JSON" in m for _, m, _ in problems(data))


def test_vault_must_unlock_without_a_prompt(ws, tmp_path):
    from assistant.secrets.vault import Vault

    path, model = ws
    Vault.create(path / "vault.enc", "a long passphrase", opslimit=1, memlimit=8 * 1024 * 1024)
    code, data = doctor(path, "--model", model)
    assert code == 1
    [(area, msg, fix)] = problems(data)
    assert area == "vault" and "could not unlock" in msg and "ASSISTANT_VAULT_PASSPHRASE" in fix
    code, data = doctor(path, "--model", model, env={"ASSISTANT_VAULT_PASSPHRASE": "a long passphrase"})
    assert code == 0, problems(data)
    # a key file others can read is refused, with the chmod fix
    key = tmp_path / "vault.key"
    key.write_text("a long passphrase\n")
    os.chmod(key, 0o644)
    cfg = path / "config.toml"
    cfg.write_text(cfg.read_text().replace('key_file = ""', f'key_file = "{key}"'))
    code, data = doctor(path, "--model", model)
    assert code == 1 and any("chmod 600" in m for _, m, _ in problems(data))
    os.chmod(key, 0o600)
    code, data = doctor(path, "--model", model)
    assert code == 0, problems(data)


def test_approval_channel_none_and_broken_notify(ws, tmp_path):
    path, model = ws
    cfg = path / "config.toml"
    base = cfg.read_text()
    cfg.write_text(base.replace('channel = "inbox"', 'channel = "none"'))
    code, data = doctor(path, "--model", model)
    assert code == 1 and any("nobody can be asked" in m for _, m, _ in problems(data))

    cfg.write_text(base.replace("notify = []", 'notify = ["/nonexistent/notify-send", "{summary}"]'))
    code, data = doctor(path, "--model", model)
    assert code == 1 and any("notify command not found" in m for _, m, _ in problems(data))

    cfg.write_text(base.replace("notify = []", 'notify = ["false"]'))
    code, data = doctor(path, "--model", model)
    assert code == 1 and any("failed with exit status 1" in m for _, m, _ in problems(data))

    # a working notify command is run once, with the test summary, and no request is filed
    log = tmp_path / "notified.txt"
    script = tmp_path / "notify.sh"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {log}\n')
    script.chmod(0o755)
    cfg.write_text(base.replace("notify = []", f'notify = ["{script}", "{{summary}}"]'))
    code, data = doctor(path, "--model", model)
    assert code == 0, problems(data)
    assert log.read_text() == "assistant doctor: test notification, nothing to approve\n"
    assert list((path / "state" / "approvals").iterdir()) == []


def test_unwritable_inbox(ws):
    path, model = ws
    if os.geteuid() == 0:
        # root writes anywhere; make the inbox a file instead so it cannot hold requests
        (path / "state" / "approvals").rmdir()
        (path / "state" / "approvals").write_text("")
    else:
        os.chmod(path / "state" / "approvals", 0o500)
    code, data = doctor(path, "--model", model)
    found = problems(data)
    assert code == 1
    assert any(area == "approvals" and "is not writable" in m and "mkdir -p -m 700" in f for area, m, f in found)


def test_corrupt_grants_and_bad_schedule(ws):
    path, model = ws
    (path / "grants.json").write_text("{not json")
    cfg = path / "config.toml"
    cfg.write_text(cfg.read_text().replace('cron = "30 7 * * 1-5"', 'cron = "30 7 * *"'))
    code, data = doctor(path, "--model", model)
    msgs = [m for _, m, _ in problems(data)]
    assert code == 1
    assert any(m.startswith("grants.json") for m in msgs)
    assert any("morning-review" in m and "5 fields" in m for m in msgs)


def test_corrupt_config_is_a_problem_with_its_fix_and_the_layout_is_still_checked(ws):
    path, model = ws
    with open(path / "config.toml", "a") as f:
        f.write("\nthis is [ not toml\n")
    os.chmod(path / "memory", 0o755)
    code, data = doctor(path, "--model", model)
    assert code == 1 and data["ok"] is False
    found = problems(data)
    assert any(area == "config" and "not valid TOML" in msg and "config.toml" in fix for area, msg, fix in found), found
    # the layout checks still ran: the loose memory/ is reported in the same pass
    assert any(area == "permissions" and msg.startswith("memory") for area, msg, _ in found), found


def test_missing_workspace_is_a_problem_not_a_crash(tmp_path):
    code, data = doctor(tmp_path / "nowhere")
    assert code == 1 and data["ok"] is False
    [(area, msg, fix)] = problems(data)
    assert area == "layout" and "no workspace" in msg and "assistant init" in fix
    r = CliRunner().invoke(main, ["-w", str(tmp_path / "nowhere"), "doctor"])
    assert r.exit_code == 1 and "PROBLEM" in r.stdout and "fix: assistant init" in r.stdout


# acceptance (issue 6: the assistant), written from the words
def test_doctor_reports(vault_ws):
    r = sub(vault_ws, "doctor")
    assert r.stdout.strip() or r.stderr.strip()
    os.chmod(vault_ws / "memory", 0o777)
    r2 = sub(vault_ws, "doctor")
    assert r2.returncode != 0
    assert "memory" in (r2.stdout + r2.stderr)
    os.chmod(vault_ws / "memory", 0o700)
