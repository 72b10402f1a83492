"""`assistant runs` lists the exit code the process really had (issue 23 item 14): a chat in
which the person declined a fetch exits 0, and is listed as exit 0, not "denied exit 3"."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from assistant.records.runs import summarise

from e2e_support import make_ws


def cli(ws, *args, stdin=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], capture_output=True,
                          text=True, env=env, timeout=120, input=stdin, start_new_session=True)


def test_a_chat_with_a_declined_fetch_is_listed_with_the_exit_code_it_had(tmp_path):
    ws = make_ws(tmp_path, channel="none")
    steps = tmp_path / "chat.json"
    steps.write_text(json.dumps([{"tool": "web_fetch", "args": {"url": "http://127.0.0.1:9/news"}},
                                 {"reply": "I was not allowed to look."}]))
    chat = cli(ws, "chat", "--model", f"script:{steps}", stdin="what is the news?\nn\n/quit\n")
    assert chat.returncode == 0, chat.stderr
    assert "declined in the chat" in chat.stdout
    listed = cli(ws, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    [run] = json.loads(listed.stdout)
    assert run["kind"] == "chat" and run["denials"] == 1
    assert run["exit_code"] == chat.returncode == 0
    assert run["outcome"] == "done"
    shown = cli(ws, "runs")
    assert "exit 0" in shown.stdout and "denied exit" not in shown.stdout and "1 denied" in shown.stdout


def test_a_chat_transcript_written_before_exit_codes_were_recorded_reads_as_exit_0():
    """Chats always left with exit 0 after their session_end: an old transcript says so too."""
    events = [{"event": "session_start", "mode": "watched", "time": "2026-11-30T10:00:00Z"},
              {"event": "user", "text": "fetch it"},
              {"event": "tool_call", "tool": "web_fetch"},
              {"event": "ruling", "allowed": False, "verdict": "deny"},
              {"event": "session_end"}]
    summary = summarise("20261130T100000Z-chat-abcdef", events)
    assert (summary.outcome, summary.exit_code, summary.denials) == ("done", 0, 1)
    run = summarise("20261130T100000Z-run-abcdef", events)     # a run with a denial did exit 3
    assert (run.outcome, run.exit_code) == ("denied", 3)
