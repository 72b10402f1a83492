"""Setting sync up: the remote (no credentials in a URL, no ext::, must be reachable), the device
list (this device first, --json as {"name", "key", "this"}), enrolment (an OpenSSH ed25519 line),
the hosted-remote warning, the schedule entry, and `memory forget` as a signed tombstone."""

from __future__ import annotations

import json
import subprocess

import pytest

from assistant.sync.git import check_remote
from assistant.sync.keys import parse_public_line, public_line
from assistant.workspace.schedule import ScheduleError, crontab_lines, load_schedules, systemd_units

from sync_support import cli, devices, git, make_remote, sync, text, versions, write
from workspaces import bare_ws


@pytest.mark.parametrize("url", [
    "https://alice:hunter2@example.org/notes.git",
    "https://ghp_0123456789abcdefghij0123456789abcdef@example.org/notes.git",
    "ssh://git:secret@example.org/notes.git",
])
def test_a_remote_url_with_credentials_is_refused_and_nothing_is_set_up(tmp_path, url):
    ws = bare_ws(tmp_path)
    out = cli(ws, "sync", "init", url, "--name", "A")
    assert out.returncode == 1 and "credentials" in out.stderr
    assert "hunter2" not in out.stderr and "secret@" not in out.stderr
    assert not (ws / "state" / "sync" / "sync.json").exists()


@pytest.mark.parametrize("url", ["ext::sh -c touch% /tmp/owned", "-uhome", "", "fd::3"])
def test_odd_remotes_are_refused(url):
    with pytest.raises(ValueError):
        check_remote(url)


def test_plain_remotes_pass_the_check():
    for url in ("/srv/notes.git", "git@example.org:notes.git", "ssh://git@example.org/notes.git",
                "https://example.org/notes.git"):
        assert check_remote(url) == url


def test_init_warns_that_the_host_can_read_the_notes_and_refuses_an_unreachable_remote(tmp_path):
    ws = bare_ws(tmp_path)
    missing = cli(ws, "sync", "init", str(tmp_path / "nowhere.git"), "--name", "A")
    assert missing.returncode == 1 and "cannot be reached" in missing.stderr
    assert not (ws / "state" / "sync" / "sync.json").exists()
    remote = make_remote(tmp_path)
    done = cli(ws, "sync", "init", str(remote), "--name", "A")
    assert done.returncode == 0, done.stderr
    warning = [line for line in done.stdout.splitlines() if "can read the notes" in line]
    assert len(warning) == 1 and str(remote) in warning[0]


def test_devices_list_shows_this_device_first_and_enrolled_ones(tmp_path):
    d = devices(tmp_path, "A", "B")
    rows = json.loads(cli(d["A"], "sync", "devices", "list", "--json").stdout)
    assert [(r["name"], r["this"]) for r in rows] == [("A", True), ("B", False)]
    assert all(set(r) == {"name", "key", "this"} for r in rows)
    assert all(r["key"].startswith("ssh-ed25519 AAAA") for r in rows)
    # the key line is one ssh-keygen reads as an ed25519 key
    keyfile = tmp_path / "a.pub"
    keyfile.write_text(rows[0]["key"] + "\n")
    shown = subprocess.run(["ssh-keygen", "-l", "-f", str(keyfile)], capture_output=True, text=True)
    if shown.returncode != 127:
        assert shown.returncode == 0 and "ED25519" in shown.stdout
    removed = cli(d["A"], "sync", "devices", "remove", "B")
    assert removed.returncode == 0
    rows = json.loads(cli(d["A"], "sync", "devices", "list", "--json").stdout)
    assert [r["name"] for r in rows] == ["A"]


@pytest.mark.parametrize("key", [
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ",
    "ssh-ed25519 not-base64!",
    "ssh-ed25519 " + public_line(b"x" * 32).split()[1][:-8],      # cut short
])
def test_enrolment_refuses_a_key_that_is_not_an_ed25519_line(tmp_path, key):
    d = devices(tmp_path, "A")
    out = cli(d["A"], "sync", "devices", "add", "B", key)
    assert out.returncode == 1 and "KEY" in out.stderr
    assert json.loads(cli(d["A"], "sync", "devices", "list", "--json").stdout)[1:] == []


def test_a_public_line_round_trips():
    raw = bytes(range(32))
    assert parse_public_line(public_line(raw, "laptop")) == raw


def test_the_schedule_entry_runs_sync(tmp_path):
    schedules = load_schedules({"schedule": [{"name": "sync", "cron": "*/15 * * * *", "command": "sync"},
                                             {"name": "daily", "cron": "@daily", "task": "summarise"}]})
    assert [s.command for s in schedules] == ["sync", "run"]
    lines = crontab_lines(tmp_path, schedules, exe="/usr/bin/assistant")
    assert any(line.endswith(f"/usr/bin/assistant -w {tmp_path} sync") for line in lines)
    assert any(line.endswith(f"-w {tmp_path} run summarise") for line in lines)
    units = systemd_units(tmp_path, schedules[:1], exe="/usr/bin/assistant")
    assert any(f'ExecStart="/usr/bin/assistant" "-w" "{tmp_path}" "sync"\n' in body for body in units.values())
    with pytest.raises(ScheduleError, match="takes no task"):
        load_schedules({"schedule": [{"name": "s", "cron": "@daily", "command": "sync", "task": "x"}]})
    with pytest.raises(ScheduleError, match="command must be one of"):
        load_schedules({"schedule": [{"name": "s", "cron": "@daily", "command": "rm"}]})


def test_schedule_run_of_a_sync_entry_syncs(tmp_path):
    d = devices(tmp_path, "A", "B")
    cfg = d["A"] / "config.toml"
    cfg.write_text(cfg.read_text() + '\n[[schedule]]\nname = "sync"\ncron = "@hourly"\ncommand = "sync"\n')
    write(d["A"], "n.md", "scheduled\n")
    out = cli(d["A"], "schedule", "run", "sync")
    assert out.returncode == 0, out.stderr
    sync(d["B"])
    assert text(d["B"], "n.md") == "scheduled\n"


def test_memory_forget_travels_as_a_signed_tombstone(tmp_path):
    d = devices(tmp_path, "A", "B")
    write(d["A"], "n.md", "one\n")
    write(d["A"], "n.md", "two\n")
    sync(d["A"]); sync(d["B"])
    assert len(versions(d["B"], "n.md")) >= 3
    out = cli(d["A"], "memory", "forget", "n.md")
    assert out.returncode == 0, out.stderr
    assert "other devices" in out.stdout
    sync(d["A"])
    report = sync(d["B"])
    assert report.integrations[0].forgotten == ["n.md"]
    left = versions(d["B"], "n.md")
    assert not [v for v in left if v.bytes == 4 and v.imported]           # A's versions are gone
    assert text(d["B"], "n.md") == "two\n"                                 # the note itself stays


def test_sync_files_true_is_read_and_files_travel(tmp_path):
    d = devices(tmp_path, "A", "B")
    cfg = d["A"] / "config.toml"
    assert "\nfiles = false\n" in cfg.read_text()          # [sync], as `assistant init` writes it
    cfg.write_text(cfg.read_text().replace("\nfiles = false\n", "\nfiles = true\n"))
    (d["A"] / "files").mkdir(exist_ok=True)
    (d["A"] / "files" / "todo.txt").write_text("buy milk\n")
    out = cli(d["A"], "sync")
    assert out.returncode == 0, out.stderr
    assert "not built" not in out.stderr and "1 file change(s)" in out.stdout
    assert [name for name in git("ls-tree", "-r", "--name-only", "devices/A", git_dir=tmp_path / "remote.git"
                                 ).splitlines() if name.startswith("files/")] == ["files/todo.txt"]
