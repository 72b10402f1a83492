"""`assistant init DIR [--example]`: create a clean workspace (or a copy of the shipped example),
never over an existing one."""

from __future__ import annotations

import click

import shlex
from pathlib import Path

from assistant.workspace.layout import WorkspaceError, init_workspace, select_workspace
from assistant.cli.common import fail, workspace_option, workspace_path


@click.command("init")
@workspace_option
@click.argument("directory", required=False, metavar="[DIR]")
@click.option("--example", is_flag=True,
              help="Copy the shipped example instead: a fictional person's notes (Sam, Lina, Marek) "
                   "and files, to try the assistant on.")
def init_command(directory: str | None, example: bool) -> None:
    """Create a new workspace in DIR (default: the selected workspace).

    A clean workspace has config.toml, a PERSONA.md template to make your own, and memory/ with
    one index note explaining itself. --example copies the shipped example instead.
    Refuses a folder that exists and is not empty. Private parts (memory/, files/, state/,
    config.toml, grants.json) are made readable by you only.
    """
    if directory is not None and not directory.strip():
        fail("DIR is empty: name the folder to create (or leave it out for the selected workspace)")
    selected = workspace_path()
    chosen = click.get_current_context().meta.get("assistant.workspace.layout")
    if directory and chosen and Path(directory).expanduser().absolute() != selected:
        fail(f"two different workspaces named: DIR {directory} and --workspace/-w {chosen}; give one")
    target = str(Path(directory).expanduser().absolute()) if directory else str(selected)
    try:
        made = init_workspace(target, example=example)
    except WorkspaceError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot create the workspace {target}: {exc.strerror or exc}")
    click.echo(f"created workspace {target}:")
    for rel in made:
        click.echo(f"  {rel}")
    # A workspace other than the one commands find by default must be named on each command.
    here = Path(target).expanduser().absolute()
    prefix = "assistant" if here == select_workspace(None) else f"assistant -w {shlex.quote(str(here))}"
    click.echo(f"next: `{prefix} vault init` to keep secrets out of memory, then `{prefix} chat`.")


COMMANDS = [init_command]
