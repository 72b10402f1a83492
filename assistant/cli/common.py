"""Shared CLI plumbing: workspace selection on every command, uniform refusals and exit codes.

Guards the user-facing contract that every refusal is a specific message on stderr and a
non-zero exit, never a traceback.
"""

from __future__ import annotations

import functools
import json
import sys
from typing import TYPE_CHECKING, Callable, NoReturn, TypeVar

import click

from policy.grants import GrantsError

from assistant.display.colour import status, wanted
from assistant.display.terminal import escape, one_line
from assistant.workspace.config import ConfigError
from assistant.secrets.scanner import Scanner
from assistant.workspace.layout import (
    ENV_WORKSPACE, Workspace, WorkspaceError, open_workspace, select_workspace,
)

if TYPE_CHECKING:
    from assistant.session import AssistantSession

F = TypeVar("F", bound=Callable[..., object])

# Exit codes shared by all commands.
EXIT_OK = 0
EXIT_ERROR = 1          # a refusal or failure, with a message
EXIT_USAGE = 2          # click's own usage errors
EXIT_DENIED = 3         # an approval was denied or expired (assistant run)
EXIT_FAILED = 4         # a tool call failed, a refused secret included (assistant run)

_META_KEY = "assistant.workspace.layout"


def _remember_workspace(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None and not value.strip():
        # an unset variable in a script (-w "$WS") must not quietly mean the default workspace
        raise click.BadParameter("is empty: name the workspace folder", ctx=ctx, param=param)
    if value:
        ctx.meta[_META_KEY] = value


def workspace_option(f: F) -> F:
    """`--workspace/-w DIR` on a command; the innermost one given wins."""
    return click.option(
        "--workspace",
        "-w",
        metavar="DIR",
        expose_value=False,
        is_eager=True,
        callback=_remember_workspace,
        help=f"Workspace folder (default: ${ENV_WORKSPACE}, else ~/.local/share/assistant/workspace).",
    )(f)


class WorkspaceGroup(click.Group):
    """A command group whose every command takes --workspace/-w, so none can forget it."""

    def command(self, *args: object, **kwargs: object) -> Callable[[F], click.Command]:  # type: ignore[override]
        make = super().command(*args, **kwargs)  # type: ignore[arg-type]
        return lambda f: make(workspace_option(f))


def workspace_group(name: str, help: str) -> WorkspaceGroup:
    """`assistant NAME ...`: a group of commands on the workspace, which takes -w itself too."""
    def holds_commands_only() -> None:
        pass
    return click.group(name, cls=WorkspaceGroup, help=help)(workspace_option(holds_commands_only))


def json_option(help: str = "Machine-readable output.") -> Callable[[F], F]:
    """`--json` on a command, passed as `as_json`; `help` says what the JSON holds."""
    return click.option("--json", "as_json", is_flag=True, help=help)


_MODEL_META_KEY = "assistant.model"


def _remember_model(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None and not value.strip():
        raise click.BadParameter("is empty: name a model (script:FILE.json, a .gguf, llama:PATH)",
                                 ctx=ctx, param=param)
    if value:
        ctx.meta[_MODEL_META_KEY] = value


def group_model_option(f: F) -> F:
    """`assistant --model SPEC <command>`: the same as the command's own --model (which wins)."""
    return click.option(
        "--model", metavar="SPEC", expose_value=False, callback=_remember_model,
        help="Model for chat/run/schedule run/doctor instead of config (script:FILE.json, a .gguf, "
             "llama:PATH); the command's own --model wins.",
    )(f)


def model_spec_or_group(given: str | None) -> str | None:
    """The command's --model, else the one given before the command name, else None (config)."""
    if given:
        return given
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_MODEL_META_KEY) if ctx is not None else None


def workspace_path(ctx: click.Context | None = None):
    ctx = ctx or click.get_current_context()
    return select_workspace(ctx.meta.get(_META_KEY))


def get_workspace(*needs: str, ctx: click.Context | None = None) -> Workspace:
    """Open the selected workspace or exit with a clear message. `needs`: the config sections
    the command reads; a problem in any of them (every problem, listed) stops it here, while a
    problem in another section does not (`approvals list` needs none)."""
    try:
        ws = open_workspace(workspace_path(ctx))
        ws.config.require(*needs)
    except (WorkspaceError, ConfigError) as exc:
        fail(str(exc))
    return ws


def is_tty(stream: object) -> bool:
    """Is this stream (sys.stdin, sys.stdout, sys.stderr as they are now) a terminal? False for
    a replaced, closed or missing one."""
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


@functools.cache
def _shapes() -> Scanner:
    return Scanner({})     # built on the first error only: a door that prints none pays nothing


def redact_shapes(text: str) -> str:
    """`text` with the credential shapes the scanner knows without a vault redacted: what a door
    prints when it has no session's scanner (a config error quotes the value it refuses)."""
    return _shapes().redact(text)


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    """Print `error: message` to stderr and exit non-zero (credential shapes redacted: a door
    that has a session redacts with its scanner first)."""
    click.echo(f"{status('error', on=wanted(sys.stderr))}: {redact_shapes(message)}", err=True)
    sys.exit(code)


def warn_unusable_grants(session: "AssistantSession") -> None:
    """At a run's or chat's start: a grants.json that cannot be trusted named in one warning line
    on stderr (the gate treats every request as if no grant existed, so "always" answers stop
    counting without this line; `assistant doctor` names it too)."""
    grants = getattr(session.policy_gate, "grants", None)
    if grants is None:
        return
    try:
        grants.load(fresh=True)
    except GrantsError as exc:
        click.echo(f"warning: {one_line(str(exc), 300)} (every request is treated as if no grant "
                   "existed; `assistant doctor` says more)", err=True)


def echo_json(value: object) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=True, default=str))


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """text with every control, format (bidi, zero-width) or separator character shown as an
    escape (assistant.display.terminal.escape): the proposed content comes from the model, and an ANSI
    sequence or a carriage return in it could hide a line from the person approving it."""
    return escape(text, newlines=keep_newlines)


def resolve_id(given: str, ids: list[str], what: str, *, listing: str) -> str:
    """The one id in `ids` that `given` names: itself, or any unique prefix of it (like git's
    short hashes). None or several: fail naming them, so an answer never reaches the wrong item.
    `listing` is the command that lists the ids, for the message."""
    if given in ids:
        return given
    matches = [i for i in ids if given and i.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        fail(f"unknown {what} id '{visible(given)}' (see `{listing}`)")
    shown = ", ".join(matches[:5]) + (f" and {len(matches) - 5} more" if len(matches) > 5 else "")
    fail(f"'{visible(given)}' is ambiguous: {len(matches)} {what} ids start with it ({shown}); give more characters")
