"""The transcript splits a door's time (issue 22 item 5): session_start carries the process's
start (the kernel's, not a time taken after the imports), the start-up and the model's load;
each step carries how long the model's call took. A reader (bench/answers.py) then takes the
harness's own time as wall - start-up - load - model. No figure is judged here, only that
each is recorded and consistent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from click.testing import CliRunner

from assistant.cli import main
from e2e_support import make_ws, transcripts, write_script


def _run(ws, script, task):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "run", "--model", f"script:{script}",
                           task], env=env, capture_output=True, text=True, timeout=120)


def test_a_run_records_its_process_start_load_and_each_steps_model_time(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"tool": "memory_read", "args": {"path": "people/lina.md"}},
                                     {"reply": "Lina lives in Bristol."}])
    before = time.time()
    r = _run(ws, script, "Where does Lina live?")
    after = time.time()
    assert r.returncode == 0, r.stdout + r.stderr
    [events] = transcripts(ws)
    start = next(e for e in events if e["event"] == "session_start")
    # this process's start, from the kernel: after the test launched it (to the clock tick)
    assert before - 0.05 <= start["process_started"] <= after
    assert start["load_s"] >= 0 and start["startup_s"] >= 0
    assert start["process_started"] + start["startup_s"] + start["load_s"] <= after
    steps = [e for e in events if e["event"] == "step"]
    assert len(steps) == 2 and all(isinstance(e["model_s"], float) and e["model_s"] >= 0 for e in steps)
    json.dumps(events)   # plain JSON values


def test_a_chat_records_the_same_fields(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"reply": "Hello."}])
    r = CliRunner().invoke(main, ["-w", str(ws), "chat", "--model", f"script:{script}"], input="hi\n/quit\n",
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    [events] = transcripts(ws)
    start = events[0]
    assert start["event"] == "session_start" and {"process_started", "startup_s", "load_s"} <= set(start)
    assert [("model_s" in e) for e in events if e["event"] == "step"] == [True]

