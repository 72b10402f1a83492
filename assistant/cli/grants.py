"""`assistant grants`: list and revoke durable grants (grants.json).

Guards visibility of standing authority: every grant is listable, and revocable by its exact
kind and target. Grants are added only by approving a request (`assistant approvals approve
--remember exact|dir`). A corrupt grants.json is reported, never rewritten.
"""

from __future__ import annotations

import click

from assistant.display.localtime import local_time
from policy.grants import GrantsError
from policy.kinds import KINDS

from assistant.session import policy_files
from assistant.cli.common import (
    echo_json, fail, get_workspace, json_option, visible, workspace_group,
)


grants = workspace_group("grants", "Durable {kind, target} grants that let unattended runs act without asking.")


@grants.command("list")
@json_option()
def list_cmd(as_json: bool) -> None:
    """List every grant in grants.json."""
    store = policy_files(get_workspace()).grants
    try:
        items = store.load()
    except GrantsError as exc:
        fail(f"{exc}\n(until it is fixed, runs treat every request as having no grant)")
    if as_json:
        echo_json([g.as_dict() for g in items])
        return
    if not items:
        click.echo("no grants")
    for g in items:
        note = f"; {visible(g.note)}" if g.note else ""
        click.echo(f"{g.kind:<6} {visible(g.target)}  (granted {local_time(g.granted_at)}{note})")


@grants.command("revoke")
@click.argument("kind")
@click.argument("target")
def revoke_cmd(kind: str, target: str) -> None:
    """Remove the grant with exactly this KIND and TARGET (as `grants list` shows it)."""
    if kind not in KINDS:
        fail(f"unknown kind {kind!r} (known: {', '.join(KINDS)})")
    store = policy_files(get_workspace()).grants
    try:
        removed = store.revoke(kind, target)
        if not removed:
            # the target as the gate stores it (hosts lower-cased); a pattern stays as typed
            try:
                canonical = KINDS[kind].normalise(target)
            except Exception:
                canonical = target
            if canonical != target:
                removed = store.revoke(kind, canonical)
                target = canonical if removed else target
    except GrantsError as exc:
        fail(str(exc))
    if not removed:
        fail(f"no grant {kind} {target!r} in grants.json (see `assistant grants list`)")
    click.echo(f"revoked {kind} {target}")


COMMANDS = [grants]
