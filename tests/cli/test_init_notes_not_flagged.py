"""The notes `assistant init` writes (plain and --example) do not trip the assistant's own
instruction flagger: a new person's first `memory ls` must not warn about the shipped index."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _assistant(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    return subprocess.run([sys.executable, "-m", "assistant", *args], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("example", [False, True])
def test_a_new_workspace_lists_no_flagged_note(tmp_path, example):
    root = tmp_path / "ws"
    r = _assistant("init", str(root), *(["--example"] if example else []))
    assert r.returncode == 0, r.stderr
    r = _assistant("-w", str(root), "memory", "ls")
    assert r.returncode == 0, r.stderr
    assert "index.md" in r.stdout
    assert "flagged" not in r.stdout, r.stdout
