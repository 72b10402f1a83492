"""Issue 23 item 25: `/catalog` in chat, `assistant runs` and `runs show` break long lines at word
boundaries, with the continuation mark, never inside a word.

Before, the chat's line breaker (assistant.display.screen_lines) broke a line at the last
column that fitted, so a catalog summary read "...the gard" / "   : en shed...", and
`assistant runs` left a long task to the terminal's own wrap (no mark at all, mid-word, into
column 0). Real pseudo-terminals of a known width; the screen is rebuilt from the bytes as a
terminal would wrap them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

from assistant.cli.runs import CONTINUED
from assistant.display.screen_lines import ScreenLines, cell_width
from e2e_support import make_ws, write_script
from tty_harness import Pty

COLS = 60
WORDS = "remember Grandmother's marmalade recipe needs seville oranges granulated sugar".split()
# (within the catalog's and the listing's cut of a summary or task, so every word is shown)


def screen(text: str, cols: int) -> list[str]:
    """The lines a terminal `cols` wide shows for `text` (auto-wrap on; CSI sequences removed)."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    lines, line, col = [], "", 0
    for ch in text:
        if ch in "\n\r":
            lines.append(line)
            line, col = "", 0
        else:
            w = cell_width(ch)
            if col + w > cols:
                lines.append(line)
                line, col = "", 0
            line += ch
            col += w
    return lines + [line]


def assert_whole_words(lines: list[str], mark: str, words: list[str] = WORDS) -> None:
    """Every word of `words` is on one screen line, and every line that goes on after a break
    starts with the mark."""
    tokens = {tok for ln in lines for tok in ln.split()}
    broken = [w for w in words if w not in tokens]
    assert not broken, "broken inside a word: " + ", ".join(broken) + "\n" + "\n".join(lines)
    first = next(i for i, ln in enumerate(lines) if words[0] in ln)
    last = next(i for i, ln in enumerate(lines) if words[-1] in ln)
    assert last > first, "\n".join(lines)          # it did need breaking
    assert all(ln.startswith(mark) for ln in lines[first + 1:last + 1]), "\n".join(lines)


def test_chat_catalog_breaks_at_word_boundaries(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory" / "kitchen.md").write_text("# " + " ".join(WORDS) + "\n\nbody\n")
    script = write_script(tmp_path, [{"reply": "ok"}])
    t = Pty("-w", str(ws), "chat", "--model", f"script:{script}", cols=COLS)
    try:
        t.read_until("you> ")
        t.send("/catalog\r")
        t.read_until(WORDS[-1])
        t.read_until("you> ")
        t.send("/quit\r")
        assert t.wait() == 0
    finally:
        t.kill()
    assert_whole_words(screen(t.text, COLS), "   : ")


def _workspace_with_one_long_task(tmp_path):
    """A workspace with one finished run whose task is WORDS (run with the scripted model)."""
    ws = make_ws(tmp_path)
    steps = write_script(tmp_path, [{"reply": "done"}])
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "run", "--model", f"script:{steps}",
                        " ".join(WORDS)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return ws


def test_runs_list_breaks_a_long_task_at_word_boundaries(tmp_path):
    ws = _workspace_with_one_long_task(tmp_path)
    shown = Pty("-w", str(ws), "runs", cols=COLS)
    assert shown.wait() == 0
    assert_whole_words(screen(shown.text, COLS), "       | ")


def test_a_word_longer_than_a_line_is_still_broken_where_the_line_ends():
    lines = ScreenLines("   : ", lambda: 20)
    out = lines.feed("short " + "x" * 40 + " tail\n")
    rows = out.split("\n")
    assert rows[0] == "short " + "x" * 14 and all(len(r) <= 20 for r in rows)
    assert rows[-2].endswith(" tail") and "".join(r.removeprefix("   : ") for r in rows).count("x") == 40


def test_a_word_is_moved_whole_and_colour_codes_inside_it_count_no_columns():
    lines = ScreenLines("   : ", lambda: 20)
    out = lines.feed("aaaa bbbb cccc \x1b[1mdddd\x1b[0meeee ffff\n")
    assert out == "aaaa bbbb cccc \n   : \x1b[1mdddd\x1b[0meeee ffff\n"


def test_runs_show_breaks_a_long_task_at_word_boundaries(tmp_path):
    ws = _workspace_with_one_long_task(tmp_path)
    listed = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "runs", "--json"],
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    run_id = json.loads(listed.stdout)[0]["id"]
    shown = Pty("-w", str(ws), "runs", "show", run_id, cols=COLS)
    assert shown.wait() == 0
    assert_whole_words(screen(shown.text, COLS), CONTINUED)
