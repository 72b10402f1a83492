"""Issue 23 item 6: a newline (or another control character) in the workspace path must not
inject crontab lines or systemd directives. `schedule install` refuses such a path, printing
nothing of the entries, and the functions that build them refuse it too."""

import subprocess
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
    assert len(entry) == 1 and "100'\\%'" in entry[0]      # the % escaped for cron, outside the quotes
    assert _as_cron_runs(entry[0].split(" ", 5)[5])[2] == str(ws)


def _cron_command(line: str) -> tuple[str, bool]:
    """What cron (Vixie cron, cronie) hands the shell for a crontab command: `\\%` becomes `%`,
    an unescaped `%` ends the command (True: it was cut there)."""
    out: list[str] = []
    escaped = False
    for ch in line:
        if escaped:
            if ch == "%":
                out[-1] = "%"
            else:
                out.append(ch)
            escaped = False
            continue
        if ch == "\\":
            escaped = True
        if ch == "%":
            return "".join(out), True
        out.append(ch)
    return "".join(out), False


def _as_cron_runs(command: str) -> list[str]:
    """The argv the shell gives the command cron runs (the executable replaced by printf)."""
    shell, cut = _cron_command(command)
    assert not cut, f"cron cuts the command at an unescaped %: {command!r}"
    words = shell.split(" ", 1)[1]
    out = subprocess.run(["sh", "-c", "printf '%s\\n' " + words], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return [shell.split(" ", 1)[0], *out.stdout.splitlines()]


@pytest.mark.parametrize("name", ["a\\%b", "odd \\\\% and 50%", "\\%\\%", "x%y\\", "it's 100\\%"])
def test_a_backslash_before_a_percent_reaches_the_shell_as_written(name):
    # review 23: shlex's quoting kept the path's own backslash, the added one made `\\%`, and cron
    # took the % as the end of the command: the entry never ran
    ws = Path("/home/me") / name
    task = "look over 100% of my notes \\% twice"
    [line] = [l for l in crontab_lines(ws, [Schedule("t", parse_cron("@hourly"), task)], exe="/opt/bin/assistant")
              if not l.startswith("#")]
    assert _as_cron_runs(line[len("0 * * * * "):]) == ["/opt/bin/assistant", "-w", str(ws), "run", task]


def test_units_of_a_workspace_whose_path_extends_this_ones_are_not_overwritten(tmp_path):
    # review 23: "written for this workspace" was a substring test of "# X-Assistant-Workspace=PATH ",
    # so a workspace at /x/my matched the marker of /x/my ws and overwrote its units
    xdg = tmp_path / "xdg"
    mine, other = tmp_path / "my ws", tmp_path / "my"
    init_workspace(mine, example=True)
    init_workspace(other, example=True)
    env = {"XDG_CONFIG_HOME": str(xdg)}
    r = CliRunner().invoke(main, ["-w", str(mine), "schedule", "install", "--systemd", "--write"], env=env)
    assert r.exit_code == 0, r.output
    units = sorted((xdg / "systemd" / "user").iterdir())
    before = {u.name: u.read_text() for u in units}
    r = CliRunner().invoke(main, ["-w", str(other), "schedule", "install", "--systemd", "--write"], env=env)
    assert r.exit_code == 1 and "was not written for this workspace" in r.stderr, r.output
    assert {u.name: u.read_text() for u in units} == before
    r = CliRunner().invoke(main, ["-w", str(mine), "schedule", "install", "--systemd", "--write"], env=env)
    assert r.exit_code == 0, r.output     # its own units are still its own
