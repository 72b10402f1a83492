"""`assistant schedule list|run|install`: scheduled unattended runs, handed to cron or systemd.

Guards that only validated `[[schedule]]` entries reach the OS scheduler, that `--write`
never clobbers another workspace's entries, and that printing is the default (nothing is
installed unless asked).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import click

from assistant.display.localtime import local_time
from policy.fileio import write_atomic

from assistant.workspace.schedule import (
    Schedule, ScheduleError, crontab_lines, find_schedule, merge_crontab, systemd_units, written_for,
    systemd_user_dir,
)
from assistant.workspace.layout import Workspace
from assistant.secrets.vault import VaultError, read_key_file
from assistant.cli.common import (
    echo_json, fail, get_workspace, json_option, model_spec_or_group, workspace_group,
)
from assistant.cli.run import execute_run, sigterm_interrupts

ENV_CRONTAB = "ASSISTANT_CRONTAB"   # argv of the crontab program (default: "crontab")


def _schedules(ws: Workspace) -> list[Schedule]:
    return list(ws.config.schedule)    # checked by get_workspace("schedule")


schedule_group = workspace_group("schedule", "Scheduled unattended runs ([[schedule]] in config.toml); cron or systemd does the timing.")


@schedule_group.command("list")
@json_option()
def schedule_list(as_json: bool) -> None:
    """List the configured schedules with their next run time (local time)."""
    ws = get_workspace("schedule")
    schedules = _schedules(ws)
    now = datetime.now()
    rows = []
    for s in schedules:
        nxt = s.cron.next_after(now)
        local = nxt.astimezone() if nxt else None     # naive local time -> with this machine's zone
        rows.append({"name": s.name, "cron": s.cron.expression, "task": s.task, "command": s.command,
                     "next": nxt.strftime("%Y-%m-%d %H:%M") if nxt else None,
                     "next_iso": local.isoformat(timespec="minutes") if local else None,
                     "zone": (local.strftime("%Z") or local.strftime("%z")) if local else None})
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("no schedules: add [[schedule]] entries (name, cron, task) to config.toml")
        return
    for r in rows:
        click.echo(f"{r['name']}  {r['cron']}  next {local_time(r['next_iso'], seconds=False) if r['next'] else 'never'}")
        click.echo("    (assistant sync)" if r["command"] == "sync" else f"    {r['task']}")


@schedule_group.command("run")
@click.argument("name")
@click.option("--model", "model_spec", default=None, metavar="SPEC",
              help="Model to use instead of config (e.g. script:FILE.json).")
@click.option("--approval-timeout", default=None, metavar="DURATION",
              help="Wait this long for an approval instead of approvals.timeout.")
def schedule_run(name: str, model_spec: str | None, approval_timeout: str | None) -> None:
    """Run schedule NAME now, exactly as the OS scheduler would (`assistant run TASK`, or
    `assistant sync` for an entry with command = "sync")."""
    model_spec = model_spec_or_group(model_spec)
    ws = get_workspace("schedule")
    try:
        sched = find_schedule(ws.config.schedule, name)
    except ScheduleError as exc:
        fail(str(exc))

    if sched.command == "sync":
        # the very command the OS scheduler runs, in a child (its own session and exit code)
        done = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws.root), "sync"], timeout=3600)
        sys.exit(done.returncode)
    sigterm_interrupts()
    sys.exit(execute_run(ws, sched.task, model_spec=model_spec, approval_timeout=approval_timeout,
                         label=f"schedule {name}"))


def _crontab_argv() -> list[str]:
    return shlex.split(os.environ.get(ENV_CRONTAB, "crontab"))


def _write_crontab(ws_root: Path, block: list[str]) -> None:
    argv = _crontab_argv()
    try:
        current = subprocess.run([*argv, "-l"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        fail(f"cannot run {argv[0]!r} to read your crontab ({exc}); use --print and install the lines yourself")
    # `crontab -l` exits non-zero with "no crontab for USER" when there is none yet.
    existing = current.stdout if current.returncode == 0 else ""
    if current.returncode != 0 and "no crontab" not in (current.stderr or "").lower():
        fail(f"`{shlex.join([*argv, '-l'])}` failed: {(current.stderr or '').strip() or current.returncode}")
    merged = merge_crontab(existing, ws_root, block)
    try:
        done = subprocess.run([*argv, "-"], input=merged, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        fail(f"cannot run {argv[0]!r} to install your crontab ({exc})")
    if done.returncode != 0:
        fail(f"`{shlex.join([*argv, '-'])}` refused the new crontab: {(done.stderr or '').strip()}")


def _write_units(units: dict[str, str], ws_root: Path) -> Path:
    target = systemd_user_dir()
    target.mkdir(parents=True, exist_ok=True)
    for fname in units:
        path = target / fname
        if path.exists() or path.is_symlink():
            try:
                old = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                old = ""
            if not written_for(old, ws_root):
                fail(f"{path} exists and was not written for this workspace; not overwriting it "
                     "(rename the schedule or remove that unit)")
    for fname, text in units.items():
        path = target / fname
        try:
            write_atomic(path, text.encode("utf-8"), mode=None)   # units are not private: the umask decides
        except OSError as exc:
            fail(f"cannot write {path}: {exc.strerror or exc}")
    return target


# The user manager's own session bus: where a systemd user service reaches the Secret Service.
SYSTEMD_SESSION_BUS = "unix:path=%t/bus"


def _unlock_problem(ws, flavour: str) -> str | None:
    """Why the installed units could not unlock this workspace's vault, or None when they can
    (no vault, a usable key file, or the keyring from a systemd user service)."""
    if not (ws.vault_path.exists() or ws.vault_path.is_symlink()):
        return None
    try:
        if read_key_file(ws) is not None:
            return None
    except VaultError as exc:
        return f"[vault] key_file cannot be used: {exc}"
    keyring = ws.config.vault.unlock == "keyring"
    if keyring and flavour == "systemd":
        return None
    if keyring:
        return ("the vault is unlocked from the OS keyring ([vault] unlock = \"keyring\"), which cron cannot "
                "reach (no session bus): install with --systemd (user services reach the keyring while you are "
                "logged in), or set [vault] key_file to a file holding the passphrase (chmod 600)")
    return ("the vault cannot be unlocked by a scheduled run (it never asks for a passphrase): set [vault] "
            "key_file in config.toml to a file holding the passphrase (chmod 600)"
            + (", or `assistant vault remember` and install with --systemd" if flavour == "systemd" else ""))


@schedule_group.command("install")
@click.option("--cron", "cron", is_flag=True, help="Crontab lines (the default).")
@click.option("--systemd", "systemd", is_flag=True, help="systemd user timer + service units.")
@click.option("--print", "print_", is_flag=True, help="Print them (the default).")
@click.option("--write", "write", is_flag=True,
              help="Install them (your crontab, this workspace's block only / ~/.config/systemd/user).")
def schedule_install(cron: bool, systemd: bool, print_: bool, write: bool) -> None:
    """Turn the schedules into crontab lines or systemd user timers running `assistant run TASK`.

    Default: --cron --print (nothing is changed until you pass --write). Scheduled runs never
    ask for the vault passphrase: with a vault, --write refuses (and --print warns) unless the
    units can unlock it ([vault] key_file, or the OS keyring from systemd user services, whose
    units then get the session bus they need).
    """
    if cron and systemd:
        raise click.UsageError("--cron or --systemd, not both")
    if print_ and write:
        raise click.UsageError("--print or --write, not both")
    flavour = "systemd" if systemd else "cron"
    action = "write" if write else "print"
    ws = get_workspace("schedule")
    schedules = _schedules(ws)
    if not schedules:
        fail("no schedules to install: add [[schedule]] entries (name, cron, task) to config.toml")
    problem = _unlock_problem(ws, flavour)
    if problem and action == "write":
        fail(f"not installed: every scheduled run would fail, because {problem}")
    if problem:
        click.echo(f"warning: {problem}", err=True)
    if flavour == "cron":
        try:
            block = crontab_lines(ws.root, schedules)
        except ScheduleError as exc:
            fail(str(exc))
        if action == "print":
            click.echo("\n".join(block))
            return
        _write_crontab(ws.root, block)
        click.echo(f"installed {len(schedules)} schedule(s) into your crontab (block for {ws.root})")
        return
    keyring = ws.config.vault.unlock == "keyring"
    try:
        units = systemd_units(ws.root, schedules,
                              environment={"DBUS_SESSION_BUS_ADDRESS": SYSTEMD_SESSION_BUS} if keyring else None)
    except ScheduleError as exc:
        fail(str(exc))
    if action == "print":
        for fname, text in units.items():
            click.echo(f"# ---- {fname}")
            click.echo(text)
        return
    target = _write_units(units, ws.root)
    timers = " ".join(f for f in units if f.endswith(".timer"))
    click.echo(f"wrote {len(units)} unit file(s) to {target}")
    click.echo(f"next: systemctl --user daemon-reload && systemctl --user enable --now {timers}")
    _name_stale_units(target, units, ws.root)


def _name_stale_units(target: Path, units: dict[str, str], ws_root: Path) -> None:
    """Units written earlier for this workspace whose schedule is gone from config.toml would
    keep firing. They may be enabled, so they are not deleted here: named, with the fix."""
    try:
        names = sorted(os.listdir(target))
    except OSError:
        return
    for fname in names:
        if not (fname.startswith("assistant-") and fname.endswith(".timer")) or fname in units:
            continue
        path = target / fname
        try:
            if path.is_symlink() or not written_for(path.read_text(encoding="utf-8"), ws_root):
                continue
        except (OSError, UnicodeDecodeError):
            continue
        service = fname[: -len(".timer")] + ".service"
        click.echo(f"note: {fname} is no longer in config.toml but still installed; to retire it: "
                   f"systemctl --user disable --now {fname} && rm {shlex.quote(str(path))} "
                   f"{shlex.quote(str(target / service))} && systemctl --user daemon-reload")


COMMANDS = [schedule_group]
