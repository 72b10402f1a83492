"""A read-before-overwrite refusal at the CLI is worded for the person (`--base REV`, `assistant
memory cat`), not for the model (`memory_read ... base`); the model's tool keeps its own wording
(issue 13 item 9)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from assistant.workspace.layout import init_workspace

MODEL_WORDS = ("memory_read", "as base", "without base", "your base")


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    init_workspace(root, example=True)
    return root


def cli(ws, tmp_path, *args, input=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env.update(HOME=str(tmp_path), TMPDIR=str(tmp_path))
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], input=input,
                          capture_output=True, text=True, env=env, timeout=60)


def person_words_only(text: str) -> None:
    for word in MODEL_WORDS:
        assert word not in text, text


def test_write_with_a_stale_base_names_the_option(ws, tmp_path):
    r = cli(ws, tmp_path, "memory", "cat", "--json", "people/lina.md")
    old = json.loads(r.stdout)["revision"]
    assert cli(ws, tmp_path, "memory", "write", "people/lina.md", "--base", old, input="v2\n").returncode == 0
    before = (ws / "memory/people/lina.md").read_bytes()

    r = cli(ws, tmp_path, "memory", "write", "people/lina.md", "--base", old, input="v3\n")
    assert r.returncode == 1 and r.stdout == ""
    assert "changed since you read it" in r.stderr
    assert f"--base {old} is not its current revision" in r.stderr
    assert "assistant memory cat --json people/lina.md" in r.stderr and "--force" in r.stderr
    person_words_only(r.stderr)
    assert (ws / "memory/people/lina.md").read_bytes() == before


def test_write_over_a_note_without_base(ws, tmp_path):
    r = cli(ws, tmp_path, "memory", "write", "people/lina.md", input="clobber\n")
    assert r.returncode == 1
    assert "already exists: to replace it, pass --base REV" in r.stderr and "--force" in r.stderr
    person_words_only(r.stderr)


def test_base_for_a_removed_note(ws, tmp_path):
    r = cli(ws, tmp_path, "memory", "cat", "--json", "people/marek.md")
    rev = json.loads(r.stdout)["revision"]
    assert cli(ws, tmp_path, "memory", "rm", "people/marek.md").returncode == 0
    r = cli(ws, tmp_path, "memory", "write", "people/marek.md", "--base", rev, input="back\n")
    assert r.returncode == 1 and "no longer exists" in r.stderr and "without --base" in r.stderr
    person_words_only(r.stderr)


def test_rm_with_a_stale_base_offers_no_force(ws, tmp_path):
    r = cli(ws, tmp_path, "memory", "rm", "people/lina.md", "--base", "0123456789ab")
    assert r.returncode == 1
    assert "--base 0123456789ab is not its current revision" in r.stderr and "--force" not in r.stderr
    person_words_only(r.stderr)
    assert (ws / "memory/people/lina.md").exists()


def test_a_base_that_is_not_a_revision_is_not_echoed(ws, tmp_path):
    r = cli(ws, tmp_path, "memory", "write", "people/lina.md", "--base", "hunter2-not-hex", input="x\n")
    assert r.returncode == 1 and "the --base you gave is not its current revision" in r.stderr
    assert "hunter2" not in r.stderr


def test_the_model_keeps_its_own_wording(ws):
    from assistant.memory import Conflict, open_memory

    mem = open_memory(ws, mode="watched")
    with pytest.raises(Conflict) as info:
        mem.write("people/lina.md", "x\n")
    assert "read it with memory_read and pass its revision as base" in str(info.value)
    assert info.value.why == "exists" and info.value.path == "people/lina.md"
