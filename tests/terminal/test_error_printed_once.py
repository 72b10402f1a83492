"""An error is printed once on a terminal (issue 23 item 13): `assistant run` with two config
problems used to print them as one flattened outcome line on stdout and again as a list on
stderr, and on a terminal both land on the same screen. Piped, the contract stays: one outcome
line on stdout, the full text on stderr."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from e2e_support import make_ws
from tty_harness import Pty, clean_env


def _bad_config(tmp_path):
    ws = make_ws(tmp_path, channel="none")
    cfg = ws / "config.toml"
    text = re.sub(r"(?m)^max_steps = .*$", 'max_steps = "many"', cfg.read_text())
    text = re.sub(r"(?m)^tool_timeout = .*$", 'tool_timeout = "forever"', text)
    cfg.write_text(text)
    return ws


def test_a_config_problem_shows_once_on_a_terminal(tmp_path):
    ws = _bad_config(tmp_path)
    term = Pty("-w", str(ws), "run", "hello", env=clean_env(PYTHONPATH=os.environ.get("PYTHONPATH", "")))
    try:
        assert term.wait(60) == 1
    finally:
        term.kill()
    screen = term.text
    assert screen.count("limits.max_steps = 'many'") == 1, screen
    assert screen.count("limits.tool_timeout = 'forever'") == 1, screen
    assert screen.count("error:") == 1, screen
    assert "has 2 problems:\n  limits.max_steps" in screen      # shown as the list, one per line


def test_piped_the_outcome_is_one_line_and_the_list_goes_to_stderr(tmp_path):
    ws = _bad_config(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "run", "hello"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 1
    assert len(r.stdout.splitlines()) == 1 and r.stdout.startswith("error: ")
    assert "limits.max_steps" in r.stdout and "\n  limits.tool_timeout" in r.stderr
