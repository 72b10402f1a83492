"""Schedules: cron parsing, next-run, crontab lines, systemd units, and the CLI."""

import json
import os
import shutil
import stat
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from assistant.cli import main
from assistant.workspace.schedule import (
    Schedule, ScheduleError, crontab_lines, load_schedules, merge_crontab, on_calendar, parse_cron,
    systemd_units,
)
from assistant.workspace.layout import init_workspace
from acceptance_support import cli, script, sub


@pytest.mark.parametrize("expr,field", [
    ("* * * *", "5 fields"),
    ("* * * * * *", "5 fields"),
    ("60 * * * *", "outside 0-59"),
    ("* 24 * * *", "outside 0-23"),
    ("* * 0 * *", "outside 1-31"),
    ("* * * 13 *", "outside 1-12"),
    ("* * * * 8", "outside 0-7"),
    ("*/0 * * * *", "step"),
    ("5-1 * * * *", "backwards"),
    ("a * * * *", "not a number"),
    ("1,,2 * * * *", "empty item"),
    ("@sometimes", "unknown macro"),
    ("* * * * *\n* * * * *", "control"),
])
def test_bad_cron_is_refused_with_reason(expr, field):
    with pytest.raises(ScheduleError, match=field):
        parse_cron(expr)


def test_cron_fields_and_names():
    c = parse_cron("*/15 9-17 * jan-mar MON-fri")
    assert sorted(c.minutes) == [0, 15, 30, 45]
    assert sorted(c.hours) == list(range(9, 18))
    assert sorted(c.months) == [1, 2, 3]
    assert sorted(c.weekdays) == [1, 2, 3, 4, 5]
    assert parse_cron("0 0 * * 7").weekdays == {0}           # 7 is Sunday too
    assert parse_cron("5/20 * * * *").minutes == {5, 25, 45}
    assert parse_cron("@daily").fields == "0 0 * * *"


def test_next_after_follows_cron_day_rules():
    weekday = parse_cron("30 7 * * 1-5")
    # Saturday 2026-11-28 08:00 -> Monday 07:30
    assert weekday.next_after(datetime(2026, 11, 28, 8, 0)) == datetime(2026, 11, 30, 7, 30)
    # strictly after: at 07:30 on a Monday the next one is Tuesday
    assert weekday.next_after(datetime(2026, 11, 30, 7, 30)) == datetime(2026, 12, 1, 7, 30)
    # both day fields restricted: either matches (the 1st, or any Friday)
    either = parse_cron("0 12 1 * fri")
    assert either.next_after(datetime(2026, 11, 28)) == datetime(2026, 12, 1, 12, 0)
    assert either.next_after(datetime(2026, 12, 1, 13)) == datetime(2026, 12, 4, 12, 0)
    leap = parse_cron("0 0 29 2 *")
    assert leap.next_after(datetime(2026, 3, 1)) == datetime(2028, 2, 29, 0, 0)


def _cfg(*entries):
    return {"schedule": list(entries)}


@pytest.mark.parametrize("entry,msg", [
    ({"name": "a", "cron": "* * * *", "task": "x"}, "5 fields"),
    ({"name": "bad name", "cron": "@daily", "task": "x"}, "name"),
    ({"name": "../x", "cron": "@daily", "task": "x"}, "name"),
    ({"name": "a", "cron": "@daily"}, "missing task"),
    ({"name": "a", "cron": "@daily", "task": "   "}, "non-empty"),
    ({"name": "a", "cron": "@daily", "task": "two\nlines"}, "one line"),
    ({"name": "a", "cron": "@daily", "task": "x", "when": 1}, "unknown key"),
])
def test_bad_schedule_entries(entry, msg):
    with pytest.raises(ScheduleError, match=msg):
        load_schedules(_cfg(entry))


def test_duplicate_names_refused():
    e = {"name": "a", "cron": "@daily", "task": "x"}
    with pytest.raises(ScheduleError, match="used twice"):
        load_schedules(_cfg(e, dict(e)))


def test_crontab_line_quotes_task_for_shell_and_cron(tmp_path):
    task = "it's 50% done; rm -rf / $(whoami) `id`"
    lines = crontab_lines(Path("/ws dir"), [Schedule("t", parse_cron("@hourly"), task)], exe="/opt/bin/assistant")
    line = next(l for l in lines if not l.startswith("#"))
    assert line.startswith("0 * * * * ")
    cmd = line[len("0 * * * * "):]
    # cron would turn the unescaped % into a newline; ours are all escaped
    assert "%" not in cmd.replace("\\%", "")
    # what the shell sees after cron strips the backslashes is exactly our argv
    as_shell = cmd.replace("\\%", "%")
    out = subprocess.run(["sh", "-c", "printf '%s\\n' " + as_shell.split(" ", 1)[1]],
                         capture_output=True, text=True).stdout.splitlines()
    assert out == ["-w", "/ws dir", "run", task]


def test_merge_crontab_replaces_only_our_block():
    ws = Path("/w")
    block1 = crontab_lines(ws, [Schedule("a", parse_cron("@daily"), "one")], exe="asst")
    block2 = crontab_lines(ws, [Schedule("b", parse_cron("@hourly"), "two")], exe="asst")
    other = crontab_lines(Path("/other"), [Schedule("c", parse_cron("@daily"), "three")], exe="asst")
    existing = "MAILTO=me\n0 1 * * * backup\n"
    once = merge_crontab(existing, ws, block1)
    once = merge_crontab(once, Path("/other"), other)
    twice = merge_crontab(once, ws, block2)
    assert "backup" in twice and "MAILTO=me" in twice
    assert "one" not in twice and "two" in twice and "three" in twice
    assert twice.count("# BEGIN assistant schedules for /w\n") == 1


@pytest.mark.parametrize("expr", ["30 7 * * 1-5", "*/15 9-17 * * *", "0 12 1 * fri", "0 0 1 jan *", "5,35 */6 10-20 * *"])
def test_on_calendar_matches_cron(expr):
    """systemd's own parser agrees with our next-run times for the generated OnCalendar."""
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze not installed")
    cron = parse_cron(expr)
    specs = on_calendar(cron)
    proc = subprocess.run(["systemd-analyze", "calendar", "--iterations=6", *specs],
                          capture_output=True, text=True, env={**os.environ, "TZ": "UTC", "LC_ALL": "C"})
    assert proc.returncode == 0, proc.stderr
    times = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith(("Next elapse:", "Iter. #")):
            stamp = line.split(":", 1)[1].strip()          # e.g. "Mon 2026-11-30 07:30:00 UTC"
            times.append(datetime.strptime(" ".join(stamp.split()[1:3]), "%Y-%m-%d %H:%M:%S"))
    systemd = sorted(set(times))[:6]
    now = datetime.utcnow()
    ours, t = [], now
    for _ in range(6):
        t = cron.next_after(t)
        ours.append(t)
    assert systemd == ours


def test_systemd_units_escape_exec_start():
    task = 'say "hi" to $USER at 100% \\ done'
    units = systemd_units(Path("/w"), [Schedule("t", parse_cron("@daily"), task)], exe="/bin/assistant")
    service = units["assistant-t.service"]
    exec_line = next(l for l in service.splitlines() if l.startswith("ExecStart="))
    assert exec_line == 'ExecStart="/bin/assistant" "-w" "/w" "run" "say \\"hi\\" to $$USER at 100%% \\\\ done"'
    timer = units["assistant-t.timer"]
    assert "OnCalendar=*-*-* 00:00:00" in timer and "Unit=assistant-t.service" in timer


# `ws` (the example workspace, a Path) comes from tests/conftest.py

def _invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def test_cli_list_json_and_text(ws):
    r = _invoke("-w", str(ws), "schedule", "list", "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert rows[0]["name"] == "morning-review" and rows[0]["cron"] == "30 7 * * 1-5"
    assert rows[0]["next"]
    r = _invoke("schedule", "list", "-w", str(ws))
    assert "morning-review" in r.output


def test_cli_bad_schedule_is_specific_error(ws):
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace('cron = "30 7 * * 1-5"', 'cron = "30 25 * * *"'))
    r = CliRunner().invoke(main, ["-w", str(ws), "schedule", "list"])
    assert r.exit_code == 1
    assert "morning-review" in r.stderr and "outside 0-23" in r.stderr


def test_cli_install_print_cron_and_systemd(ws):
    r = _invoke("-w", str(ws), "schedule", "install", "--cron", "--print")
    assert r.exit_code == 0
    line = [l for l in r.output.splitlines() if not l.startswith("#")][0]
    assert line.startswith("30 7 * * 1-5 ") and f"-w {ws} run" in line
    r = _invoke("-w", str(ws), "schedule", "install", "--systemd")
    assert "OnCalendar=Mon,Tue,Wed,Thu,Fri *-*-* 07:30:00" in r.output
    assert '"run" "Look over my notes' in r.output


def test_cli_install_write_systemd(ws, tmp_path):
    xdg = tmp_path / "xdg"
    r = _invoke("-w", str(ws), "schedule", "install", "--systemd", "--write", env={"XDG_CONFIG_HOME": str(xdg)})
    assert r.exit_code == 0, r.output
    unit_dir = xdg / "systemd" / "user"
    assert sorted(os.listdir(unit_dir)) == ["assistant-morning-review.service", "assistant-morning-review.timer"]
    assert "systemctl --user enable --now assistant-morning-review.timer" in r.output
    # a unit of the same name from another workspace is never overwritten
    other = tmp_path / "other"
    init_workspace(other, example=True)
    r = CliRunner().invoke(main, ["-w", str(other), "schedule", "install", "--systemd", "--write"],
                           env={"XDG_CONFIG_HOME": str(xdg)})
    assert r.exit_code == 1 and "not written for this workspace" in r.stderr
    assert str(ws) in (unit_dir / "assistant-morning-review.service").read_text()


def test_cli_install_write_cron_uses_crontab_program(ws, tmp_path):
    store = tmp_path / "crontab.txt"
    store.write_text("MAILTO=me\n")
    fake = tmp_path / "fake-crontab"
    fake.write_text(f"""#!/bin/sh
if [ "$1" = "-l" ]; then cat {store}; exit 0; fi
if [ "$1" = "-" ]; then cat > {store}; exit 0; fi
exit 2
""")
    fake.chmod(0o755)
    env = {"ASSISTANT_CRONTAB": str(fake)}
    for _ in range(2):   # installing twice keeps one block
        r = _invoke("-w", str(ws), "schedule", "install", "--cron", "--write", env=env)
        assert r.exit_code == 0, r.output
    text = store.read_text()
    assert text.startswith("MAILTO=me\n")
    assert text.count("30 7 * * 1-5 ") == 1


def test_cli_schedule_run_unknown_name(ws):
    r = CliRunner().invoke(main, ["-w", str(ws), "schedule", "run", "nope"])
    assert r.exit_code == 1 and "no schedule named 'nope'" in r.stderr and "morning-review" in r.stderr


def test_cli_list_says_which_time_zone_the_next_run_is_in(ws):
    """'next 2026-12-01 07:30' alone is ambiguous on a server in UTC; say the zone, and give
    scripts an ISO time with its offset."""
    from datetime import datetime

    r = _invoke("-w", str(ws), "schedule", "list", "--json")
    [row] = json.loads(r.output)
    when = datetime.fromisoformat(row["next_iso"])
    assert when.utcoffset() is not None
    assert when.strftime("%Y-%m-%d %H:%M") == row["next"]
    r = _invoke("-w", str(ws), "schedule", "list")
    zone = when.strftime("%Z") or when.strftime("%z")
    assert f"next {row['next']} {zone}" in r.output, r.output


def test_cli_install_write_systemd_names_units_left_from_a_removed_schedule(ws, tmp_path):
    """cron's block is replaced whole, so a removed schedule stops; a systemd timer file would
    keep firing. It is not deleted behind systemd's back (it may be enabled): it is named,
    with the commands that retire it. Another workspace's units are not named."""
    xdg = tmp_path / "xdg"
    env = {"XDG_CONFIG_HOME": str(xdg)}
    other = tmp_path / "other"
    init_workspace(other, example=True)
    cfg = other / "config.toml"
    cfg.write_text(cfg.read_text().replace('name = "morning-review"', 'name = "other-review"'))
    assert _invoke("-w", str(other), "schedule", "install", "--systemd", "--write", env=env).exit_code == 0
    assert _invoke("-w", str(ws), "schedule", "install", "--systemd", "--write", env=env).exit_code == 0
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace('name = "morning-review"', 'name = "evening-review"'))
    r = _invoke("-w", str(ws), "schedule", "install", "--systemd", "--write", env=env)
    assert r.exit_code == 0, r.output
    unit_dir = xdg / "systemd" / "user"
    assert (unit_dir / "assistant-morning-review.timer").exists()      # not deleted behind systemd's back
    assert "assistant-morning-review.timer is no longer in config.toml" in r.output
    assert ("systemctl --user disable --now assistant-morning-review.timer" in r.output
            and "assistant-morning-review.service" in r.output)
    assert "other-review" not in r.output


# acceptance (issue 6: the assistant), written from the words
def test_schedule_list_run_install(vault_ws, tmp_path):
    r = cli(vault_ws, "schedule", "list")
    assert "morning-review" in r.output
    r = cli(vault_ws, "schedule", "install")
    assert "assistant" in r.output and "run" in r.output
    assert "30 7 * * 1-5" in r.output or "OnCalendar" in r.output
    r = cli(vault_ws, "schedule", "run", "no-such-schedule", ok=False)
    assert r.exit_code != 0 and r.output.strip()


def test_schedule_run_named(vault_ws, tmp_path):
    m = script(tmp_path, [{"reply": "Nothing needs attention."}])
    r = sub(vault_ws, "schedule", "run", "morning-review", "--model", m)
    assert r.returncode == 0, r.stderr + r.stdout
    assert "Nothing needs attention." in r.stdout
