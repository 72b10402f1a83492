"""Every time the CLI shows is local time with its zone, spelled one way (`2026-12-01 10:30:27
IST`): runs, memory log, memory ls --sort changed, approvals list/show, audit show, grants list,
vault list, schedule list. Stored times stay UTC, and --json keeps them (issue 13 item 9).
The children run with TZ=Asia/Kolkata (+05:30, no daylight saving), so UTC would show."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from workspaces import cheap_kdf, example_ws
from policy.approvals import Inbox, sha256_hex
from policy.grants import GrantStore
from policy.kinds import KINDS

IST = timezone(timedelta(hours=5, minutes=30))
SHOWN = re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d IST\b")
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
PASS = "local times pass " + "phrase"


def expected(iso: str) -> str:
    when = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return when.astimezone(IST).strftime("%Y-%m-%d %H:%M:%S IST")


@pytest.fixture
def ws(tmp_path):
    root = cheap_kdf(example_ws(tmp_path))
    cfg = root / "config.toml"
    text = cfg.read_text()
    cfg.write_text(text + '\n[[schedule]]\nname = "morning"\ncron = "30 7 * * *"\ntask = "Review my notes."\n')
    return root


def cli(ws, tmp_path, *args, input=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env.update(TZ="Asia/Kolkata", HOME=str(tmp_path), TMPDIR=str(tmp_path), ASSISTANT_VAULT_PASSPHRASE=PASS)
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], input=input,
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_every_listing_shows_local_time_with_its_zone(ws, tmp_path):
    cli(ws, tmp_path, "memory", "write", "diary.md", input="A day.\n")

    # memory log: the stored UTC time, shown in local time
    log = json.loads(cli(ws, tmp_path, "memory", "log", "diary.md", "--json"))
    stored = log[0]["time"]
    assert stored.endswith("Z")                                # --json keeps the stored value
    text = cli(ws, tmp_path, "memory", "log", "diary.md")
    assert expected(stored) in text and not ISO.search(text), text
    text = cli(ws, tmp_path, "memory", "show", "diary.md", "--rev", log[0]["rev"])
    assert not ISO.search(text), text

    # memory ls --sort changed: each note with the time it changed
    listing = cli(ws, tmp_path, "memory", "ls", "--sort", "changed")
    first = listing.splitlines()[0].split("\t")
    mtime = (ws / "memory" / "diary.md").stat().st_mtime
    assert first[0] == "diary.md"
    assert first[2] == datetime.fromtimestamp(mtime, IST).strftime("%Y-%m-%d %H:%M:%S IST")

    # runs: a scripted run, listed and shown
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"reply": "Done."}]))
    cli(ws, tmp_path, "run", "--model", f"script:{script}", "hello")
    runs = json.loads(cli(ws, tmp_path, "runs", "--json"))
    text = cli(ws, tmp_path, "runs")
    assert expected(runs[0]["start"]) in text and not ISO.search(text), text
    assert expected(runs[0]["start"]) in cli(ws, tmp_path, "runs", "show", runs[0]["id"][:12])

    # audit show
    text = cli(ws, tmp_path, "audit", "show")
    assert SHOWN.search(text) and not ISO.search(text), text

    # approvals list / show
    inbox = Inbox(ws / "state" / "approvals")
    req, _ = inbox.create(run_id="run-7", kind="memory", target="people/lina.md", summary="update people/lina.md",
                          reason="ask", sha256=sha256_hex(b"Lina likes tea.\n"), content="Lina likes tea.\n",
                          current="Lina.\n", content_exact=True, offers=KINDS["memory"].offers("people/lina.md"),
                          timeout=600.0)
    text = cli(ws, tmp_path, "approvals", "list")
    assert f"expires {expected(req.expires_at)}" in text and not ISO.search(text), text
    text = cli(ws, tmp_path, "approvals", "show", req.id)
    assert f"filed:    {expected(req.created_at)}" in text and f"expires: {expected(req.expires_at)}" in text
    cli(ws, tmp_path, "approvals", "deny", req.id)
    text = cli(ws, tmp_path, "approvals", "list", "--all")
    assert re.search(r"answered \d{4}-\d\d-\d\d \d\d:\d\d:\d\d IST", text), text
    assert json.loads(cli(ws, tmp_path, "approvals", "list", "--all", "--json"))[0]["expires_at"] == req.expires_at

    # grants list
    granted = GrantStore(ws / "grants.json").add("memory", "people/*").granted_at
    text = cli(ws, tmp_path, "grants", "list")
    assert f"granted {expected(granted)}" in text, text

    # vault list
    cli(ws, tmp_path, "vault", "init")
    cli(ws, tmp_path, "vault", "set", "Mail", input="mail-" + "secret-" + "8Hq2Zr7v")
    rows = json.loads(cli(ws, tmp_path, "vault", "list", "--json"))
    text = cli(ws, tmp_path, "vault", "list")
    assert expected(rows[0]["set_at"]) in text and not ISO.search(text), text

    # schedule list: the next run in local time, with the zone
    text = cli(ws, tmp_path, "schedule", "list")
    assert re.search(r"next \d{4}-\d\d-\d\d 07:30 IST\b", text), text
