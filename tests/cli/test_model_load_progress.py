"""A progress bar while the model loads, on a terminal only (issue 13: "a progress bar while the
model file is assembled or loaded"), shared by chat and run (assistant/cli/model_load.py).
Real processes, the real embedded model: under a pty the bar moves with its seconds and is
gone before the next line (Ctrl-C included); with stderr piped, stderr holds the loader's
lines and nothing of the bar."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest

from assistant.cli.model_load import LoadBar
from assistant.workspace.layout import init_workspace

BAR = re.compile(r"\[model\] loading the model \[[ =]{12}\] \d+s")


def _env():
    return {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}


def _default_sigint():
    # the runner may have been started with SIGINT ignored (nohup ... &); the child must not inherit it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_the_bar_is_drawn_below_finished_lines_and_cleared(tmp_path):
    """The stream side, on a real pipe: the loader's lines pass through whole; the bar only
    ever follows a finished line, and the last thing written is the bar's erasure."""
    r, w = os.pipe()
    try:
        with LoadBar(w) as bar:
            print("[model] loading x.gguf (1 MB)", file=bar, flush=True)
            bar.write("[model] loaded in 0.1s\n")
        os.close(w)
        w = -1
        out = os.read(r, 1 << 16).decode()
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    assert out.startswith("[model] loading x.gguf (1 MB)\n")
    assert "[model] loading the model [===" in out
    assert "\r\x1b[K[model] loaded in 0.1s\n" in out
    # the bar never overwrote a line being written: every draw starts after a newline or an erasure
    for m in re.finditer(r"\r\[model\] loading the model", out):
        assert out[m.start() - 1] in "\nK", out


@pytest.mark.llama
def test_a_run_on_a_terminal_shows_the_bar_and_ctrl_c_clears_it(tmp_path):
    pexpect = pytest.importorskip("pexpect", reason="pexpect is not installed (pip install 'assistant[dev]')")
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'assistant[llama]')")
    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    child = pexpect.spawn(sys.executable, ["-m", "assistant", "-w", str(ws), "run", "hello"],
                          env=_env(), timeout=120, encoding="utf-8", preexec_fn=_default_sigint)
    try:
        child.expect(BAR.pattern)
        # the loader's own line came first, whole, on its own line
        assert re.search(r"\[model\] loading \S+\.gguf \(\d+ MB", child.before)
        child.sendintr()
        child.expect(pexpect.EOF, timeout=30)
        tail = child.before
        status = child.wait()   # EOF on the pty can come before the process has exited
    finally:
        if child.isalive():
            child.kill(signal.SIGKILL)
        child.close()
    assert status == 1, (tail, child.signalstatus)
    # the bar's line was erased before the outcome line was printed
    assert "\r\x1b[Kerror: interrupted while loading the model; nothing was done" in tail, tail
    assert "Traceback" not in tail


@pytest.mark.llama
def test_piped_stderr_gets_the_loader_lines_and_no_bar(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'assistant[llama]')")
    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    proc = subprocess.Popen([sys.executable, "-m", "assistant", "-w", str(ws), "run", "hello"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                            preexec_fn=_default_sigint)
    try:
        lines = []
        while True:
            line = proc.stderr.readline()
            assert line, "the run ended before the model was loaded"
            lines.append(line)
            if line.startswith("[model] loaded in"):
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    seen = "".join(lines) + err
    assert any(ln.startswith("[model] loading ") for ln in lines), seen
    assert "\r" not in seen and "\x1b" not in seen and not BAR.search(seen), seen
