"""The `assistant` command: one module per command group, registered here."""

from __future__ import annotations

import click

from .common import group_model_option, workspace_option


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@workspace_option
@group_model_option
@click.version_option(package_name="assistant")
def main() -> None:
    """A personal assistant on a local model, with memory only it can write, and only when allowed.

    Every command works on one workspace folder, chosen by --workspace/-w DIR, else
    $ASSISTANT_WORKSPACE, else ~/.local/share/assistant/workspace.
    """


def _register() -> None:
    from . import approvals, chat, doctor, grants, init, memory, model, run, schedule, vault

    for module in (init, memory, approvals, grants, vault, chat, run, schedule, doctor, model):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
