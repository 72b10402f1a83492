"""`assistant sync [init|status|devices]`: the same memory on every enrolled device, through git.

Guards the person's side of sync: `sync` alone fetches, integrates the enrolled devices'
signed changes (each checked like a write, through the session's gate and writer) and pushes
this device's own; `init` sets it up (and says who can read what is sent); `status` names every
refused branch, change kept aside and open conflict; `devices` enrols and removes the devices
whose signed changes this device takes. Every text from another device or the remote is
escaped and redacted before it is printed.
"""

from __future__ import annotations

import sys

import click

from assistant.cli.common import echo_json, fail, get_workspace, json_option, visible, workspace_option
from assistant.session import SessionError, open_session
from assistant.sync.engine import (
    HOSTED_WARNING, SyncError, Syncer, device_list, enrol, init_sync, status, unenrol,
)
from assistant.sync.files import MAX_SYNC_BYTES, MAX_SYNC_FILES, file_mount
from assistant.sync.git import GitError
from assistant.sync.state import SyncStateError

COMMANDS: list[click.Command] = []


def _aside_line(entry: dict, red) -> str:
    """One kept-aside note or file for `sync status`: name and reason redacted, then escaped."""
    return (f"kept aside {_shown(red(str(entry.get('path'))))} from {_shown(entry.get('device'))}: "
            f"{_shown(red(str(entry.get('reason'))))}")


def _shown(text: object) -> str:
    return visible(str(text))


@click.group("sync", invoke_without_command=True)
@workspace_option
@click.pass_context
def sync_group(ctx: click.Context) -> None:
    """Sync memory with the person's other devices: fetch, integrate, push.

    Only changes signed by devices enrolled here (`assistant sync devices add`) come in, each
    checked like a write; a change that fails a check is kept aside (`assistant sync status`)."""
    if ctx.invoked_subcommand is not None:
        return
    ws = get_workspace("sync")
    try:
        session = open_session(ws, "unattended", kind="sync", interactive=sys.stdin.isatty(), transcript=False)
    except SessionError as exc:
        fail(str(exc))
    with session:
        syncer = Syncer(ws.state_dir, memory=session.memory, history=session.history, gate=session.policy_gate,
                        audit=session.policy_gate.audit, scanner=session.scanner,
                        on_changed=session.index.note_changes,
                        files=file_mount(ws, session.files) if ws.config.sync.files else None)
        try:
            report = syncer.run()
        except (SyncError, SyncStateError, GitError) as exc:
            fail(session.scanner.redact(str(exc)))
    red = session.scanner.redact
    if report.resumed:
        click.echo(f"completed the interrupted integration of {_shown(red(str(report.resumed.get('device'))))}")
    problems = False
    for i in report.integrations:
        name = _shown(i.device)
        if i.refused:
            problems = True
            click.echo(f"refused {name}: {_shown(red(i.refused))}", err=True)
            continue
        for what, paths in (("written", i.written), ("merged", i.merged), ("removed", i.removed),
                            ("forgotten", i.forgotten)):
            for p in paths:
                click.echo(f"{what} {_shown(red(p))} (from {name})")
        for p in i.conflicts:
            problems = True
            click.echo(f"conflict {_shown(red(p))}: this device's text stays; {name}'s is kept in history "
                       f"(`assistant memory log {_shown(red(p))}`)", err=True)
        for p, why in i.aside:
            problems = True
            click.echo(f"kept aside {_shown(red(p))} from {name}: {_shown(red(why))}", err=True)
        for p in filter(None, i.retry):
            click.echo(f"{_shown(red(p))} changed while syncing; the next sync takes {name}'s change", err=True)
        if i.warning:
            click.echo(f"warning: {_shown(red(i.warning))}", err=True)
    for f in report.files:
        name = _shown(f.device)
        for what, paths in (("written", f.written), ("removed", f.removed)):
            for p in paths:
                click.echo(f"{what} files/{_shown(red(p))} (from {name})")
        for p, copy in f.conflicts:
            problems = True
            click.echo(f"conflict files/{_shown(red(p))}: both devices changed it; this device's file stays, "
                       f"{name}'s is kept at {_shown(red(copy))} (remove that copy once you have looked)", err=True)
        for p, why in f.aside:
            problems = True
            click.echo(f"kept aside {_shown(red(p))} from {name}: {_shown(red(why))}", err=True)
        for p in f.retry:
            click.echo(f"files/{_shown(red(p))} changed while syncing; the next sync takes {name}'s change", err=True)
        if f.deferred:
            click.echo(f"{len(f.deferred)} more file(s) of files/ from {name} wait for the next sync (one sync takes "
                       f"at most {MAX_SYNC_FILES} files and {MAX_SYNC_BYTES // (1024 * 1024)} MiB from a device)", err=True)
    if report.exported is not None:
        for p, why in report.exported.unsent:
            click.echo(f"not sent: files/{_shown(red(p))}: {_shown(red(why))}", err=True)
    if report.exported is not None and report.exported.commit:
        click.echo(f"sent {report.exported.versions} version(s), {report.exported.notes} note change(s)"
                   + (f", {report.exported.files} file change(s)" if report.exported.files else ""))
    if report.replaced:
        click.echo(f"warning: this device's branch on the remote held commit {report.replaced[:12]}, which this "
                   "device did not sign; it was replaced by this device's own (the remote lets others push there)",
                   err=True)
    click.echo("pushed" if report.pushed else "nothing to push")
    if problems:
        sys.exit(1)


@sync_group.command("init")
@click.argument("remote")
@click.option("--name", default=None, help="This device's name (default: the host name).")
@workspace_option
def init_cmd(remote: str, name: str | None) -> None:
    """Set up sync with REMOTE (a bare repository path, ssh, or https; no credentials in it)."""
    ws = get_workspace()
    try:
        device, key = init_sync(ws.state_dir, remote, name)
    except (SyncError, SyncStateError) as exc:
        fail(str(exc))
    click.echo(f"sync set up: this device is {_shown(device)}")
    click.echo(HOSTED_WARNING.format(remote=_shown(remote)))
    click.echo(f"enrol it on your other devices: assistant sync devices add {_shown(device)} '{key.rsplit(' ', 1)[0]}'")


@sync_group.command("status")
@json_option("An object: name, remote, devices, refused, aside, conflicts, unpushed, interrupted, files.")
@workspace_option
def status_cmd(as_json: bool) -> None:
    """What the last sync left to look at: refused branches, changes kept aside, open conflicts."""
    ws = get_workspace()
    try:
        session = open_session(ws, "watched", kind="cli", interactive=sys.stdin.isatty(), transcript=False)
    except SessionError as exc:
        fail(str(exc))
    with session:
        try:
            info = status(ws.state_dir, session.history, files=ws.config.sync.files)
        except (SyncError, SyncStateError, GitError) as exc:
            fail(str(exc))
        red = session.scanner.redact
    if as_json:
        echo_json(_redacted(info, red))
        return
    click.echo(f"device {_shown(info['name'])}, remote {_shown(info['remote'])}")
    for d in info["devices"]:
        click.echo(f"  enrolled {_shown(d['name'])}: " + (f"integrated up to {d['integrated'][:12]}"
                                                           if d["integrated"] else "nothing integrated yet"))
    for r in info["refused"]:
        click.echo(f"refused {_shown(r['device'])}: {_shown(red(str(r.get('reason'))))}")
    for a in info["aside"]:
        click.echo(_aside_line(a, red))
    for c in info["conflicts"]:
        click.echo(f"conflict {_shown(red(c['path']))}: {_shown(c['device'])}'s version {c['rev']} not merged; "
                   f"resolve with `assistant memory edit` or `assistant memory revert`")
    files = info["files"]
    if files["travel"]:
        click.echo("files/ travels with the notes ([sync] files = true)")
    else:
        click.echo("files/ does not travel: nothing of it is sent, and no device's files/ is written here "
                   "([sync] files = false)")
        for n in files["not_taken"]:
            click.echo(f"  {_shown(n['device'])}'s branch carries {n['files']} file(s) under files/, not taken here")
    for a in files["aside"]:
        click.echo(_aside_line(a, red))
    for c in files["conflicts"]:
        click.echo(f"conflict {_shown(red(str(c.get('path'))))}: both devices changed it; this device's file stays, "
                   f"{_shown(c.get('device'))}'s is kept at {_shown(red(str(c.get('copy'))))} (remove that copy "
                   "once you have looked)")
    if info["unpushed"]:
        click.echo("this device has changes not pushed yet: run `assistant sync`")
    if info["interrupted"]:
        click.echo("an integration was interrupted: the next `assistant sync` completes it")
    if not (info["refused"] or info["aside"] or info["conflicts"] or info["unpushed"] or info["interrupted"]
            or files["aside"] or files["conflicts"]):
        click.echo("nothing to look at")


def _redacted(value: object, red) -> object:
    if isinstance(value, str):
        return red(value)
    if isinstance(value, list):
        return [_redacted(v, red) for v in value]
    if isinstance(value, dict):
        return {k: _redacted(v, red) for k, v in value.items()}
    return value


@sync_group.group("devices", invoke_without_command=False)
@workspace_option
def devices_group() -> None:
    """The devices whose signed changes this device takes."""


@devices_group.command("list")
@json_option('A list of {"name", "key", "this"}, this device first.')
@workspace_option
def devices_list_cmd(as_json: bool) -> None:
    """This device (its name and public key), then the enrolled ones."""
    try:
        rows = device_list(get_workspace().state_dir)
    except (SyncError, SyncStateError) as exc:
        fail(str(exc))
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        click.echo(f"{_shown(r['name'])}  {_shown(r['key'])}" + ("  (this device)" if r["this"] else ""))


@devices_group.command("add")
@click.argument("name")
@click.argument("key")
@workspace_option
def devices_add_cmd(name: str, key: str) -> None:
    """Enrol device NAME with its public key KEY (an `ssh-ed25519 AAAA...` line)."""
    try:
        enrol(get_workspace().state_dir, name, key)
    except (SyncError, SyncStateError) as exc:
        fail(str(exc))
    click.echo(f"enrolled {_shown(name)}: its signed changes come in at the next sync")


@devices_group.command("remove")
@click.argument("name")
@workspace_option
def devices_remove_cmd(name: str) -> None:
    """Stop taking changes from device NAME."""
    try:
        unenrol(get_workspace().state_dir, name)
    except (SyncError, SyncStateError) as exc:
        fail(str(exc))
    click.echo(f"removed {_shown(name)}: its changes no longer come in")


COMMANDS.append(sync_group)
