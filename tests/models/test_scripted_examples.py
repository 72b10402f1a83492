"""The shipped scripted-model examples (docs/examples/) run as docs/scripted-model.md says, through
`assistant run` and `assistant chat --model script:...` on the shipped example workspace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.models.scripted import load_script
from assistant.workspace.layout import init_workspace

REPO = Path(__file__).resolve().parents[2]
READ = REPO / "docs" / "examples" / "scripted-read.json"
WRITE = REPO / "docs" / "examples" / "scripted-write.json"


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    init_workspace(root, example=True)
    return root


def cli(ws, tmp_path, *args, input=None, cwd=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env.update(HOME=str(tmp_path), TMPDIR=str(tmp_path), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], input=input, cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=120)


def tool_calls(ws) -> list[str]:
    names = []
    for p in sorted((ws / "state" / "transcripts").glob("*.jsonl")):
        names += [e["tool"] for e in map(json.loads, p.read_text().splitlines()) if e.get("event") == "tool_call"]
    return names


def test_the_documented_step_format_is_what_the_examples_use():
    doc = (REPO / "docs" / "scripted-model.md").read_text()
    for example in (READ, WRITE):
        assert f"docs/examples/{example.name}" in doc
        items = load_script(example)
        assert items[-1].keys() == {"reply"}
        assert all(item.keys() in ({"reply"}, {"tool", "args"}) for item in items)


def test_the_read_example_runs_done(ws, tmp_path):
    # the path as the doc writes it, from the repository's top folder
    r = cli(ws, tmp_path, "run", "--model", "script:docs/examples/scripted-read.json", "what do you know about Lina?",
            cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "done: I looked at the catalog, searched for Lina and read her note.\n"
    assert tool_calls(ws) == ["memory_list", "memory_search", "memory_read", "file_list"]


def test_the_write_example_in_a_chat_and_in_a_run(ws, tmp_path):
    note = ws / "memory" / "projects" / "garden.md"
    # unattended: the write is asked out of band; unanswered, it expires and the run is denied
    r = cli(ws, tmp_path, "run", "--approval-timeout", "1s", "--model", f"script:{WRITE}", "note the garden")
    assert r.returncode == 3 and r.stdout.startswith("denied: memory_write"), r.stdout + r.stderr
    assert not note.exists()
    # watched: allowed, shown in full, written
    r = cli(ws, tmp_path, "chat", "--model", f"script:{WRITE}", input="note the garden\n/quit\n")
    assert r.returncode == 0, r.stderr
    assert "new file projects/garden.md" in r.stdout and "assistant: Saved a new note" in r.stdout
    assert note.read_text() == "# Garden\n\nLina offered seedlings for the allotment in May.\n"
    # the note now exists: the same script's write fails, and the run says which call (exit 4)
    r = cli(ws, tmp_path, "run", "--approval-timeout", "1s", "--model", f"script:{WRITE}", "note the garden")
    assert r.returncode == 4 and r.stdout.startswith("failed: memory_write projects/garden.md"), r.stdout
