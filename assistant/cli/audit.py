"""`assistant audit verify` and `assistant audit show`: the person's view of state/audit.jsonl.

Guards the record of who allowed what: `verify` checks the hash chain line by line and against
the chain's head file (so a changed byte, a removed, inserted or reordered line, and lines cut
off the end are all named by line number) and exits non-zero when it is broken; `show` lists
rulings, answers and writes in words. Everything printed is escaped (targets and reasons can
carry text the model chose).
"""

from __future__ import annotations

import json
import time

import click

from policy.audit import AuditError, read_log, verify
from policy.duration import parse_duration

from assistant.display.localtime import local_time
from assistant.notes.history import parse_time

from assistant.secrets.audit_key import stored_audit_key
from assistant.secrets.vault import VaultError, unlock_if_present

from assistant.cli.common import (
    echo_json, fail, get_workspace, json_option, visible, workspace_group,
)


audit_group = workspace_group("audit", "The audit log (state/audit.jsonl): every ruling, answer and memory write, hash-chained.")


def _audit_key(ws) -> tuple[bytes | None, str]:
    """(the vault's audit key or None, what the chain can be: "keyed", "not yet keyed", "no vault").
    The vault is unlocked as `chat` does (at a terminal it may ask); one that exists but cannot
    be unlocked stops verify: its keyed lines cannot be checked without it."""
    try:
        vault = unlock_if_present(ws, interactive=True)
        if vault is None:
            return None, "no vault"
        key = stored_audit_key(vault)
    except VaultError as exc:
        fail(f"the audit log cannot be checked: its keyed lines need the vault's audit key, and {exc}")
    return key, "keyed" if key is not None else "not yet keyed"


@audit_group.command("verify")
@json_option("Machine-readable result.")
def verify_cmd(as_json: bool) -> None:
    """Check that no line of the audit log was changed, removed, inserted or reordered.
    Exits 0 when the chain is intact, 1 naming the first line at fault.

    Lines are keyed (HMAC-SHA256) with a key the vault holds, so checking them unlocks the vault
    (as `chat` does). A workspace with no vault has an unkeyed chain, and verify says so."""
    ws = get_workspace()
    key, state = _audit_key(ws)
    try:
        verdict = verify(ws.audit_path, key=key)
    except AuditError as exc:
        fail(str(exc))
    keyed = 0 if verdict.keyed_from is None else verdict.lines - verdict.keyed_from + 1
    if as_json:
        echo_json({"intact": verdict.intact, "lines": verdict.lines, "chain_start": verdict.start,
                   "line": verdict.line, "problem": verdict.problem, "notes": list(verdict.notes),
                   "keyed": state == "keyed", "keyed_from": verdict.keyed_from, "vault": state != "no vault"})
    else:
        for note in verdict.notes:
            click.echo(f"note: {note}", err=True)
        if verdict.intact:
            chained = max(0, verdict.lines - verdict.start + 1)
            if state == "keyed":
                how = f", {keyed} keyed with the vault's audit key"
            elif state == "no vault":
                how = " (unkeyed: this workspace has no vault)"
            else:
                how = " (unkeyed: no line has been written with the vault's audit key yet)"
            click.echo(f"intact: {verdict.lines} line(s), {chained} of them hash-chained"
                       + (f" (the chain starts at line {verdict.start})" if verdict.start > 1 and chained else "")
                       + how)
            if state == "no vault":
                click.echo("note: an unkeyed chain shows editing, not forging: whoever can write state/ can write "
                           "a consistent log; a vault (`assistant vault init`) keys the lines written after it",
                           err=True)
    if not verdict.intact:
        if not as_json:
            click.echo(f"error: the audit log was tampered with: {verdict.problem}", err=True)
        raise SystemExit(1)


def _records(path, since: float | None) -> list[tuple[int, dict]]:

    out = []
    try:
        raw = read_log(path)    # never follows a link, never waits on a FIFO
    except AuditError as exc:
        fail(str(exc))
    for i, ln in enumerate(raw.split(b"\n"), 1):
        if not ln.strip():
            continue
        try:
            rec = json.loads(ln)
        except ValueError:
            rec = {"event": "unreadable line"}
        if not isinstance(rec, dict):
            rec = {"event": "unreadable line"}
        if since is not None:
            try:
                if parse_time(str(rec.get("time", ""))) < since:
                    continue
            except ValueError:
                continue
        out.append((i, rec))
    return out


def _describe(rec: dict) -> str:
    ev = str(rec.get("event", "?"))
    kind, target = rec.get("kind", ""), rec.get("target", "")
    if ev in ("written", "removed"):
        what = f"{ev} {kind} {target} revision {rec.get('revision', '?')}"
        if rec.get("source"):
            what += f" (by {rec['source']})"
        return what
    verdict = rec.get("verdict", "")
    text = f"{ev} {kind} {target}: {verdict}"
    if rec.get("reason"):
        text += f" ({rec['reason']})"
    if rec.get("request"):
        text += f" request {rec['request']}"
    if rec.get("remember"):
        text += f" remember {rec['remember']}"
    sources = rec.get("sources")
    if isinstance(sources, list) and sources:   # what the session had read from untrusted places
        text += " after reading " + ", ".join(str(x) for x in sources)
    return text


@audit_group.command("show")
@json_option("A JSON list, each record with its line number.")
@click.option("--since", metavar="DURATION", default=None, help="Only the last DURATION (e.g. 1h, 7d).")
def show_cmd(as_json: bool, since: str | None) -> None:
    """List rulings, answers and writes, oldest first, with their line numbers."""
    cutoff = None
    if since is not None:
        try:
            cutoff = time.time() - parse_duration(since, setting="--since")
        except ValueError as exc:
            fail(str(exc))
    ws = get_workspace()
    records = _records(ws.audit_path, cutoff)
    if as_json:
        echo_json([{"line": i, **rec} for i, rec in records])
        return
    if not records:
        click.echo("no audit records" + (f" in the last {since}" if since else ""))
        return
    for i, rec in records:
        run = f" [run {rec['run']}]" if rec.get("run") else ""
        click.echo(visible(f"{i}\t{local_time(rec.get('time'))}\t{_describe(rec)}{run}"))


COMMANDS = [audit_group]
