"""`assistant mcp serve`: this workspace's memory for MCP clients, over stdio.

Guards the one rule a stdio server lives by: its stdout is the protocol. The real stdout is
claimed before anything else runs (every other write to it goes to stderr), the vault is
unlocked without a terminal (the env, the key file or the remembered keyring unlock; never a
prompt, never stdin, which is the protocol), and a server that cannot unlock refuses to start,
with the fix, on stderr.
"""

from __future__ import annotations

import functools
import logging
import os
import shlex
import signal
import sys
from typing import TYPE_CHECKING, Callable

import click

from assistant.mcp.calls import CallRegistry
from assistant.notes.watch import MemoryWatcher
from assistant.session import SessionError, open_session
from assistant.cli.common import fail, get_workspace, workspace_group

if TYPE_CHECKING:
    from assistant.secrets.scanner import Scanner

MCP_UNLOCK_HELP = (
    "An MCP server never asks for the vault passphrase (its stdin is the protocol), and it does not "
    "belong in the client's config file: run `assistant vault remember` once at a terminal and set "
    "[vault] unlock = \"keyring\" in config.toml (a desktop session), or set [vault] key_file to a "
    "file only you can read (chmod 600)."
)


def client_command(root: object) -> str:
    """How an MCP client starts this server for the workspace at `root` (the README's line)."""
    return f'claude mcp add memory -- "$(which assistant)" -w {shlex.quote(str(root))} mcp serve'


def started_by_hand(root: object) -> str:
    """What `mcp serve` says when its stdin is a terminal: a person typed the command."""
    return (f"assistant mcp serve is meant to be started by an MCP client, which talks to it in JSON-RPC "
            f"on stdin; typing here does nothing useful. To use your notes from Claude Code: "
            f"{client_command(root)}  (Claude Desktop and other clients: the mcpServers block in "
            f"docs/usage.md). Press Ctrl-D or Ctrl-C to stop.")


def not_json_rpc(root: object) -> str:
    """The one stderr line for input that is not JSON-RPC (each such line was answered with an error)."""
    return (f"assistant mcp serve: stdin is not speaking MCP (a line that is not a JSON-RPC message was "
            f"answered with an error); this server is started by an MCP client, e.g. {client_command(root)}")


class OneLine(logging.Formatter):
    """The SDK's log records (stderr, which an MCP client keeps in its log file) as one line
    each: the first line of the message only, redacted and then cut (a cut secret is no longer
    recognised), without a traceback. A validation error's later lines repeat the client's
    input, which may carry anything, a secret included."""

    MAX = 300
    REDACT_MAX = 64 * 1024    # a longer first line is cut to this before redacting, through redact_prefix

    def __init__(self) -> None:
        super().__init__()
        self.redact: Callable[[str], str] = _withheld
        self.redact_prefix: Callable[[str], str] = _withheld

    def use(self, scanner: "Scanner") -> None:
        """Redact with the session's scanner from now on."""
        self.redact_prefix = scanner.redact_prefix
        self.redact = scanner.redact

    def format(self, record: logging.LogRecord) -> str:
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is not worth a traceback
            text = str(record.msg)
        first = text.splitlines()[0] if text else ""
        if len(first) > self.REDACT_MAX:
            first = self.redact_prefix(first[: self.REDACT_MAX])
        else:
            first = self.redact(first)
        if len(first) > self.MAX:
            first = first[: self.MAX] + "…"
        first = "".join(c if c.isprintable() else "?" for c in first)
        return f"assistant mcp serve: {record.name}: {record.levelname.lower()}: {first}"


def _withheld(text: str) -> str:
    return "[withheld until the vault is unlocked]" if text else text


mcp_group = workspace_group("mcp", "Serve your notes to MCP clients (Claude Desktop, Claude Code, Cursor, your own agents).")


@mcp_group.command("serve")
def serve_cmd() -> None:
    """Speak MCP over stdin/stdout (start it from an MCP client's config, not by hand).

    Tools: memory_read, memory_list, memory_search, memory_write, memory_edit and memory_remove; resources:
    memory://catalog and memory://notes/PATH. Reads are redacted. A write or removal goes
    through the same confined, leak-scanned, gated writer as the model's: by default ([mcp]
    mode = "unattended") it is put to you out of band (`assistant approvals`) and the client's
    call waits for your answer or [approvals] timeout. The vault is unlocked from the keyring
    ([vault] unlock = "keyring"), [vault] key_file or ASSISTANT_VAULT_PASSPHRASE; never asked for.
    """
    # lazy: the MCP SDK (anyio, pydantic) costs ~0.55 s of CPU to import; `assistant --help` loads this module
    from assistant.mcp.transport import claim_stdout

    protocol = claim_stdout()   # first: from here on only JSON-RPC reaches the real stdout
    log_format = OneLine()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(log_format)
    logging.basicConfig(handlers=[handler], level=logging.WARNING, force=True)
    from assistant.mcp.server import MemoryServer   # lazy: it imports the MCP SDK too (see above)

    ws = get_workspace("mcp")
    calls = CallRegistry()
    try:
        session = open_session(ws, ws.config.mcp.mode, kind="mcp", interactive=False, transcript=True,
                               turns=False, on_request=calls.on_request)
    except SessionError as exc:
        message = str(exc)
        if os.path.lexists(ws.vault_path) and ("vault" in message or "passphrase" in message):
            message += f"\n{MCP_UNLOCK_HELP}"
        fail(message)
    log_format.use(session.scanner)
    try:
        watcher: MemoryWatcher | None = MemoryWatcher(ws.memory_dir).start()
    except Exception as exc:  # noqa: BLE001 - inotify limits, an unwatchable folder: search still works
        watcher = None
        click.echo(f"assistant mcp serve: memory/ cannot be watched ({type(exc).__name__}); each "
                   "memory_search compares every note instead", err=True)
    server = MemoryServer(session, calls, watcher=watcher)
    server.start_intake()
    click.echo(f"assistant mcp serve: workspace {ws.root}, mode {session.mode}, approval timeout "
               f"{server.timeout:g}s, session {session.id}; speaking MCP on stdin/stdout", err=True)
    blocked = session.refusals.blocked()
    if blocked is not None:     # reads are served; every write and removal is refused until the ack
        click.echo(f"assistant mcp serve: writes and removals are refused: {blocked.reason()}", err=True)

    def stop(signum: int, frame: object) -> None:
        server.stopping = True
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if os.isatty(0):
        click.echo(started_by_hand(ws.root), err=True)
    told = []

    def bad_line() -> None:      # once: a client sending garbage must not flood its own log
        if not told:
            told.append(True)
            click.echo(not_json_rpc(ws.root), err=True)

    outcome, reason = "done", "the MCP client disconnected"
    try:
        import anyio

        anyio.run(functools.partial(server.serve, on_bad_line=bad_line), 0, protocol)
    except (KeyboardInterrupt, SystemExit):
        server.stopping = True
        outcome, reason = "interrupted", "the MCP server was stopped"
    except Exception as exc:  # noqa: BLE001 - one line on stderr, never a traceback
        server.stopping = True
        outcome, reason = "error", f"the MCP server failed ({type(exc).__name__})"
        click.echo(f"error: {reason}", err=True)
    finally:
        if watcher is not None:
            watcher.stop()
        server.finish(outcome, reason)
    # Everything is recorded and closed. Leave without joining worker threads: one may still be
    # blocked reading stdin from a client that has not closed it (a stop signal).
    sys.stderr.flush()
    os._exit(0 if outcome == "done" else 1)


COMMANDS = [mcp_group]
