"""Hostile review: `memory show --raw` wrote a version's exact bytes to the person's terminal.

A hand edit (or a file dropped into memory/) is recorded as a version whatever it holds, an
escape sequence included; `--raw` is meant for `> FILE`, but on a terminal it let
`\\x1b[2K\\x1b[1A` erase lines. On a terminal it is refused (with how to use it); redirected it
stays byte-exact."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tty_harness import Pty, clean_env  # noqa: E402

from assistant.workspace.layout import init_workspace

HIDDEN = "visible line\n\x1b[2K\x1b[1Ahidden instruction\n"


def test_memory_show_raw_never_writes_an_escape_sequence_to_a_terminal(tmp_path):
    root = tmp_path / "ws"
    init_workspace(root, example=True)
    (root / "memory" / "trap.md").write_text(HIDDEN)
    env = clean_env()
    log = subprocess.run([sys.executable, "-m", "assistant", "-w", str(root), "memory", "log", "trap.md"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert log.returncode == 0, log.stderr
    rev = re.findall(r"^([0-9a-f]{6,})\s", log.stdout, re.M)[0]
    t = Pty("-w", str(root), "memory", "show", "trap.md", "--rev", rev, "--raw", env=env)
    try:
        code = t.wait()
    finally:
        t.kill()
    assert b"\x1b[2K" not in t.raw, t.raw
    # redirected, it is still the exact bytes
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(root), "memory", "show", "trap.md",
                        "--rev", rev, "--raw"], capture_output=True, env=env, timeout=60)
    assert r.returncode == 0 and r.stdout == HIDDEN.encode()
    assert code != 0 or b"\\x1b" in t.raw
