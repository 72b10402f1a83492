"""A corrupt grants.json is named in one warning line on stderr when a run or a chat starts
(issue 23 item 21), not only by `assistant doctor`: every request is treated as if no grant
existed, and the person should know why their "always" answers stopped counting."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from e2e_support import make_ws


def cli(ws, *args, stdin=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], capture_output=True,
                          text=True, env=env, timeout=120, input=stdin, start_new_session=True)


def _grant_lines(stderr):
    return [ln for ln in stderr.splitlines() if "grants.json" in ln]


def _reply(tmp_path):
    steps = tmp_path / "reply.json"
    steps.write_text(json.dumps([{"reply": "hello"}]))
    return f"script:{steps}"


def test_a_run_names_a_corrupt_grants_file_in_one_warning_line(tmp_path):
    ws = make_ws(tmp_path, channel="none")
    (ws / "grants.json").write_text('{"version": 1, "grants": [\n')
    r = cli(ws, "run", "--model", _reply(tmp_path), "say hello")
    assert r.returncode == 0, r.stderr
    [line] = _grant_lines(r.stderr)
    assert line.startswith("warning: ") and "not valid JSON" in line
    assert "as if no grant existed" in line and "assistant doctor" in line
    assert r.stdout == "done: hello\n"


def test_a_chat_names_a_corrupt_grants_file_in_one_warning_line(tmp_path):
    ws = make_ws(tmp_path, channel="none")
    (ws / "grants.json").write_text('{"version": 7, "grants": []}\n')
    r = cli(ws, "chat", "--model", _reply(tmp_path), stdin="/quit\n")
    assert r.returncode == 0, r.stderr
    [line] = _grant_lines(r.stderr)
    assert line.startswith("warning: ") and "unknown version 7" in line


def test_a_sound_grants_file_says_nothing(tmp_path):
    ws = make_ws(tmp_path, channel="none")
    r = cli(ws, "run", "--model", _reply(tmp_path), "say hello")
    assert r.returncode == 0 and _grant_lines(r.stderr) == []
