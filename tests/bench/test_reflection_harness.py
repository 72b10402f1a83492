"""bench/reflection.py end to end on the scripted model: every chat goes through the reflection
step, chats that propose nothing are counted, proposals are counted, a proposal is never
written, and the default follows the figure. No real model, no real figure asserted."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# loaded from its file, not by putting bench/ on sys.path: bench/mcp.py would then shadow the
# MCP SDK's `mcp` package for every test collected after this one
_spec = importlib.util.spec_from_file_location("reflection_bench", REPO / "bench" / "reflection.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _run(tmp_path: Path, items: list) -> str:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(items))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "reflection.py"), "--model", f"script:{script}"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _write(i: int) -> dict:
    return {"tool": "memory_write", "args": {"path": f"people/new{i}.md", "content": f"person {i}\n"}}


def test_quiet_chats_are_counted_and_the_default_follows_them(tmp_path):
    quiet = [{"reply": "nothing to keep"}] * len(bench.NOTHING)
    durable = [item for i in range(len(bench.DURABLE)) for item in (_write(i), {"reply": "done"})]
    out = _run(tmp_path, quiet + durable)
    n, d = len(bench.NOTHING), len(bench.DURABLE)
    assert f"nothing-durable chats proposing nothing: {n}/{n} (100%" in out
    assert f"durable chats: {d}/{d} proposed something; {d} proposals in all" in out
    assert 'default by this figure: reflect = "chat"' in out


def test_a_chat_that_proposes_counts_against_the_default(tmp_path):
    n = len(bench.NOTHING)
    noisy = 3        # more than 10% of the quiet chats propose: the default is off
    items = [item for i in range(noisy) for item in (_write(i), {"reply": "done"})]
    items += [{"reply": "nothing to keep"}] * (n - noisy)
    out = _run(tmp_path, items)
    assert f"nothing-durable chats proposing nothing: {n - noisy}/{n}" in out
    assert 'default by this figure: reflect = "off"' in out


def test_the_bench_has_enough_quiet_chats():
    assert len(bench.NOTHING) >= 20 and bench.DURABLE
