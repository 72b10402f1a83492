"""Hostile review: `assistant run` must not print `done:` and exit 0 when its only write failed.

Issue 13 item 6: stdout is exactly one line, `done:`, `denied:`, `failed:` (naming the call
that failed) or `error:`; exit 4 when a tool call failed (a refused secret included). The model
says "saved" whatever happened; the harness reports what did.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from e2e_support import make_ws


@pytest.fixture
def ws(tmp_path):
    root = make_ws(tmp_path, channel="none")     # the example; nobody to ask
    return root


def run(ws, tmp_path, steps):
    script = tmp_path / "s.json"
    script.write_text(json.dumps(steps))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "run", "--model",
                           f"script:{script}", "do it"], capture_output=True, text=True, env=env,
                          timeout=60, start_new_session=True)


def test_a_run_whose_only_write_failed_says_failed_and_exits_4(ws, tmp_path):
    # a control character: memory_write refuses it (watched or not), nothing is written
    r = run(ws, tmp_path, [{"tool": "memory_write", "args": {"path": "x.md", "content": "a\x1b[2Kb\n"}},
                           {"reply": "Saved it."}])
    assert r.stdout.count("\n") == 1, r.stdout
    assert r.stdout.startswith("failed: memory_write"), r.stdout
    assert r.returncode == 4, (r.returncode, r.stdout, r.stderr)
    assert not (ws / "memory" / "x.md").exists()


def test_a_run_without_failures_is_still_done(ws, tmp_path):
    r = run(ws, tmp_path, [{"tool": "memory_list", "args": {}}, {"reply": "nothing to do"}])
    assert r.returncode == 0 and r.stdout == "done: nothing to do\n", (r.stdout, r.stderr)
