"""`assistant approvals`: see, approve and deny what an unattended run asked to do.

Guards the only way an approval is given: by a person at a terminal, naming the request id
and (implicitly or with --sha256) the exact content shown. Unknown, expired, already answered
or corrupt requests are refused with a clear message and a non-zero exit.
"""

from __future__ import annotations

import json
import sys
import time

import click

from policy.audit import request_lines
from policy.approvals import (
    APPROVED, DENIED, EXPIRED, PENDING, Entry, Inbox, InboxError, as_json as entry_json, ended_at,
    read_before, requested_by, waiter_alive,
)
from policy.audit import AuditError
from policy.duration import parse_duration
from policy.kinds import SCOPES

from assistant.approvals import answering as approving
from assistant.approvals.answering import diff_text, flag_of, flag_warning
from assistant.display.colour import diff, status, wanted
from assistant.display.localtime import local_time
from assistant.secrets.audit_key import audit_key, unattended_unlock
from assistant.secrets.scanner import Scanner
from assistant.display.terminal import hidden_text_warning
from assistant.secrets.budget import BudgetError
from assistant.workspace.layout import Workspace
from assistant.session import policy_files
from assistant.cli.common import (
    echo_json, fail, get_workspace, json_option, resolve_id, visible as _visible, workspace_group,
)


def _inbox() -> tuple[Workspace, Inbox]:
    ws = get_workspace()
    return ws, policy_files(ws).inbox   # no config read, no vault unlocked


def _full_id(inbox: Inbox, given: str) -> str:
    """The request id that ID names: the whole id or any unique prefix of it."""
    try:
        ids = inbox.ids()
    except (InboxError, OSError) as exc:
        fail(f"the approvals inbox cannot be read: {exc}")
    return resolve_id(given, ids, "approval", listing="assistant approvals list --all")


def _line(e: Entry, *, on: bool = False) -> str:
    """One request on one line, escaped; on a terminal (`on`) its state word in colour."""
    if e.request is None:
        return _visible(f"{e.id}  ") + status("corrupt", on=on) + _visible(f"  {e.error}")
    r = e.request
    if e.state == PENDING:
        when = f"expires {local_time(r.expires_at)}"
        if waiter_alive(r) is False:
            when += "; the run that asked is gone, nothing waits for this answer"
    elif e.state == EXPIRED:   # nobody answered: the run's own closing record is not an answer
        when = f"expired {local_time(e.answer.answered_at if e.answer else r.expires_at)}"
    else:
        when = f"answered {local_time(e.answer.answered_at)}" if e.answer else f"{e.state}"
    by = requested_by(r)
    asker = f"; requested by {by}" if by else ""
    line = _visible(f"{e.id}  {e.state:<8} {r.kind:<6} {r.target}  ({when}; run {r.run_id}{asker})  {r.summary}")
    head = _visible(f"{e.id}  ")
    if on and line.startswith(head + e.state):
        return head + status(e.state, on=True) + line[len(head) + len(e.state):]
    return line


EXPIRED_FOOTER_DAYS = 7

approvals = workspace_group("approvals", "Requests from unattended runs, waiting for you (state/approvals/).")


@approvals.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also answered and expired requests.")
@json_option()
@click.option("--follow", is_flag=True, help="Keep running and print new requests as they arrive.")
@click.option("--max-events", type=int, default=None, hidden=True)
@click.option("--timeout", "follow_timeout", type=float, default=None, hidden=True)
def list_cmd(show_all: bool, as_json: bool, follow: bool, max_events: int | None,
             follow_timeout: float | None) -> None:
    """List pending requests (with --all, every request)."""
    ws, inbox = _inbox()
    if follow:
        ws.ensure_state()
    try:
        # The ids on file before listing: --follow prints every request not among them or the
        # listing, so one filed while we list is printed once, never lost in between.
        before = set(inbox.ids()) if follow else set()
        everything = inbox.list(all=True) if ws.approvals_dir.exists() or follow else []
    except InboxError as exc:
        fail(str(exc))
    entries = everything if show_all else [e for e in everything if e.state in (PENDING, "corrupt")]
    # the footer counts the last EXPIRED_FOOTER_DAYS only: older ones are history (`approvals prune`)
    since = time.time() - EXPIRED_FOOTER_DAYS * 86400
    expired = sum(1 for e in everything if e.state == EXPIRED and (ended_at(e) or 0) >= since)
    if as_json and not follow:
        echo_json([entry_json(e) for e in entries])
        return
    blocked = policy_files(ws).refusals.block()
    if blocked is not None and not as_json:
        click.echo(_visible(f"blocked: {blocked.reason()}"))

    def show(e: Entry) -> None:
        click.echo(json.dumps(entry_json(e), sort_keys=True) if as_json else _line(e, on=wanted(sys.stdout)))

    for e in entries:
        show(e)
    if not entries and not as_json:
        click.echo("no pending approvals" if not show_all else "no approval requests")
    if expired and not show_all and not as_json:
        # a queue nobody can see is a defect: say that expired requests exist, and where
        click.echo(f"({expired} expired without an answer in the last {EXPIRED_FOOTER_DAYS} days; "
                   "see `assistant approvals list --all`)")
    if not follow:
        return
    count = 0
    try:
        for e in inbox.follow(timeout=follow_timeout, seen=before | {e.id for e in entries}):
            show(e)
            count += 1
            if max_events is not None and count >= max_events:
                return
    except InboxError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        click.echo(err=True)    # the terminal echoed ^C: leave the shell a fresh line
        return


@approvals.command("show")
@click.argument("request_id", metavar="ID")
@json_option("Machine-readable output (includes the content).")
def show_cmd(request_id: str, as_json: bool) -> None:
    """Show one request: target, reason, and a diff of the proposed change. ID may be any unique prefix."""
    _ws, inbox = _inbox()
    request_id = _full_id(inbox, request_id)
    try:
        req = inbox.get(request_id)
        ans = inbox.answer_of(request_id)
    except InboxError as exc:
        fail(str(exc))
    entry = Entry(request_id, inbox.state(req, ans), req, ans)

    places = request_lines(_ws.audit_path, req.id, run=req.run_id, target=req.target, sha256=req.sha256)
    if as_json:
        out = entry_json(entry)
        out.update(content=req.content, current=req.current, content_exact=req.content_exact,
                   offers=list(req.offers), flagged=flag_of(req.current, req.content), audit_lines=[{"line": n, "event": ev} for n, ev in places])
        echo_json(out)
        return

    def echo(text: str) -> None:
        click.echo(_visible(text))

    click.echo(_visible(f"approval {req.id}: ") + status(entry.state, on=wanted(sys.stdout)))
    echo(f"  run:      {req.run_id}")
    task = approving.requester(_ws, req).task      # as the run's transcript recorded it (redacted there)
    if task:
        echo(f"  task:     {task}")
    if requested_by(req):
        echo(f"  from:     requested by {requested_by(req)}")
    if req.sources:
        echo(f"  read:     {read_before(req.sources, 'this run')}")
    echo(f"  kind:     {req.kind}")
    echo(f"  target:   {req.target}")
    echo(f"  reason:   {req.reason}")
    echo(f"  summary:  {req.summary}")
    echo(f"  filed:    {local_time(req.created_at)}   expires: {local_time(req.expires_at)}")
    echo(f"  sha256:   {req.sha256}")
    if places:
        echo("  audit:    " + ", ".join(f"line {n} ({ev})" for n, ev in places)
             + " of state/audit.jsonl (`assistant audit show`)")
    echo("  offers:   " + "; ".join(f"{o['scope']} = {o['label']}" for o in req.offers))
    if ans is not None:
        by = {"cli": "a person", "web": "a person (approval page)"}.get(ans.by, "the run")
        echo(f"  answer:   {ans.verdict} by {by} at {local_time(ans.answered_at)}"
                   + (f", remember {ans.remember}" if ans.verdict == APPROVED else "")
                   + (f": {ans.reason}" if ans.reason else ""))
    if not req.content_exact:
        echo("  note:     the content below is shown redacted; approving binds the exact bytes (sha256)")
    if req.content is not None and hidden_text_warning(req.content):
        echo("  " + hidden_text_warning(req.content).rstrip("\n"))
    flagged = flag_warning(req.current, req.content)
    if flagged:
        echo("  " + flagged.rstrip("\n"))
    click.echo("")
    click.echo(diff(diff_text(req), on=wanted(sys.stdout)), nl=False)
    if entry.state == PENDING:
        click.echo(f"\napprove: assistant approvals approve {req.id} [--remember "
                   + "|".join(o["scope"] for o in req.offers) + "]")
        click.echo(f"deny:    assistant approvals deny {req.id} [--reason TEXT]")


@approvals.command("approve")
@click.argument("request_id", metavar="ID")
@click.option("--remember", type=click.Choice(SCOPES), default="once", show_default=True,
              help="once: this call; run: rest of this run; exact: always this target; dir: always its folder.")
@click.option("--sha256", "sha", metavar="HEX", default=None,
              help="Approve only if the content still has this sha256 (or a prefix of >= 8 hex digits).")
def approve_cmd(request_id: str, remember: str, sha: str | None) -> None:
    """Approve a pending request (exactly the content `show` displays). ID may be any unique prefix."""
    ws, inbox = _inbox()
    request_id = _full_id(inbox, request_id)
    try:
        req = inbox.get(request_id)
    except InboxError as exc:
        fail(str(exc))
    if sha is not None:
        sha = sha.strip().lower()
        if len(sha) < 8 or not req.sha256.startswith(sha):
            fail(f"--sha256 {sha} does not match approval {request_id} ({req.sha256}); "
                 "the content is not what you checked: run `assistant approvals show` again")
    vault, unkeyed = unattended_unlock(ws)     # no prompt: env, key_file or keyring, as a scheduled run
    files = policy_files(ws, audit_key=audit_key(vault), scanner=vault.scanner() if vault is not None else None)
    try:
        done = approving.approve(files, request_id, remember=remember, sha256=req.sha256,
                                 by="cli")
    except approving.AnswerError as exc:
        fail(str(exc))
    if done.warning:
        click.echo(f"warning: {done.warning}", err=True)
    elif unkeyed:
        click.echo(f"warning: {unkeyed}", err=True)
    req, ans = done.request, done.answer
    offer = req.offer(ans.remember) or {}
    extra = f"; grant recorded: {req.kind} {offer.get('pattern')}" if ans.remember in ("exact", "dir") else ""
    click.echo(_visible(f"approved {req.id}: {req.kind} {req.target} ({offer.get('label', ans.remember)}){extra}"))
    if done.run_gone:
        click.echo("note: the run that asked is gone, so nothing will act on this answer now"
                   + ("; the grant applies to later runs" if extra else ""), err=True)


@approvals.command("deny")
@click.argument("request_id", metavar="ID")
@click.option("--reason", default="", help="Why (shown to the run and kept in the audit log).")
def deny_cmd(request_id: str, reason: str) -> None:
    """Deny a pending request. ID may be any unique prefix."""
    ws, inbox = _inbox()
    request_id = _full_id(inbox, request_id)
    vault, unkeyed = unattended_unlock(ws)     # no prompt: env, key_file or keyring, as a scheduled run
    scanner = vault.scanner() if vault is not None else Scanner({})
    files = policy_files(ws, audit_key=audit_key(vault), scanner=scanner)
    try:   # the reason is the person's free text: redacted before the inbox or the log keeps it
        done = approving.deny(files, request_id, reason=scanner.redact(reason), by="cli")
    except approving.AnswerError as exc:
        fail(str(exc))
    if done.warning:
        click.echo(f"warning: {done.warning}", err=True)
    elif unkeyed:
        click.echo(f"warning: {unkeyed}", err=True)
    req = done.request
    click.echo(_visible(f"denied {req.id}: {req.kind} {req.target}" + (f" ({reason})" if reason else "")))


@approvals.command("ack")
def ack_cmd() -> None:
    """Lift the block that refused secrets put on unattended runs and MCP writes.

    Once [limits] secret_refusals_per_day tool calls carrying a value from your vault were
    refused within 24 hours (or the counter in state/ is unreadable), unattended runs and MCP
    writes do not start. Check what asked (`assistant runs`, `assistant audit show`), then run
    this: it says what it reset, starts the count afresh, and is audited.
    """
    ws = get_workspace()
    try:
        ws.ensure_state()
    except OSError as exc:
        fail(f"the workspace's state/ cannot be set up: {exc.strerror or exc}")
    vault, unkeyed = unattended_unlock(ws)     # no prompt: env, key_file or keyring, as a scheduled run
    files = policy_files(ws, audit_key=audit_key(vault))
    try:
        before = files.refusals.reset()
    except BudgetError as exc:
        fail(f"{exc}; nothing was reset")
    block = before.block
    if block is None:
        said = (f"no block to lift; the count of refused secrets ({before.refusals} in the last 24 hours) "
                "starts afresh" if before.refusals else "no block to lift, and no refused secret counted")
    elif block.problem is not None:
        said = f"replaced the unreadable secret-refusal counter ({block.problem}); unattended runs and MCP writes may start"
    else:
        said = (f"lifted the block of {local_time(block.since)} ({block.refusals} refused secrets within 24 hours, "
                f"the last in session {block.run}); the count starts afresh; unattended runs and MCP writes may start")
    record = {"event": "secret_refusal_ack", "by": "cli", "refusals": before.refusals,
              "reset": "count" if block is None else "unreadable counter" if block.problem else "block"}
    if block is not None and block.problem is None:
        record.update(blocked_since=block.since, blocked_by=block.run)
    try:
        files.audit.append(record)
    except AuditError as exc:
        click.echo(f"warning: reset, but the audit log could not be written: {exc}", err=True)
    else:
        if unkeyed:
            click.echo(f"warning: {unkeyed}", err=True)
    click.echo(_visible(said))


@approvals.command("prune")
@click.option("--older-than", "older_than", default="30d", show_default=False, metavar="DURATION",
              help="Remove requests that were answered or expired more than DURATION ago "
                   "(e.g. 30d, 12h; default: 30d).")
def prune_cmd(older_than: str) -> None:
    """Remove answered and expired requests from state/approvals/, so the inbox never grows
    forever.

    Only requests answered (approved or denied) or expired more than --older-than ago are
    removed; never a pending one, and never a corrupt file (`approvals list` names those). The
    audit log keeps their lines (state/audit.jsonl is not touched). Prints each request removed.
    Without this command, each new request takes out those that ended more than a year ago.
    """
    try:
        age = parse_duration(older_than, setting="--older-than")
    except ValueError as exc:
        fail(f"{exc} (e.g. --older-than 30d)")
    ws, inbox = _inbox()
    if not ws.approvals_dir.exists():
        click.echo(f"nothing to prune: no answered or expired request older than {older_than}")
        return
    try:
        gone = inbox.prune(age)
    except InboxError as exc:
        fail(str(exc))
    if not gone:
        click.echo(f"nothing to prune: no answered or expired request older than {older_than}")
        return
    for e in gone:
        r = e.request
        click.echo(_visible(f"removed {e.id}  {e.state:<8} {r.kind:<6} {r.target}  "
                            f"(ended {local_time(ended_at(e))}; run {r.run_id})"))
    counts = [f"{n} {state}" for state in (APPROVED, DENIED, EXPIRED)
              if (n := sum(1 for e in gone if e.state == state))]
    click.echo(f"removed {len(gone)} request{'s' if len(gone) != 1 else ''} ({', '.join(counts)}) older than "
               f"{older_than}; the audit log keeps their lines")


@approvals.command("serve")
@click.option("--listen", default="127.0.0.1:8765", show_default=True, metavar="HOST:PORT",
              help="Address to listen on (port 0: any free port). Loopback unless --allow-remote.")
@click.option("--allow-remote", is_flag=True,
              help="Allow a non-loopback --listen address (prints what that exposes; prefer a VPN or a TLS "
                   "reverse proxy in front of 127.0.0.1).")
@click.option("--connection-lifetime", type=click.FloatRange(0.1, 3600), default=30.0, hidden=True)
def serve_cmd(listen: str, allow_remote: bool, connection_lifetime: float) -> None:
    """Serve a phone-sized approval page: pending requests, each in full, approve or deny.

    Every page needs a secret: a signed per-request link (from the notify command's {show_url},
    {approve_url}, {deny_url} or [approvals] push, with [approvals] web_url set) or the login URL
    printed at start. Answers are POSTs with a CSRF token, written like `approvals approve/deny`.
    """
    ws = get_workspace("approvals")
    # lazy: Starlette and uvicorn cost ~80 ms of CPU to import; approvals list/approve/deny skip it
    from assistant.web.server import ServeError, serve

    try:
        serve(ws, listen, allow_remote=allow_remote, echo=click.echo, warn=lambda m: click.echo(m, err=True),
              lifetime=connection_lifetime)
    except ServeError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        pass


COMMANDS = [approvals]
