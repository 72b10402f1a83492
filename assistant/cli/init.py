"""`assistant init DIR`: create a workspace from the shipped example, never over an existing one."""

from __future__ import annotations

import click

from ..workspace import WorkspaceError, init_workspace
from .common import fail, workspace_path


@click.command("init")
@click.argument("directory", required=False, metavar="[DIR]")
def init_command(directory: str | None) -> None:
    """Create a new workspace in DIR (default: the selected workspace) from the example.

    Refuses a folder that exists and is not empty. Private parts (memory/, files/, state/,
    config.toml, grants.json) are made readable by you only.
    """
    target = directory or str(workspace_path())
    try:
        made = init_workspace(target)
    except (WorkspaceError, OSError) as exc:
        fail(str(exc))
    click.echo(f"created workspace {target}:")
    for rel in made:
        click.echo(f"  {rel}")
    click.echo("next: `assistant vault init` to keep secrets out of memory, then `assistant chat`.")


COMMANDS = [init_command]
