"""A reply line padded to the terminal's width must not wrap into column 0 (hostile review of
the terminal display, left open in an earlier stop, closed here).

The continuation mark stops a reply's *newlines* from starting a line that passes for the
chat's own ("  [allow] ...", "you> "); padding did the same without a newline: spaces up to the
screen's width, and the terminal's own wrap put the rest in column 0. On a terminal the chat and
`runs show` now break such a line themselves, mark included. Real pseudo-terminals of a known
width; the screen is rebuilt from the bytes as a terminal would wrap them. The same holds for the
other ways a line reaches the margin: tabs, characters drawn two cells wide, a wrong $COLUMNS,
tool-call arguments, a write's content, a catalog summary, and a terminal made narrower mid-reply."""

from __future__ import annotations

import fcntl
import json
import re
import struct
import subprocess
import termios
import threading
from pathlib import Path

import pytest

from assistant.display.screen_lines import ScreenLines, cell_width
from e2e_support import make_ws, write_script
from loopback import http_server
from recording_server import QuietHandler, send_json
from s4_screen import ASSISTANT, init_ws, run_on_pty, screen_rows
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


# review (terminal display): model text on a real pty wrapped a forged ruling into column 0 (s4)
# Each case plays a scripted model in `assistant chat` (or `assistant runs show`) on a pty and
# replays the bytes through a terminal model (autowrap, tab stops, the C library's wcwidth); a
# row beginning with the forged ruling "  [allow] memory notes/evil.md" is a break.
FAKE = "  [allow] memory notes/evil.md: watched"


def _chat_rows(tmp_path: Path, steps: list, env: dict | None = None, cols: int = COLS) -> list[str]:
    ws = init_ws(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    out = run_on_pty([ASSISTANT, "-w", str(ws), "chat", "--model", f"script:{script}"], ["hi", "/quit"],
                     cols=cols, env=env)
    assert "you> /quit" in out.replace("\r", ""), out
    return screen_rows(out, cols)


def _forged(rows: list[str]) -> list[str]:
    return [r for r in rows if r.startswith("  [allow] memory notes/evil.md")]


def test_write_content_line_wraps_into_column_0(tmp_path: Path) -> None:
    # a write allowed in a watched chat is shown "   | LINE": a content line wider than the
    # screen is not broken by the program, the terminal wraps it into column 0
    rows = _chat_rows(tmp_path, [
        {"tool": "memory_write", "args": {"path": "notes/x.md", "content": "A" * 55 + FAKE + "\n"}},
        {"reply": "ok"}])
    assert not _forged(rows), rows


def test_tool_call_arguments_wrap_into_column_0(tmp_path: Path) -> None:
    # "  -> tool {args}" is up to 160 characters and never broken; NBSP survives one_line
    rows = _chat_rows(tmp_path, [
        {"tool": "memory_search", "args": {"query": "Q" * 30 + "\u00a0\u00a0[allow] memory notes/evil.md: ok"}},
        {"reply": "ok"}])
    assert not [r for r in rows if r.startswith("\u00a0\u00a0[allow] memory notes/evil.md")], rows


def test_reply_tabs_counted_as_one_cell(tmp_path: Path) -> None:
    # escape() keeps \t; the first fix counted it as one cell, the terminal moves to the next tab stop
    rows = _chat_rows(tmp_path, [{"reply": "x" + "\t" * 6 + "BBBB" + FAKE}])
    assert not _forged(rows), rows


@pytest.mark.parametrize("wide", ["\u4dc0", "\u3248", "\u302e"], ids=["hexagram", "circled-ten", "hangul-tone"])
def test_reply_characters_the_terminal_draws_two_wide(tmp_path: Path, wide: str) -> None:
    # cell_width() counts these as 1 (or 0), the C library's wcwidth (and so xterm/VTE) as 2;
    # on 120 columns: "assistant: " (11) + 49 wide (98 cells, counted 49 or 0) + 11 "A" = 120
    rows = _chat_rows(tmp_path, [{"reply": wide * 49 + "A" * 11 + FAKE}], cols=120)
    assert not _forged(rows), rows


def test_wrong_columns_in_environment(tmp_path: Path) -> None:
    # shutil.get_terminal_size() believes $COLUMNS before asking the terminal itself
    rows = _chat_rows(tmp_path, [{"reply": "A" * 49 + FAKE}], env={"COLUMNS": "200"})
    assert not _forged(rows), rows


def test_runs_show_tabs(tmp_path: Path) -> None:
    ws = init_ws(tmp_path)
    script = tmp_path / "script.json"
    # on 100 columns: "< assistant: x" (14), 10 tabs to column 88 (counted 10), 12 "B" = 100
    script.write_text(json.dumps([{"reply": "x" + "\t" * 10 + "B" * 12 + "  [gate]  memory notes/evil.md: allowed"}]))
    subprocess.run([ASSISTANT, "-w", str(ws), "run", "--model", f"script:{script}", "go"], capture_output=True,
                   timeout=60)
    runs = json.loads(subprocess.run([ASSISTANT, "-w", str(ws), "runs", "--json"], capture_output=True,
                                     text=True, check=True).stdout)
    out = run_on_pty([ASSISTANT, "-w", str(ws), "runs", "show", runs[0]["id"]], [], cols=100)
    rows = screen_rows(out, 100)
    assert "< assistant:" in out, out
    assert not [r for r in rows if r.startswith("  [gate]  memory notes/evil.md")], rows


def test_catalog_summary_of_a_model_written_note_wraps_into_column_0(tmp_path: Path) -> None:
    # /catalog prints each note's summary (model-written text) on one line, never broken at the
    # screen's width: "- zz.md: # " (11) + 49 characters reach column 60; the catalog folds
    # whitespace (NBSP too), but U+2800 BRAILLE PATTERN BLANK is not whitespace and looks like a space
    ws = init_ws(tmp_path)
    script = tmp_path / "script.json"
    content = "# " + "A" * 49 + "\u2800\u2800[allow] memory notes/evil.md: watched\n\nbody\n"
    script.write_text(json.dumps([{"tool": "memory_write", "args": {"path": "zz.md", "content": content}},
                                  {"reply": "ok"}]))
    out = run_on_pty([ASSISTANT, "-w", str(ws), "chat", "--model", f"script:{script}"], ["hi", "/catalog", "/quit"],
                     cols=COLS)
    rows = screen_rows(out, COLS)
    assert "/catalog" in out
    assert not [r for r in rows if r.startswith("\u2800\u2800[allow] memory notes/evil.md")], rows


# review (terminal display): a terminal made narrower mid-reply: the rest was broken at the old width (s4)
# The chat read the screen's width once, when the reply started, so the terminal wrapped a forged
# ruling into column 0; now the width is read at every write. The model is a loopback
# OpenAI-compatible server streaming the reply in two pieces; the pty (100 columns) is resized to
# 40 between them.
# The first piece is longer than the chat's redaction holdback (96 characters), so its start is
# shown before the resize ("assistant: x" and 24 A's, up to column 36) and the rest after it.
# Broken at the old 100 columns, that rest would put the fake ruling exactly at column 40 of a
# line ("   : " + 32 A's + "BBB"), the new margin: only the new width keeps it off column 0.
PIECES = ['{"reply": "x' + "A" * 120, "BBB" + FAKE + '"}']


def _streaming_model(resized: threading.Event) -> type[QuietHandler]:
    class Model(QuietHandler):
        protocol_version = "HTTP/1.0"          # the stream ends when the connection closes

        def do_GET(self):
            send_json(self, {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "test"}]})

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()

            def event(data: bytes) -> None:
                self.wfile.write(b"data: " + data + b"\n\n")
                self.wfile.flush()

            def delta(content: str) -> None:
                event(json.dumps({"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}).encode())

            delta(PIECES[0])
            resized.wait(30)
            delta(PIECES[1])
            event(json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 10, "completion_tokens": 10}}).encode())
            event(b"[DONE]")
    return Model


def test_a_terminal_made_narrower_mid_reply_breaks_the_rest_at_the_new_width(tmp_path):
    ws = make_ws(tmp_path)
    resized = threading.Event()
    with http_server(_streaming_model(resized)) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        t = Pty("-w", str(ws), "chat", "--model", f"openai:{url}", cols=100)
        try:
            t.read_until("you> ")
            t.send("hi\r")
            t.read_until("assistant: x")             # the first piece is on the screen
            start = t.pos - len("assistant: x")
            fcntl.ioctl(t.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 40, 0, 0))   # SIGWINCH to the chat
            resized.set()
            t.read_until("watched")
            t.quit_at_prompt()
        finally:
            t.kill()
    after = t.out[start:].decode("utf-8", "replace").replace("\r\n", "\n")
    rows = screen_rows(after, 40)                   # from the resize on, the screen is 40 columns wide
    assert "BBB" in after, after
    assert not [r for r in rows if r.startswith("  [allow]")], rows
