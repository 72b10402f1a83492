"""The inbox never grows forever (issue 23 item 16): the "N expired without an answer" footer of
`approvals list` counts only the last 7 days, and `approvals prune [--older-than 30d]` removes
answered and expired requests (never a pending one), printing what it removed; the audit log
keeps their lines."""

from __future__ import annotations

import time

from click.testing import CliRunner

from assistant.cli import main
from policy.approvals import APPROVED, DENIED, EXPIRED, Inbox, sha256_hex
from policy.kinds import KINDS

DAY = 86400.0


def cli(ws, *args):
    return CliRunner().invoke(main, ["-w", str(ws), *args])


def filed(ws, days_ago, *, timeout=600.0, target="people/lina.md"):
    """A request filed `days_ago` days ago (waiting `timeout` seconds), by an inbox on that clock."""
    at = time.time() - days_ago * DAY
    inbox = Inbox(ws / "state" / "approvals", clock=lambda: at)
    content = f"about {target}\n"
    req, _ = inbox.create(run_id="20261101T000000Z-run-abcdef", kind="memory", target=target,
                          summary=f"update {target}", reason="ask", sha256=sha256_hex(content.encode()),
                          content=content, current=None, content_exact=True,
                          offers=KINDS["memory"].offers(target), timeout=timeout)
    return inbox, req


def answered(ws, days_ago, verdict, target):
    inbox, req = filed(ws, days_ago, target=target)
    inbox.answer(req.id, verdict, sha256=req.sha256)
    return req


def expired(ws, days_ago, target, *, recorded=False):
    inbox, req = filed(ws, days_ago, target=target)
    if recorded:      # the waiting run recorded the expiry itself
        Inbox(ws / "state" / "approvals", clock=lambda: time.time() - days_ago * DAY + 601).close(
            req.id, EXPIRED, "nobody answered", sha256=req.sha256)
    return req


def test_the_expired_footer_counts_only_the_last_7_days(ws):
    expired(ws, 40, "old.md")
    expired(ws, 10, "ten.md", recorded=True)
    expired(ws, 2, "two.md")
    expired(ws, 1, "one.md", recorded=True)
    r = cli(ws, "approvals", "list")
    assert r.exit_code == 0, r.output
    assert "(2 expired without an answer in the last 7 days; see `assistant approvals list --all`)" in r.output
    assert len(cli(ws, "approvals", "list", "--all").output.strip().splitlines()) == 4


def test_prune_removes_answered_and_expired_older_than_30_days_never_pending(ws):
    audit = ws / "state" / "audit.jsonl"
    audit.write_text('{"event": "ruling"}\n')
    before = audit.read_bytes()
    old_yes = answered(ws, 40, APPROVED, "a.md")
    old_no = answered(ws, 35, DENIED, "b.md")
    old_gone = expired(ws, 31, "c.md")
    old_run = expired(ws, 45, "d.md", recorded=True)
    recent = answered(ws, 3, APPROVED, "e.md")
    recent_gone = expired(ws, 20, "f.md")
    _, waiting_long = filed(ws, 40, timeout=60 * DAY, target="g.md")    # filed long ago, still pending
    _, waiting = filed(ws, 0, target="h.md")
    r = cli(ws, "approvals", "prune")
    assert r.exit_code == 0, r.output
    for req in (old_yes, old_no, old_gone, old_run):
        assert f"removed {req.id}" in r.output
        assert not (ws / "state" / "approvals" / f"{req.id}.json").exists()
        assert not (ws / "state" / "approvals" / f"{req.id}.answer.json").exists()
    assert "removed 4 requests (1 approved, 1 denied, 2 expired) older than 30d" in r.output
    left = {e.id: e.state for e in Inbox(ws / "state" / "approvals").list(all=True)}
    assert left == {recent.id: "approved", recent_gone.id: "expired", waiting_long.id: "pending",
                    waiting.id: "pending"}
    assert audit.read_bytes() == before            # the audit log keeps their lines

    r = cli(ws, "approvals", "prune", "--older-than", "7d")
    assert r.exit_code == 0 and f"removed {recent_gone.id}" in r.output and recent.id not in r.output
    r = cli(ws, "approvals", "prune", "--older-than", "1h")
    assert r.exit_code == 0 and f"removed {recent.id}" in r.output
    left = {e.id for e in Inbox(ws / "state" / "approvals").list(all=True)}
    assert left == {waiting_long.id, waiting.id}
    r = cli(ws, "approvals", "prune")
    assert r.exit_code == 0 and "nothing to prune" in r.output


def test_prune_refuses_a_bad_duration_and_its_help_explains(ws):
    r = cli(ws, "approvals", "prune", "--older-than", "soon")
    assert r.exit_code != 0 and "--older-than" in r.output
    r = cli(ws, "approvals", "prune", "--help")
    assert r.exit_code == 0
    text = " ".join(r.output.split())
    for words in ("answered and expired", "never a pending", "audit log keeps", "default: 30d"):
        assert words in text, text


def test_a_new_request_takes_out_what_ended_over_a_year_ago_never_a_pending_one(ws):
    """Without anyone running prune: filing a request removes answered and expired requests that
    ended more than a year ago; a pending one (even older, with a long timeout) stays."""
    old_answer = answered(ws, 400, APPROVED, "old.md")
    old_expiry = expired(ws, 380, "gone.md", recorded=True)
    _, still_waiting = filed(ws, 500, timeout=1000 * DAY, target="waiting.md")
    recent = answered(ws, 200, DENIED, "recent.md")
    inbox, new = filed(ws, 0, target="new.md")
    left = {e.id for e in inbox.list(all=True)}
    assert left == {still_waiting.id, recent.id, new.id}
    assert old_answer.id not in left and old_expiry.id not in left
