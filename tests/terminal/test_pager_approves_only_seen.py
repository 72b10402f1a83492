"""Item 8 of issue 23: the chat pager approved pages not yet seen. With memory_watched = "ask", a
proposed text longer than a screen is paged; a `y` typed at the first page used to allow the whole
write. Now an approval counts only once the last page has been shown: an approval word typed
earlier is answered with what is still unseen, and the paging goes on (never an approval)."""

from __future__ import annotations

from e2e_support import make_ws, memory_files, write_script
from tty_harness import Pty

ASK = 'memory_watched = "ask"\n'


def _chat(tmp_path, content):
    ws = make_ws(tmp_path)
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace("[policy]\n", "[policy]\n" + ASK, 1))
    script = write_script(tmp_path, [{"tool": "memory_write", "args": {"path": "garden.md", "content": content}},
                                     {"reply": "done"}])
    return ws, Pty("-w", str(ws), "chat", "--model", f"script:{script}")


def _long(lines: int = 120) -> str:
    body = "".join(f"line {i}: an ordinary remark about the garden\n" for i in range(lines))
    return body + "and at the very end: THE-LAST-LINE\n"


def test_a_yes_typed_at_the_first_page_is_not_an_approval(tmp_path):
    ws, t = _chat(tmp_path, _long())
    try:
        t.read_until("you> ")
        t.send("note the garden\r")
        first = t.read_until("allow?")
        assert "THE-LAST-LINE" not in first
        t.send("y\r")
        after = t.read_until("allow?")[len(first):]
        assert "not an approval yet" in after and "more lines you have not seen" in after
        assert "garden.md" not in memory_files(ws)
        t.send("n\r")
        t.read_until("assistant: done")
        t.send("/quit\r")
        assert t.wait() == 0
    finally:
        t.kill()
    assert "garden.md" not in memory_files(ws)


def test_a_yes_after_the_last_page_is_an_approval(tmp_path):
    content = _long()
    ws, t = _chat(tmp_path, content)
    try:
        t.read_until("you> ")
        t.send("note the garden\r")
        t.read_until("allow?")
        for _ in range(20):
            t.send("more\r")
            if "THE-LAST-LINE" in t.read_until("allow?"):
                break
        assert "THE-LAST-LINE" in t.text
        t.send("y\r")
        t.read_until("assistant: done")
        t.send("/quit\r")
        assert t.wait() == 0
    finally:
        t.kill()
    assert memory_files(ws)["garden.md"] == content.encode()


def test_yes_typed_ahead_of_the_pages_never_reaches_the_last_one(tmp_path):
    # many `y` lines at once: each page discards what was typed before it was on the screen
    ws, t = _chat(tmp_path, _long())
    try:
        t.read_until("you> ")
        t.send("note the garden\r")
        t.read_until("allow?")
        t.send("y\r" * 12)
        t.settle(3)
        assert "garden.md" not in memory_files(ws)
        t.send("n\r")
        t.read_until("assistant: done")
        t.send("/quit\r")
        assert t.wait() == 0
    finally:
        t.kill()
    assert "garden.md" not in memory_files(ws)


def test_lines_wider_than_the_screen_are_paged_by_the_rows_they_take(tmp_path):
    # review 23: pages were counted in lines, so 12 lines of ~1,260 characters were one "page" of
    # ~200 screen rows, most of it scrolled away before the question, and `y` approved it
    content = "".join(f"line {i}: " + "word " * 250 + "\n" for i in range(11)) + "THE-LAST-LINE\n"
    ws, t = _chat(tmp_path, content)
    try:
        t.read_until("you> ")
        t.send("note the garden\r")
        first = t.read_until("allow?")
        question = first[first.rfind("? memory"):]
        assert "THE-LAST-LINE" not in question
        assert question.count("\n") <= 40, question.count("\n")     # one page fits the screen (40 rows)
        t.send("y\r")
        after = t.read_until("allow?")[len(first):]
        assert "not an approval yet" in after
        assert "garden.md" not in memory_files(ws)
        t.send("n\r")
        t.read_until("assistant: done")
        t.send("/quit\r")
        assert t.wait() == 0
    finally:
        t.kill()
    assert "garden.md" not in memory_files(ws)
