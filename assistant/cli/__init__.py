"""The `assistant` command: one module per command group, registered here."""

from __future__ import annotations

import click

from assistant.cli.common import group_model_option, workspace_option


class _LazyGroup(click.Group):
    """The command group that imports a command's module only when that command runs (or when
    --help or shell completion lists them all): `assistant memory log` does not pay for
    importing chat, vault, approvals, doctor... (tens of milliseconds at every start)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(_MODULES))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in _MODULES:
            _load(cmd_name)
            command = super().get_command(ctx, cmd_name)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             invoke_without_command=True)
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


# command name -> the modules that define it (memory_history and memory_search add their
# subcommands to `assistant memory`). tests/cli/test_cli_lazy_commands.py checks that this
# table names every command each module's COMMANDS holds.
_MODULES: dict[str, tuple[str, ...]] = {
    "init": ("init",), "memory": ("memory", "memory_history"), "approvals": ("approvals",),
    "grants": ("grants",), "vault": ("vault",), "chat": ("chat",), "run": ("run",),
    "runs": ("runs",), "schedule": ("schedule",), "doctor": ("doctor",), "audit": ("audit",),
    "model": ("model",), "mcp": ("mcp",), "sync": ("sync",),
}


def _load(name: str) -> None:
    import importlib

    for module_name in _MODULES[name]:
        module = importlib.import_module(f".{module_name}", __name__)
        for command in module.COMMANDS:
            if command.name not in main.commands:
                main.add_command(command)
