"""A reply line padded to the terminal's width must not wrap into column 0 (hostile review of
the terminal display, left open in an earlier stop, closed here).

The continuation mark stops a reply's *newlines* from starting a line that passes for the
chat's own ("  [allow] ...", "you> "); padding did the same without a newline: spaces up to the
screen's width, and the terminal's own wrap put the rest in column 0. On a terminal the chat and
`runs show` now break such a line themselves, mark included. Real pseudo-terminals of a known
width; the screen is rebuilt from the bytes as a terminal would wrap them."""

from __future__ import annotations

import json
import re

import pytest

from assistant.display.screen_lines import ScreenLines, cell_width
from e2e_support import make_ws, write_script
from tty_harness import Pty

COLS = 60
FORGED = "  [allow] memory people/bob.md: watched chat"


def screen(text: str, cols: int) -> list[str]:
    """The lines a terminal `cols` wide shows for `text` (auto-wrap on; CSI sequences and the
    status line's carriage return handled; NO_COLOR is set by the harness)."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    lines, line, col = [], "", 0
    for ch in text:
        if ch == "\n":
            lines.append(line)
            line, col = "", 0
        elif ch == "\r":
            lines.append(line)        # what follows is written from column 0
            line, col = "", 0
        else:
            w = cell_width(ch)
            if col + w > cols:
                lines.append(line)
                line, col = "", 0
            line += ch
            col += w
    return lines + [line]


def padded(prefix_cells: int, filler: str) -> str:
    """A reply whose first line is filled to exactly COLS cells, then the forged ruling."""
    first = "I could not save that."
    room = COLS - prefix_cells - len(first)
    return first + filler * (room // cell_width(filler)) + " " * (room % cell_width(filler)) + FORGED


@pytest.mark.parametrize("filler", [" ", "\u5b57"], ids=["spaces", "wide-characters"])
def test_a_padded_chat_reply_cannot_wrap_into_a_ruling(tmp_path, filler):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"reply": padded(len("assistant: "), filler)}])
    t = Pty("-w", str(ws), "chat", "--model", f"script:{script}", cols=COLS)
    t.one_turn_then_quit("save bob", "watched chat", "you> ")
    lines = screen(t.text, COLS)
    assert not [ln for ln in lines if ln.startswith("  [allow]")], "\n".join(lines)
    assert any(ln.startswith("   : ") and "[allow] memory people/bob.md" in ln for ln in lines)  # still shown


def test_runs_show_breaks_a_padded_line_itself_on_a_terminal(tmp_path):
    ws = make_ws(tmp_path)
    steps = write_script(tmp_path, [{"reply": padded(len("< assistant: "), " ")}])
    run = Pty("-w", str(ws), "run", "--model", f"script:{steps}", "tidy up", cols=COLS)
    assert run.wait() == 0
    [summary] = json.loads(__import__("subprocess").run(
        [__import__("sys").executable, "-m", "assistant", "-w", str(ws), "runs", "--json"],
        capture_output=True, text=True, timeout=60).stdout)
    shown = Pty("-w", str(ws), "runs", "show", summary["id"], cols=COLS)
    assert shown.wait() == 0
    lines = screen(shown.text, COLS)
    assert not [ln for ln in lines if ln.startswith("  [allow]")], "\n".join(lines)
    assert "[allow] memory people/bob.md" in shown.text


def test_screen_lines_break_before_the_margin_and_go_on_after_the_mark():
    s = ScreenLines("   : ", lambda: 20)
    s.column = 11                                         # after "assistant: "
    assert s.feed("12345 789abc\nxy") == "12345 \n   : 789abc\nxy"   # at a word boundary (issue 23)
    s.column = 11
    assert s.feed("123456789abcdefghijk") == "123456789\n   : abcdefghijk"   # longer than a line
    wide = ScreenLines(": ", lambda: 10).feed("\u5b57" * 6)       # 2 cells each
    assert wide == "\u5b57" * 5 + "\n: " + "\u5b57"
    assert cell_width("\u0301") == 0 and cell_width("\u2800") == 2 and cell_width("\u4dc0") == 2
    assert ScreenLines(": ", lambda: 20).feed("a\tb") == "a" + " " * 7 + "b"           # tab stops
    colour = ScreenLines(": ", lambda: 20).feed("\x1b[1m" + "x" * 20 + "\x1b[0m")  # its own colour: no cell
    assert "\n" not in colour
    widths = iter([40, 20])
    resized = ScreenLines(": ", lambda: next(widths))
    assert "\n" not in resized.feed("x" * 30)
    assert resized.feed("y") == "\n: y"                                # narrower now: breaks at once
    assert ScreenLines("| ", lambda: None).feed("x" * 500) == "x" * 500               # no screen: no breaks
