"""Issue 23 item 6: a newline (or another control character) in the workspace path must not
inject crontab lines or systemd directives. `schedule install` refuses such a path, printing
nothing of the entries, and the functions that build them refuse it too."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from assistant.cli import main
from assistant.workspace.layout import init_workspace
from assistant.workspace.schedule import (
    Schedule, ScheduleError, crontab_lines, parse_cron, systemd_units,
)

INJECTED = "* * * * * touch /tmp/assistant-pwned"
DIRECTIVE = "ExecStartPre=/bin/touch /tmp/assistant-pwned"


def _schedules():
    return [Schedule("daily", parse_cron("@daily"), "look over my notes")]


@pytest.mark.parametrize("bad", ["\n" + INJECTED + "\n", "\n" + DIRECTIVE + "\n", "\r", "\x1b[2K", "\x85", "\u2028"])
def test_builders_refuse_a_workspace_path_with_a_control_character(bad):
    ws = Path(f"/home/me/notes{bad}x")
    with pytest.raises(ScheduleError, match="workspace path"):
        crontab_lines(ws, _schedules(), exe="/bin/assistant")
    with pytest.raises(ScheduleError, match="workspace path"):
        systemd_units(ws, _schedules(), exe="/bin/assistant")


def test_builders_refuse_an_executable_path_with_a_newline():
    with pytest.raises(ScheduleError, match="assistant command"):
        crontab_lines(Path("/w"), _schedules(), exe="/bin/assi\n" + INJECTED)
    with pytest.raises(ScheduleError, match="assistant command"):
        systemd_units(Path("/w"), _schedules(), exe="/bin/assi\n" + DIRECTIVE)


@pytest.mark.parametrize("flavour", ["--cron", "--systemd"])
def test_install_refuses_a_workspace_folder_whose_name_holds_a_newline(tmp_path, flavour):
    ws = tmp_path / f"ws\n{INJECTED}\n{DIRECTIVE}\nx"
    init_workspace(ws, example=True)
    r = CliRunner().invoke(main, ["-w", str(ws), "schedule", "install", flavour, "--print"])
    printed = r.output + r.stderr
    lines = printed.splitlines()
    assert INJECTED not in lines and DIRECTIVE not in lines, printed
    assert not any(line.startswith(INJECTED) or line.startswith(DIRECTIVE) for line in lines), printed
    assert r.exit_code == 1, printed
    assert "workspace path" in r.stderr and "\\n" in r.stderr   # the newline is shown escaped
    assert "move the workspace" in r.stderr


def test_install_still_prints_for_an_ordinary_path_with_spaces_and_percent(tmp_path):
    ws = tmp_path / "my notes 100%"
    init_workspace(ws, example=True)
    r = CliRunner().invoke(main, ["-w", str(ws), "schedule", "install", "--cron", "--print"])
    assert r.exit_code == 0, r.output
    entry = [l for l in r.output.splitlines() if not l.startswith("#")]
    assert len(entry) == 1 and "100\\%" in entry[0]
