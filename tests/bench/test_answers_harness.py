"""bench/answers.py end to end on the scripted model: both doors and both baselines answer,
each answer is scored, and the tables and the JSON say so. No real model, no figure asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_bench(tmp_path: Path, reply: str, *extra: str) -> tuple[str, dict]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"reply": reply}]))
    out = tmp_path / "answers.json"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "answers.py"), "--model", f"script:{script}",
                           "--limit", "2", "--json", str(out), *extra],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, json.loads(out.read_text())


def test_every_door_and_baseline_is_tabled_and_scored(tmp_path):
    stdout, data = run_bench(tmp_path, "Lina lives in Bristol.")
    titles = [line for line in stdout.splitlines() if "workspace example: 2 questions" in line]
    assert [t.split(" · ")[1] for t in titles] == ["door run", "door chat", "baseline no-notes (run, in process)",
                                                  "baseline oracle (run, in process)"]
    answers = data["answers"]
    assert [(a["door"], a["id"]) for a in answers] == [(d, q) for d in ("run", "chat", "no-notes", "oracle")
                                                       for q in ("ex01", "ex02")]
    # the scripted reply answers ex01 (where Lina lives) and not ex02 (what she does)
    assert {(a["id"], a["label"]) for a in answers} == {("ex01", "correct"), ("ex02", "wrong")}
    for a in answers:
        assert a["answer"] == "Lina lives in Bristol."
        assert a["steps"] == 1 and a["prompt_tokens"] > 0
    # each table counts what was scored: one correct and one wrong (columns as in answers_score.LABELS)
    totals = [line.split()[1:] for line in stdout.splitlines() if line.strip().startswith("all ")]
    assert totals == [["1", "0", "1", "0", "0", "0"]] * 4
    assert data["tables"] and all("median s: wall" in t for t in data["tables"])
    # the oracle was given the answering note's text (recall off); the doors the question only
    oracle = next(a for a in answers if a["door"] == "oracle" and a["id"] == "ex01")
    assert "Birthday: 14 March" in oracle["sent"] and oracle["sent"].endswith("Where does Lina live?")
    assert oracle["recalled"] == []
    run = next(a for a in answers if a["door"] == "run" and a["id"] == "ex01")
    assert run["sent"] == "Where does Lina live?" and "people/lina.md" in run["recalled"]


def test_a_placeholder_reply_is_scored_placeholder_through_the_run_door(tmp_path):
    stdout, data = run_bench(tmp_path, "<text>", "--only", "run")
    assert {a["label"] for a in data["answers"]} == {"placeholder"}
    assert "door chat" not in stdout


def test_the_oracle_s_memory_holds_the_notes_its_message_shows(tmp_path):
    """The oracle's message shows people/lina.md; a model that reads it there finds it (on an empty
    memory/ the read was refused, and the 1.5B model looped on it until the turn was stopped)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool": "memory_read", "args": {"path": "people/lina.md"}},
                                  {"reply": "Lina lives in Bristol."}]))
    out = tmp_path / "answers.json"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "answers.py"), "--model", f"script:{script}",
                           "--limit", "1", "--only", "run", "--baselines", "oracle", "--json", str(out)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    oracle = next(a for a in json.loads(out.read_text())["answers"] if a["door"] == "oracle")
    assert oracle["tools"] == ["memory_read"] and oracle["failed_tools"] == [] and oracle["recalled"] == []
    assert oracle["answer"] == "Lina lives in Bristol." and oracle["label"] == "correct"
