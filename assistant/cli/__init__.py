"""The `assistant` command: one module per command group, registered here."""

from __future__ import annotations

import click

from .common import group_model_option, workspace_option


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@workspace_option
@group_model_option
@click.version_option(package_name="assistant")
@click.pass_context
def main(ctx: click.Context) -> None:
    """A personal assistant on a local model, with memory only it can write, and only when allowed.

    Every command works on one workspace folder, chosen by --workspace/-w DIR, else
    $ASSISTANT_WORKSPACE, else ~/.local/share/assistant/workspace.

    Shell completion: eval "$(_ASSISTANT_COMPLETE=bash_source assistant)" in ~/.bashrc
    (zsh_source for zsh, fish_source for fish).
    """
    # `assistant` alone is a request for help, not a usage error: print it and exit 0.
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(0)


def _register() -> None:
    from . import (approvals, audit, chat, doctor, grants, init, mcp, memory, memory_history, model, run, runs,
                   schedule, vault)

    for module in (init, memory, memory_history, approvals, grants, vault, chat, run, runs, schedule, doctor,
                   audit, model, mcp):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
