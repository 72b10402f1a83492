"""`assistant run TASK`: one unattended turn, no TTY needed, for cron / systemd timers.

Guards the unattended contract: the gate runs in mode "unattended" (memory writes ask out of
band and wait, bounded by approvals.timeout or --approval-timeout; nobody reachable means
deny), nothing is ever read from the terminal, and the result is one line on stdout with a
distinct exit code: 0 done, 3 an approval was denied or expired, 1 an error.
"""

from __future__ import annotations

import json
import sys

import click

from ..workspace import WorkspaceError, parse_duration
from .common import EXIT_DENIED, EXIT_ERROR, EXIT_OK, get_workspace, model_spec_or_group, visible, workspace_option


def _one_line(text: str, limit: int = 400) -> str:
    # model-chosen text: controls, bidi and format characters shown as escapes, never raw
    flat = visible(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _progress(name: str, data: dict) -> None:
    """Progress for logs (stderr): tool calls and rulings as they happen."""
    if name == "tool_call":
        args = json.dumps(data.get("args", {}), ensure_ascii=False, sort_keys=True)
        click.echo(f"[tool] {data['tool']} {_one_line(args, 160)}", err=True)
    elif name == "ruling":
        verdict = "allowed" if data.get("allowed") else f"{data.get('verdict', 'deny')}"
        click.echo(f"[gate] {data['kind']} {visible(str(data['target']))}: {verdict} ({_one_line(str(data.get('reason', '')), 200)})",
                   err=True)
    elif name == "tool_result" and not data.get("ok"):
        click.echo(f"[tool] {_one_line(str(data.get('output', '')), 200)}", err=True)
    elif name == "invalid":
        click.echo(f"[model] invalid step: {_one_line(str(data.get('error', '')), 200)}", err=True)


def _waiting(req) -> None:
    """Say on stderr which request this run now waits on, and how to answer it."""
    click.echo(f"[approval] waiting for {req.id}: {req.kind} {visible(str(req.target))} (expires {req.expires_at}); "
               f"answer with `assistant approvals show {req.id}`, then approve or deny", err=True)


def _early_error(message: str) -> int:
    """A run that failed before its turn: the outcome line on stdout (the contract: one line,
    always), and the same text on stderr with the progress log (where cron logs look)."""
    click.echo(f"error: {_one_line(message)}")
    click.echo(f"error: {message}", err=True)
    return EXIT_ERROR


def execute_run(ws, task: str, *, model_spec: str | None = None, approval_timeout: str | None = None,
                label: str = "run") -> int:
    """Run one unattended task; print the one-line outcome; return the exit code."""
    from ..models.base import ModelError
    from ..models.loader import load_model
    from ..session import SessionError, open_session

    if not task or not task.strip():
        return _early_error("the task is empty")
    timeout = None
    if approval_timeout is not None:
        try:
            timeout = parse_duration(approval_timeout, setting="--approval-timeout")
        except WorkspaceError as exc:
            return _early_error(str(exc))

    try:
        session = open_session(ws, "unattended", kind="run", approval_timeout=timeout, on_request=_waiting)
    except SessionError as exc:
        return _early_error(str(exc))
    try:
        try:
            model = load_model(model_spec, ws, progress=sys.stderr)
        except ModelError as exc:
            session.transcript.append("error", message=str(exc))
            return _early_error(str(exc))
        session.transcript.append("session_start", mode="unattended", label=label,
                                model=getattr(model, "name", type(model).__name__), task=task)
        failed: list[str] = []      # tools whose call failed: the reply may still claim success

        def on_event(name: str, data: dict) -> None:
            if name == "tool_result" and not data.get("ok") and data.get("output") != "interrupted":
                failed.append(str(data.get("tool", "?")))
            _progress(name, data)

        agent = session.new_agent(model, on_event=on_event)
        try:
            result = agent.turn(task)
        except KeyboardInterrupt:
            # The gate closes, as denied, every request it filed that is still open (a tool
            # thread may be inside the notify command): nobody can approve what no run acts on.
            session.gate.close_open("the run that asked was interrupted")
            session.transcript.append("session_end", outcome="interrupted")
            click.echo("error: interrupted; nothing further was done")
            return EXIT_ERROR
        rel = session.transcript.path.relative_to(ws.root)
        session.transcript.append("session_end", outcome=result.outcome, steps=result.steps,
                                tool_calls=result.tool_calls, denials=len(result.denials))
        redact = session.scanner.redact
        if failed:
            click.echo(f"warning: {len(failed)} tool call{'s' if len(failed) > 1 else ''} failed in this run "
                       f"({', '.join(sorted(set(failed)))}); the reply may say otherwise: see the transcript",
                       err=True)
        click.echo(f"transcript: {rel}", err=True)
        if result.outcome == "error":
            click.echo(f"error: {_one_line(redact(result.message))}")
            return EXIT_ERROR
        if result.denials:
            d = result.denials[0]
            more = f" (+{len(result.denials) - 1} more)" if len(result.denials) > 1 else ""
            click.echo(f"denied: {d.tool} {d.kind} {visible(str(d.target))}: {_one_line(redact(d.reason), 200)}{more}")
            return EXIT_DENIED
        if result.outcome == "stopped":
            click.echo(f"error: {_one_line(redact(result.message))}")
            return EXIT_ERROR
        click.echo(f"done: {_one_line(redact(result.reply or ''), 2000)}")
        return EXIT_OK
    finally:
        session.close()


def sigterm_interrupts() -> None:
    """SIGTERM (systemd stopping the unit, `timeout`, kill) ends the run like Ctrl-C: its pending
    requests are closed and the transcript says so, instead of dying mid-wait."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:      # not the main thread (embedded use): leave the default
        pass


@click.command("run")
@workspace_option
@click.argument("task", nargs=-1, required=True)
@click.option("--model", "model_spec", default=None, metavar="SPEC",
              help="Model instead of config: script:FILE.json, a .gguf file, or llama:PATH.")
@click.option("--approval-timeout", default=None, metavar="DURATION",
              help="How long to wait for an approval (e.g. 30s); default approvals.timeout.")
def run_command(task: tuple[str, ...], model_spec: str | None, approval_timeout: str | None) -> None:
    """Run TASK once, unattended: memory writes wait for `assistant approvals approve`.

    Prints one line: `done: ...` (exit 0), `denied: ...` (exit 3, an approval was denied,
    expired or nobody could be asked), or `error: ...` (exit 1).
    """
    model_spec = model_spec_or_group(model_spec)
    ws = get_workspace()
    sigterm_interrupts()
    sys.exit(execute_run(ws, " ".join(task), model_spec=model_spec, approval_timeout=approval_timeout))


COMMANDS = [run_command]
