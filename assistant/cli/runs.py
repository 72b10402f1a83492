"""`assistant runs`: past chats, runs and scheduled runs, read back from their transcripts.

Guards what a person sees of unattended work: every text comes from a transcript (already
redacted when written) and is redacted again with today's vault (a secret added since is hidden
too) and escaped for the terminal, so an old reply can neither show a value nor repaint the screen.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta, timezone

import click

from assistant.display.colour import status, wanted
from assistant.display.localtime import local_time
from assistant.display.screen_lines import ScreenLines, terminal_columns
from assistant.display.terminal import invisible_line
from assistant.records.runs import list_runs, read_events, started_after, summarise, transcript_ids
from assistant.records.transcript import redact_value
from assistant.session import SessionError, open_session
from policy.duration import parse_duration
from assistant.cli.common import (
    echo_json, fail, get_workspace, is_tty, json_option, resolve_id, visible, workspace_option,
    WorkspaceGroup,
)


def _outcome(outcome: str, width: int, on: bool) -> str:
    """An outcome word padded to `width`, in its colour on a terminal (done green, the rest not)."""
    word = visible(str(outcome))
    padded = f"{word:<{width}}"
    if not on:
        return padded
    return status(word, on=True) + padded[len(word):]


def _scanner():
    """The session's scanner (vault values and credential shapes). The session is closed at
    once: a scanner holds no file, and listing runs needs nothing else of it."""
    try:
        with open_session(get_workspace(), "watched", kind="cli", interactive=True, transcript=False) as session:
            return session.scanner
    except SessionError as exc:
        fail(str(exc))


def _one_line(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@click.group("runs", cls=WorkspaceGroup, invoke_without_command=True)
@workspace_option
@json_option(
    "Machine-readable: a list, newest first, of {id, start, kind, schedule, task, outcome, "
    "exit_code, tool_calls, denials}.")
@click.option("--failed", is_flag=True, help="Only runs that did not end done (denied, failed, error, ...).")
@click.option("--since", metavar="DURATION", default=None, help="Only runs started within DURATION (e.g. 12h, 7d).")
@click.pass_context
def runs_group(ctx: click.Context, as_json: bool, failed: bool, since: str | None) -> None:
    """Past chats, runs and scheduled runs, newest first, one line each.

    `assistant runs show ID` shows one of them in full (ID: any unique prefix).
    """
    if ctx.invoked_subcommand is not None:
        return
    ws = get_workspace()
    cutoff = None
    if since is not None:
        try:
            cutoff = datetime.now(timezone.utc) - timedelta(seconds=parse_duration(since, setting="--since"))
        except ValueError as exc:
            fail(f"{exc} (e.g. --since 12h or --since 7d)")
    runs = list_runs(ws.transcripts_dir)
    if failed:
        runs = [r for r in runs if r.outcome != "done"]
    if cutoff is not None:
        runs = [r for r in runs if started_after(r, cutoff)]
    scanner = _scanner() if runs else None
    if as_json:
        echo_json([{**r.to_json(), "task": scanner.redact(r.task) if r.task and scanner else r.task}
                   for r in runs])
        return
    if not runs:
        click.echo("no runs" + (" matching" if failed or since else " yet"), err=True)
        return
    on = wanted(sys.stdout)
    # on a terminal, a line wider than the screen (a long task) is broken at a word boundary
    # and goes on after the mark, as in runs show
    screen = ScreenLines(CONTINUED, lambda: terminal_columns(sys.stdout.fileno())) if is_tty(sys.stdout) else None
    for r in runs:
        what = r.kind if r.schedule is None else f"schedule {r.schedule}"
        code = "-" if r.exit_code is None else str(r.exit_code)
        task = visible(_one_line(scanner.redact(r.task or "")))
        extra = []
        if r.tool_calls:
            extra.append(f"{r.tool_calls} tool call{'s' if r.tool_calls != 1 else ''}")
        if r.denials:
            extra.append(f"{r.denials} denied")
        if r.failed_calls:
            extra.append(f"failed: {', '.join(sorted(set(r.failed_calls)))}")
        line = (f"{visible(r.id)}  {local_time(r.start)}  {visible(what):<12} {_outcome(r.outcome, 11, on)} "
                f"exit {code:<2} {task}" + (f"  ({'; '.join(extra)})" if extra else "") + "\n")
        click.echo(screen.feed(line) if screen is not None else line, nl=False)


def _render(event: dict, redact) -> list[str]:
    """One transcript event as lines for a person; tool calls and rulings marked."""
    name = event.get("event")
    text = lambda key: visible(redact(str(event.get(key, ""))), keep_newlines=True)  # noqa: E731
    if name == "session_start":
        bits = [f"{k}={visible(redact(str(event[k])))}" for k in ("mode", "label", "model") if event.get(k)]
        return [f"start  {' '.join(bits)}"] + ([f"task   {text('task')}"] if event.get("task") else [])
    if name == "user":
        return [f"> you: {text('text')}"]
    if name == "reply":
        return [f"< assistant: {text('text')}"]
    if name == "tool_call":
        args = json.dumps(event.get("args", {}), ensure_ascii=False, sort_keys=True)
        return [f"  [tool]  {visible(str(event.get('tool', '?')))} {visible(redact(args), keep_newlines=True)}"]
    if name == "ruling":
        verdict = "allowed" if event.get("allowed") else str(event.get("verdict", "deny"))
        return [f"  [gate]  {visible(str(event.get('kind', '?')))} {visible(redact(str(event.get('target', ''))))}: "
                f"{verdict} ({text('reason')})"]
    if name == "tool_result":
        status = "ok" if event.get("ok") else "FAILED"
        return [f"  [{status}] {text('output')}"]
    if name == "recall":
        paths = ", ".join(visible(redact(str(n.get("path", "")))) for n in event.get("notes", []) if isinstance(n, dict))
        return [f"  [recall] {paths or '(nothing)'}"]
    if name in ("error", "stopped", "invalid", "notice"):
        return [f"  [{name}] {text('message') if event.get('message') is not None else text('error')}"]
    if name == "session_end":
        bits = [f"{k}={visible(str(event[k]))}" for k in ("outcome", "exit_code", "tool_calls", "denials")
                if event.get(k) is not None]
        return [f"end    {' '.join(bits)}"]
    if name in ("step", "token"):
        return []
    if isinstance(name, str) and name.startswith("reflection_"):
        return _render_reflection(name, event, text, redact)
    return [f"  [{visible(str(name))}]"]


def _render_reflection(name: str, event: dict, text, redact) -> list[str]:
    """The reflection turn at the end of a chat or run, every line marked [reflection]."""
    mark = "  [reflection]"
    if name == "reflection_start":
        return [f"{mark} start: up to {visible(str(event.get('seconds', '?')))} s, "
                f"at most {visible(str(event.get('max_proposals', '?')))} proposals"]
    if name == "reflection_step":
        return [] if event.get("parsed") else [f"{mark} invalid step: {text('error')}"]
    if name == "reflection_proposal":
        args = json.dumps(event.get("args", {}), ensure_ascii=False, sort_keys=True)
        kept = "proposed" if event.get("kept") else "dropped (beyond the limit)"
        return [f"{mark} {kept}: {visible(str(event.get('tool', '?')))} {visible(redact(args), keep_newlines=True)}"]
    if name == "reflection_write":
        verdict = "written" if event.get("written") else "not written"
        return [f"{mark} {verdict}: {visible(redact(str(event.get('path', ''))))} ({text('message')})"]
    if name == "reflection_end":
        bits = [f"{k}={visible(str(event[k]))}" for k in ("ended", "proposals", "dropped", "unfinished")
                if event.get(k) is not None]
        return [f"{mark} end: {' '.join(bits)}" + (f" ({text('message')})" if event.get("message") else "")]
    if name == "reflection_skipped":
        return [f"{mark} skipped: {text('reason')}"]
    if name == "reflection_step_refused":
        names = ", ".join(visible(str(n)) for n in event.get("secrets", []) if isinstance(n, str))
        return [f"{mark} refused: {visible(str(event.get('tool', '?')))} carried your vault secret {names}; "
                "the reflection ended"]
    return [f"{mark} {visible(name)}"]


@runs_group.command("show")
@click.argument("run_id", metavar="ID")
@json_option("The summary and every event, as JSON.")
def show_cmd(run_id: str, as_json: bool) -> None:
    """One run's transcript, for a person: escaped, redacted, tool calls and rulings marked."""
    ws = get_workspace()
    full = resolve_id(run_id, transcript_ids(ws.transcripts_dir), "run", listing="assistant runs")
    events = read_events(ws.transcripts_dir / f"{full}.jsonl")
    if events is None:
        fail(f"the transcript of {full} cannot be read (state/transcripts/{full}.jsonl)")
    scanner = _scanner()
    summary = summarise(full, events)
    if as_json:
        echo_json({"run": summary.to_json(), "events": redact_value(events, scanner)})
        return
    code = "-" if summary.exit_code is None else summary.exit_code
    click.echo(f"{visible(full)}  {visible(summary.kind)}  started {local_time(summary.start)}  {_outcome(summary.outcome, 0, wanted(sys.stdout))} (exit {code})")
    # on a terminal, a line wider than the screen is broken here and goes on after the mark
    screen = ScreenLines(CONTINUED, lambda: terminal_columns(sys.stdout.fileno())) if is_tty(sys.stdout) else None
    for event in events:
        lines = _render(event, scanner.redact)
        hidden = invisible_line(scanner.redact("".join(_strings(event))))
        if lines and hidden:
            lines[-1] += "\n" + hidden.rstrip("\n")     # once per event, as a continuation line
        for line in lines:
            shown = _marked(line) + "\n"
            click.echo(screen.feed(shown) if screen is not None else shown, nl=False)


# Continuation lines of multi-line text (a reply, a page a tool read, a tool's arguments) carry
# this mark: no line of runs show's own starts with it, so model text cannot forge a "[gate]",
# "> you:" or "< assistant:" line.
CONTINUED = "       | "


def _strings(value) -> list[str]:
    """Every string an event shows (its values, not its keys or its event name)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k != "event" for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _marked(text: str) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first, *(CONTINUED + line for line in rest)])


COMMANDS = [runs_group]
