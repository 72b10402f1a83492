"""The answer benchmark's shipped question sets and large workspace (bench/answers/) hold what
the benchmark promises: enough questions of each kind, facts that the named notes really hold,
the example's notes among the large workspace's, and a generator that rewrites the same files."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ANSWERS = REPO / "bench" / "answers"
_spec = importlib.util.spec_from_file_location("answers_score", REPO / "bench" / "answers_score.py")
answers_score = importlib.util.module_from_spec(_spec)
sys.modules["answers_score"] = answers_score
_spec.loader.exec_module(answers_score)   # by path: bench/ never goes on sys.path (bench/policy.py)

MINIMUM = {"example": 20, "large": 60}


def load(name: str) -> tuple[list[dict], dict[str, str]]:
    data = json.loads((ANSWERS / f"{name}.json").read_text(encoding="utf-8"))
    memory = REPO / data["notes_from"]
    notes = {p.relative_to(memory).as_posix(): p.read_text(encoding="utf-8") for p in memory.rglob("*.md")}
    return data["questions"], notes


@pytest.mark.parametrize("name", ["example", "large"])
def test_each_set_has_enough_questions_of_each_kind(name):
    questions, _ = load(name)
    kinds = [q["kind"] for q in questions]
    assert len(questions) >= MINIMUM[name]
    assert set(kinds) == {"one-note", "body-only", "two-note", "unanswerable"}
    assert kinds.count("unanswerable") >= 0.15 * len(questions)
    assert kinds.count("two-note") >= 0.10 * len(questions)
    assert len({q["id"] for q in questions}) == len(questions)


@pytest.mark.parametrize("name", ["example", "large"])
def test_required_facts_are_in_the_answering_notes(name):
    questions, notes = load(name)
    for q in questions:
        assert all(rel in notes for rel in q["notes"]), q["id"]
        text = "\n".join(notes[rel] for rel in q["notes"])
        descriptions = "\n".join(re.findall(r"(?m)^description: .*$", text))
        if q["kind"] == "unanswerable":
            assert q["must"] == [], q["id"]
            continue
        assert q["must"], q["id"]
        assert len(q["notes"]) == (2 if q["kind"] == "two-note" else 1), q["id"]
        for fact in q["must"]:
            assert answers_score.has_fact(fact, text), (q["id"], fact)
            if q["kind"] == "body-only":
                assert not answers_score.has_fact(fact, descriptions), (q["id"], fact)


def test_the_large_workspace_holds_the_examples_notes_among_300_in_several_folders():
    _, notes = load("large")
    _, example = load("example")
    assert len(notes) >= 300
    assert {rel.split("/")[0] for rel in notes} >= {"people", "projects", "places", "health", "home", "work", "recipes"}
    for rel, text in example.items():
        assert notes[rel] == text


def test_the_generator_rewrites_the_committed_workspace(tmp_path):
    subprocess.run([sys.executable, str(ANSWERS / "make_large.py"), str(tmp_path)], check=True,
                   capture_output=True, timeout=120)
    assert (tmp_path / "large.json").read_bytes() == (ANSWERS / "large.json").read_bytes()
    made = {p.relative_to(tmp_path / "large").as_posix(): p.read_bytes() for p in (tmp_path / "large").rglob("*.md")}
    shipped = {p.relative_to(ANSWERS / "large").as_posix(): p.read_bytes() for p in (ANSWERS / "large").rglob("*.md")}
    assert made == shipped
