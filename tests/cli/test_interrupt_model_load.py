"""Ctrl-C while the model loads stops a run at once (issue 13 item 7: it used to be swallowed by
the load inside llama.cpp, and the run went on and exited 0). Real process, real embedded model."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from assistant.workspace.layout import init_workspace

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'assistant[llama]')")
pytestmark = pytest.mark.llama


def _default_sigint():
    # the runner may have been started with SIGINT ignored (nohup ... &); the child must not inherit it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sigint_while_the_model_loads_stops_the_run(tmp_path):
    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    proc = subprocess.Popen([sys.executable, "-m", "assistant", "-w", str(ws), "run", "hello"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_default_sigint)
    try:
        while True:
            line = proc.stderr.readline()
            assert line, "the run ended before it started loading the model"
            if line.startswith("[model] loading"):
                break
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, (out, err)
    assert out == "error: interrupted while loading the model; nothing was done\n", (out, err)
    assert "Traceback" not in err
    print(f"stopped {took:.2f}s after SIGINT")
    # nothing ran: no model step in the transcript
    [transcript] = list((ws / "state" / "transcripts").glob("*.jsonl"))
    assert '"event": "step"' not in transcript.read_text()
