"""`assistant run TASK`: one unattended turn, no TTY needed, for cron / systemd timers.

Guards the unattended contract: the gate runs in mode "unattended" (memory writes ask out of
band and wait, bounded by approvals.timeout or --approval-timeout; nobody reachable means
deny), nothing is ever read from the terminal, and the result is exactly one line on stdout
with a distinct exit code: `done:` 0, `error:` 1 (2 for a usage error), `denied:` 3 (an
approval was denied or expired), `failed:` 4 (a tool call failed and was not made good by a
later call; a call refused for carrying a vault value always counts, ends the turn, and the
notify command is told). Details (progress, the reply of a failed run) go to stderr only,
so nothing prints twice on a terminal.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Callable

import click

from policy.duration import parse_duration
from policy.notify import run_notify

from assistant.agent.events import (
    ClaimUnbacked, Event, Notice, Recalled, Replied, RulingMade, StepRefused, StepTaken, Stopped, Token, ToolCalled,
    ToolFinished, TurnFailed, UserMessage, VaultValueRefused, WriteShown,
)
from assistant.agent.outcome import unattended_outcome
from assistant.agent.interrupt import leave
from assistant.display.colour import status_line, wanted
from assistant.display.localtime import local_time
from assistant.display.terminal import one_line
from assistant.models.base import ModelError
from assistant.records.clock import session_start_times
from assistant.session import SessionError, open_session
from assistant.cli.common import (
    EXIT_ERROR, EXIT_FAILED, EXIT_OK, EXIT_USAGE, get_workspace, is_tty, model_spec_or_group,
    redact_shapes, visible, warn_unusable_grants, workspace_option,
)
from assistant.cli.model_load import LoadInterrupted, load_session_model
from assistant.cli.reflection import run_reflection


def _one_line(text: str, limit: int = 400) -> str:
    # model-chosen text: controls, bidi and format characters shown as escapes, never raw;
    # a cut states the full length
    return one_line(text, limit)


def _progress(event: Event) -> None:
    """Progress for logs (stderr): tool calls and rulings as they happen."""
    match event:
        case ToolCalled(tool=tool, args=args):
            shown = json.dumps(args, ensure_ascii=False, sort_keys=True)
            click.echo(f"[tool] {tool} {_one_line(shown, 160)}", err=True)
        case RulingMade(kind=kind, target=target, allowed=allowed, verdict=verdict, reason=reason):
            verdict = "allowed" if allowed else verdict
            click.echo(f"[gate] {kind} {visible(str(target))}: {verdict} ({_one_line(str(reason), 200)})", err=True)
        case ToolFinished(ok=False, output=output):
            click.echo(f"[tool] {_one_line(str(output), 200)}", err=True)
        case StepRefused(error=error):
            click.echo(f"[model] invalid step: {_one_line(str(error or ''), 200)}", err=True)
        case ClaimUnbacked(message=message):
            click.echo(f"[memory] {_one_line(message, 200)}", err=True)
        case (UserMessage() | Notice() | Recalled() | Token() | StepTaken() | Replied() | Stopped() | TurnFailed()
              | ToolFinished() | WriteShown() | VaultValueRefused()):
            pass    # the outcome line and the transcript say these
        case _:
            raise TypeError(f"the run's progress has no case for {type(event).__name__}")


def _waiting(req) -> None:
    """Say on stderr which request this run now waits on, and how to answer it."""
    click.echo(f"[approval] waiting for {req.id}: {req.kind} {visible(str(req.target))} (expires {local_time(req.expires_at)}); "
               f"answer with `assistant approvals show {req.id}`, then approve or deny", err=True)


def _one_screen() -> bool:
    """Are stdout and stderr the same terminal (a person reads both on one screen)?"""
    try:
        out, err = os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):
        return False
    return is_tty(sys.stdout) and is_tty(sys.stderr) and (out.st_rdev, out.st_ino) == (err.st_rdev, err.st_ino)


def _early_error(message: str, code: int = EXIT_ERROR, *, redact: Callable[[str], str] = redact_shapes) -> int:
    """A run that failed before its turn: the outcome line on stdout (the contract: one line,
    always); the full text on stderr only when the line had to cut or flatten it. On a terminal
    that shows both streams, the error is printed once, in full (a list stays a list). Redacted:
    by the session's scanner once there is a session, else for credential shapes."""
    message = redact(message)
    line = _one_line(message)
    if line != message and _one_screen():
        first, _, rest = message.partition("\n")
        click.echo(status_line(f"error: {_one_line(first)}", on=wanted(sys.stdout)))
        if rest:
            click.echo(visible(rest, keep_newlines=True))
        return code
    click.echo(status_line(f"error: {line}", on=wanted(sys.stdout)))
    if line != message:
        click.echo(f"error: {message}", err=True)
    return code


def _tell_notify(session, message: str) -> None:
    """The person's notify command (approvals.notify), run the way an approval request runs
    it: no shell, no vault variables in its environment, bounded; a failure is reported."""
    gate = session.policy_gate
    argv = list(gate.notify or [])
    if not argv:
        return
    problem = run_notify(argv, message, timeout=gate.notify_timeout)
    if problem:
        click.echo(f"warning: {problem}", err=True)


def execute_run(ws, task: str, *, model_spec: str | None = None, approval_timeout: str | None = None,
                label: str = "run") -> int:
    """Run one unattended task; print the one-line outcome; return the exit code."""
    if not task or not task.strip():
        return _early_error("the task is empty", EXIT_USAGE)
    timeout = None
    if approval_timeout is not None:
        try:
            timeout = parse_duration(approval_timeout, setting="--approval-timeout")
        except ValueError as exc:
            return _early_error(str(exc), EXIT_USAGE)

    try:
        session = open_session(ws, "unattended", kind="run", approval_timeout=timeout, on_request=_waiting)
    except SessionError as exc:
        return _early_error(str(exc))
    warn_unusable_grants(session)
    try:
        try:
            loading = time.monotonic()
            model = load_session_model(session, model_spec, interrupted_exit_code=EXIT_ERROR)
            load_s = time.monotonic() - loading
        except ModelError as exc:
            return _early_error(str(exc), redact=session.scanner.redact)
        except LoadInterrupted as stop:   # Ctrl-C or SIGTERM while llama.cpp loads: stop at once
            click.echo("error: interrupted while loading the model; nothing was done", file=stop.out)
            # the abandoned load may still be inside llama.cpp when the interpreter shuts down:
            # the outcome line is out before anything there can cut the process short
            stop.out.flush()
            return EXIT_ERROR
        session.transcript.append("session_start", mode="unattended", label=label, model=model.name, task=task,
                                  **session_start_times(load_s))
        agent = session.new_agent(model, on_event=_progress)
        try:
            result = agent.turn(task)
        except KeyboardInterrupt:
            # The gate closes, as denied, every request it filed that is still open (a tool
            # thread may be inside the notify command): nobody can approve what no run acts on.
            session.policy_gate.close_open("the run that asked was interrupted")
            session.transcript.append("session_end", outcome="interrupted", exit_code=EXIT_ERROR)
            click.echo("error: interrupted; nothing further was done")
            return EXIT_ERROR
        rel = session.transcript.path.relative_to(ws.root)
        redact = session.scanner.redact
        outcome = unattended_outcome(result, redact)     # the one line and its exit code
        code, line, made_good = outcome.code, outcome.line, outcome.made_good
        session.transcript.append("session_end", outcome=result.outcome, steps=result.steps,
                                  tool_calls=result.tool_calls, denials=len(result.denials),
                                  failed_calls=len(outcome.failed), exit_code=code)
        if code == EXIT_FAILED and result.reply:
            click.echo(f"reply (after the failed call): {_one_line(redact(result.reply), 2000)}", err=True)
        if made_good and code == EXIT_OK:
            click.echo(f"note: {made_good} tool call{'s' if made_good > 1 else ''} failed and "
                       "a later call did the same successfully: see the transcript", err=True)
        click.echo(f"transcript: {rel}", err=True)
        if result.secret_refused:
            _tell_notify(session, f"assistant: {label} {session.id} stopped: a tool call carried a value "
                                  f"from your vault and was refused (see {rel})")
        click.echo(status_line(line, on=wanted(sys.stdout)))     # the outcome word coloured on a terminal
        if code == EXIT_OK and session.ws.config.memory.reflect == "always":
            # after the outcome is settled: proposals become approval requests; the code stays
            sys.stdout.flush()
            try:
                run_reflection(agent)
            except KeyboardInterrupt:
                session.policy_gate.close_open("the run's reflection was interrupted")
                session.transcript.append("reflection_skipped", reason="interrupted")
                click.echo("[reflection] interrupted: nothing more was written", err=True)
        return code
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

    \b
    Prints exactly one line on stdout, and exits with its code:
      done: REPLY          0  the task finished
      error: WHY           1  the run could not finish (2: a usage error)
      denied: CALL: WHY    3  an approval was denied or expired, or nobody could be asked
      failed: CALL: WHY    4  a tool call failed (a conflict, a refusal, a tool error) and
                              no later call made it good; a call carrying a vault value is
                              refused, ends the run here, and the notify command is told
    Progress, the reply of a failed run and the transcript's path go to stderr.
    """
    model_spec = model_spec_or_group(model_spec)
    ws = get_workspace()
    sigterm_interrupts()

    leave(execute_run(ws, " ".join(task), model_spec=model_spec, approval_timeout=approval_timeout))


COMMANDS = [run_command]
