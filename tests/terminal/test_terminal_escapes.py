"""Item 1 of issue 10: text from the model or a note never reaches a terminal raw. A reply
carrying ESC[2K ESC[1A could erase the tool-call and ruling lines of a watched chat; a note
holding CR + ESC[2K hid a line under `memory cat`. Driven through a real pseudo-terminal."""

from __future__ import annotations

import re

import pytest

from e2e_support import make_ws, memory_files, write_script
from tty_harness import Pty

ERASE = "\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K"


def test_a_reply_with_escape_sequences_cannot_erase_the_lines_of_a_watched_chat(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "todo.md", "content": "buy milk\n"}},
        {"reply": f"{ERASE}nothing to save\u202e!"},
    ])
    t = Pty("-w", str(ws), "chat", "--model", f"script:{script}")
    t.one_turn_then_quit("remember milk", "nothing to save", "you> ")
    raw = t.raw
    # the model's sequences arrive as visible escapes, never as bytes the terminal acts on
    assert b"\x1b[1A" not in raw and b"\x1b[2K" not in raw and "\u202e".encode() not in raw
    assert "\\x1b[2K\\x1b[1A" in t.text and "\\u202e" in t.text
    # and the lines they tried to erase are there
    assert "-> memory_write" in t.text and "[allow] memory todo.md" in t.text
    assert memory_files(ws)["todo.md"] == b"buy milk\n"


def test_memory_cat_on_a_terminal_shows_a_hidden_line(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory" / "trap.md").write_bytes(b"the visible line\r\x1b[2Kthe hidden instruction\n")
    t = Pty("-w", str(ws), "memory", "cat", "trap.md")
    assert t.wait() == 0, t.text
    assert b"\x1b[2K" not in t.raw
    assert "the visible line\\x0d\\x1b[2Kthe hidden instruction" in t.text


def test_memory_ls_and_catalog_on_a_terminal_escape_summaries(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory" / "trap.md").write_bytes(b"---\ndescription: ok\x1b]0;pwned\x07 title\n---\nbody\n")
    for args in (["memory", "ls"], ["memory", "catalog"]):
        t = Pty("-w", str(ws), *args)
        assert t.wait() == 0, t.text
        assert b"\x1b]0;" not in t.raw and b"\x07" not in t.raw, (args, t.raw)
        assert "trap.md" in t.text


@pytest.mark.parametrize("content, code", [
    ("line one\x1b[2K\n", "U+001B"),
    ("over\rwritten\n", "U+000D"),
    ("c1 csi \x9b2K\n", "U+009B"),
    ("bell \x07\n", "U+0007"),
    ("delete \x7f\n", "U+007F"),
])
def test_memory_write_refuses_control_characters_naming_the_code_point(tmp_path, content, code):
    from assistant.memory import ContentRefused, memory_write

    ws = make_ws(tmp_path)
    with pytest.raises(ContentRefused, match=re.escape(code)):
        memory_write("trap.md", content, workspace=ws)
    assert "trap.md" not in memory_files(ws)


def test_memory_write_keeps_newlines_tabs_and_crlf(tmp_path):
    from assistant.memory import memory_write

    ws = make_ws(tmp_path)
    memory_write("crlf.md", "a\tb\r\nc\r\n", workspace=ws)
    assert memory_files(ws)["crlf.md"] == b"a\tb\r\nc\r\n"


def test_the_model_is_told_which_control_character_was_refused(tmp_path):
    from click.testing import CliRunner

    from assistant.cli import main

    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "x.md", "content": "a\x1b[8mhidden\x1b[0m\n"}},
        {"reply": "ok"}])
    r = CliRunner().invoke(main, ["-w", str(ws), "chat", "--model", f"script:{script}"], input="go\n/quit\n")
    assert r.exit_code == 0
    assert "U+001B (ESCAPE)" in r.stdout and "x.md" not in memory_files(ws)
    assert "\x1b[8m" not in r.stdout


def test_escape_keeps_newlines_tabs_and_crlf_and_shows_everything_else():
    from assistant.display.terminal import escape, one_line

    assert escape("a\tb\r\nc\n") == "a\tb\r\nc\n"
    assert escape("x\ry\x1b[2K\x9b\u202e\u200b\x7f") == "x\\x0dy\\x1b[2K\\x9b\\u202e\\u200b\\x7f"
    assert escape("two\nlines", newlines=False) == "two\\x0alines"
    cut = one_line("word " * 100, 40)
    assert len(cut) < 80 and cut.endswith("(499 characters in all)")
