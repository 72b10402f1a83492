"""Hostile review: a one-line display may join lines, but must not turn a hidden character into
an ordinary space. `str.split()` treats NEL (U+0085), the line/paragraph separators, the
information separators U+001C-U+001F, FF/VT and wide spaces as whitespace, so `one_line`
printed "a\\x85b" as "a b": the person saw a plain space where a C1 control was, and a note named
"k<U+3000>l.md" was listed as "k l.md", a name that does not exist."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from assistant.display.terminal import one_line
from assistant.workspace.layout import init_workspace


@pytest.mark.parametrize("ch", ["\x85", "\u2028", "\u2029", "\x1c", "\x1f", "\x0b", "\x0c"])
def test_one_line_shows_a_hidden_separator_as_an_escape_not_a_space(ch):
    shown = one_line(f"a{ch}b")
    assert shown != "a b" and shown.startswith("a\\") and shown.endswith("b"), shown


def test_one_line_still_joins_ordinary_lines():
    assert one_line("a\n  b\tc\r\nd") == "a b c d"


def test_memory_ls_shows_a_note_name_as_it_is(tmp_path):
    root = tmp_path / "ws"
    init_workspace(root, example=True)
    (root / "memory" / "k\u3000l.md").write_text("wide space in the name\n")
    (root / "memory" / "two  spaces.md").write_text("two spaces in the name\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(root), "memory", "ls"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    names = [line.split("\t")[0] for line in r.stdout.splitlines()]
    assert "k\u3000l.md" in names and "two  spaces.md" in names, r.stdout
