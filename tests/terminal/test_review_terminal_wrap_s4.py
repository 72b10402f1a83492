"""Review s4 (terminal display): model text must never produce a line that passes for the
program's own, on a real pseudo-terminal of a known width. Each case plays a scripted model in
`assistant chat` (or `assistant runs show`) on a 60-column pty and replays the bytes through a
terminal model (autowrap, tab stops, the C library's wcwidth); a row beginning with the forged
ruling "  [allow] memory notes/evil.md" is a break."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from s4_screen import ASSISTANT, init_ws, run_on_pty, screen_rows  # noqa: E402

COLS = 60
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
