"""review_after / expires: a note past its date is flagged to the model and listed, never deleted."""

from __future__ import annotations

import datetime
import json

import pytest
from click.testing import CliRunner

from assistant.notes.catalog import render_catalog
from assistant.cli import main
from assistant.secrets.scanner import Scanner
from assistant.notes.frontmatter import staleness
from assistant.workspace.layout import init_workspace, open_workspace

TODAY = datetime.date.today()
PAST = (TODAY - datetime.timedelta(days=3)).isoformat()
FUTURE = (TODAY + datetime.timedelta(days=30)).isoformat()


def note(**meta) -> str:
    front = "".join(f"{k}: {v}\n" for k, v in meta.items())
    return f"---\n{front}---\nbody\n"


@pytest.fixture
def ws(tmp_path):
    init_workspace(tmp_path / "ws", example=True)
    mem = tmp_path / "ws" / "memory"
    (mem / "old-plan.md").write_text(note(description="the Q3 plan", review_after=PAST))
    (mem / "offer.md").write_text(note(description="a discount code", expires=PAST, review_after=PAST))
    (mem / "fresh.md").write_text(note(description="still good", review_after=FUTURE, expires=FUTURE))
    (mem / "typo.md").write_text(note(description="bad date", expires="next tuesday"))
    return tmp_path / "ws"


def test_staleness_rules():
    assert staleness({"review_after": PAST}).state == "review"
    assert staleness({"expires": PAST, "review_after": PAST}).state == "expired"
    assert staleness({"expires": FUTURE}) is None
    assert staleness({"expires": TODAY.isoformat()}).state == "expired"     # on the day itself
    assert staleness({}) is None
    assert staleness({"expires": "soon"}).state == "bad-date"


def test_the_catalog_flags_due_and_expired_notes_to_the_model(ws):
    text = render_catalog(open_workspace(ws), Scanner({}))
    line = {ln.split(":")[0][2:]: ln for ln in text.splitlines() if ln.startswith("- ")}
    assert line["old-plan.md"].endswith(f"[review due since {PAST}: may be out of date]")
    assert line["offer.md"].endswith(f"[expired {PAST}: may be out of date]")
    assert "may be out of date" not in line["fresh.md"]
    assert "not a YYYY-MM-DD date" in line["typo.md"]


def test_memory_stale_lists_them_and_nothing_is_deleted(ws):
    before = sorted(p.name for p in (ws / "memory").iterdir())
    r = CliRunner().invoke(main, ["-w", str(ws), "memory", "stale", "--json"])
    assert r.exit_code == 0, r.output
    rows = {row["path"]: row for row in json.loads(r.stdout)}
    assert set(rows) == {"old-plan.md", "offer.md", "typo.md"}
    assert rows["offer.md"]["state"] == "expired" and rows["offer.md"]["date"] == PAST
    assert rows["old-plan.md"]["state"] == "review" and rows["old-plan.md"]["summary"] == "the Q3 plan"
    r = CliRunner().invoke(main, ["-w", str(ws), "memory", "stale"])
    assert "offer.md\texpired" in r.stdout
    r = CliRunner().invoke(main, ["-w", str(ws), "memory", "ls", "--json"])
    stale = {e["path"]: e["stale"] for e in json.loads(r.stdout)}
    assert stale["fresh.md"] is None and "expired" in stale["offer.md"]
    assert sorted(p.name for p in (ws / "memory").iterdir()) == before
