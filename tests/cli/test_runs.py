"""`assistant runs` and `runs show` read past sessions back from real transcripts, made here by
real `assistant run` / `schedule run` processes on the scripted model (issue 13 item 1)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from e2e_support import make_ws


@pytest.fixture
def ws(tmp_path):
    return make_ws(tmp_path, channel="none",
                   extra_config='\n[[schedule]]\nname = "morning"\ncron = "0 7 * * *"\ntask = "morning review"\n')


def cli(ws, *args, timeout=60):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], capture_output=True,
                          text=True, env=env, timeout=timeout, start_new_session=True)


def script(tmp_path, name, steps):
    p = tmp_path / name
    p.write_text(json.dumps(steps))
    return f"script:{p}"


def _make_runs(ws, tmp_path):
    done = script(tmp_path, "done.json", [{"reply": "Lina's birthday is in May."}])
    denied = script(tmp_path, "denied.json", [
        {"tool": "memory_write", "args": {"path": "people/zoe.md", "content": "Zoe likes tea\n"}},
        {"reply": "saved"}])
    escape = script(tmp_path, "escape.json", [{"reply": "all good \x1b[2K\x1b[1Ahidden"}])
    assert cli(ws, "run", "--model", done, "when is Lina's birthday").returncode == 0
    assert cli(ws, "run", "--model", denied, "remember Zoe").returncode == 3
    r = cli(ws, "--model", escape, "schedule", "run", "morning")
    assert r.returncode == 0, r.stderr


def test_runs_lists_every_run_newest_first_with_the_json_fields(ws, tmp_path):
    _make_runs(ws, tmp_path)
    r = cli(ws, "runs", "--json")
    assert r.returncode == 0, r.stderr
    runs = json.loads(r.stdout)
    assert [x["kind"] for x in runs] == ["schedule", "run", "run"]
    for x in runs:
        assert {"id", "start", "kind", "schedule", "task", "outcome", "exit_code", "tool_calls", "denials"} <= set(x)
    sched, denied, done = runs
    assert sched["schedule"] == "morning" and sched["task"] == "morning review" and sched["exit_code"] == 0
    assert denied["outcome"] == "denied" and denied["exit_code"] == 3
    assert denied["tool_calls"] == 1 and denied["denials"] == 1 and denied["task"] == "remember Zoe"
    assert done["outcome"] == "done" and done["exit_code"] == 0 and done["tool_calls"] == 0

    r = cli(ws, "runs", "--failed", "--json")
    assert [x["id"] for x in json.loads(r.stdout)] == [denied["id"]]
    r = cli(ws, "runs", "--since", "1h", "--json")
    assert len(json.loads(r.stdout)) == 3
    r = cli(ws, "runs", "--since", "soon")
    assert r.returncode == 1 and "--since" in r.stderr

    r = cli(ws, "runs")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) == 3 and "schedule morning" in lines[0] and "denied" in lines[1]
    # local time with its zone, e.g. "2026-12-01 05:00:27 UTC"
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+", lines[0])


def test_runs_show_by_unique_prefix_escaped_and_marked(ws, tmp_path):
    _make_runs(ws, tmp_path)
    runs = json.loads(cli(ws, "runs", "--json").stdout)
    sched, denied = runs[0], runs[1]

    r = cli(ws, "runs", "show", denied["id"][:-3])
    assert r.returncode == 0, r.stderr
    assert "[tool]  memory_write" in r.stdout and "[gate]  memory people/zoe.md: deny" in r.stdout
    assert "> you: remember Zoe" in r.stdout

    r = cli(ws, "runs", "show", sched["id"])
    assert "\x1b" not in r.stdout and "\\x1b[2K" in r.stdout   # shown, not obeyed

    r = cli(ws, "runs", "show", "2")           # every id starts with the year: ambiguous
    assert r.returncode == 1 and "ambiguous" in r.stderr
    r = cli(ws, "runs", "show", "nope")
    assert r.returncode == 1 and "unknown run id 'nope'" in r.stderr


def test_a_transcript_cut_short_is_listed_as_unfinished(ws, tmp_path):
    tdir = ws / "state" / "transcripts"
    tdir.mkdir(parents=True, exist_ok=True)
    (tdir / "20261201T010000Z-run-abcdef.jsonl").write_text(
        '{"event": "session_start", "time": "2026-12-01T01:00:00Z", "task": "t", "label": "run"}\n{"event": "us')
    runs = json.loads(cli(ws, "runs", "--json").stdout)
    assert runs[0]["outcome"] == "unfinished" and runs[0]["exit_code"] is None and runs[0]["task"] == "t"
