"""Item 4 of issue 10: deliberate answers at an inline question, on a real terminal.

A line typed ahead with the chat message answered the question; after Ctrl-C at the question
the next line typed (`a`) was still taken as its answer and saved a durable grant. Now input
typed ahead is discarded, Ctrl-C cancels the question at once (no, nothing saved, the prompt
is back and the next line is an ordinary message), and a durable scope needs its word typed."""

from __future__ import annotations

from e2e_support import Site, grants_in, make_ws, transcripts, write_script
from tty_harness import Pty


def _chat(tmp_path, site, items):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, items)
    return ws, Pty("-w", str(ws), "chat", "--model", f"script:{script}")


def test_a_line_typed_ahead_does_not_answer_the_question(tmp_path):
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"page")}) as site:
        ws, t = _chat(tmp_path, site, [{"tool": "web_fetch", "args": {"url": site.url("/")}}, {"reply": "ok"}])
        try:
            t.read_until("you> ")
            t.send("fetch it\ry\r")         # "y" typed before the question was on the screen
            t.read_until("allow?")
            t.settle(1.5)
            assert site.seen_headers == [], "the typed-ahead line answered the question"
            assert "[allow]" not in t.text
            t.send("n\r")
            t.read_until("[deny] net")
            t.quit_at_prompt()
        finally:
            t.kill()
        assert site.seen_headers == []


def test_ctrl_c_at_the_question_denies_at_once_and_the_next_line_is_a_message(tmp_path):
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"page")}) as site:
        ws, t = _chat(tmp_path, site, [{"tool": "web_fetch", "args": {"url": site.url("/")}},
                                       {"reply": "first turn over"},
                                       {"reply": "you said a"}])
        try:
            t.read_until("you> ")
            t.send("fetch it\r")
            t.read_until("allow?")
            t.interrupt()
            t.read_until("[deny] net")
            t.read_until("you> ")
            t.send("a\r")                    # the old key for "always": now just a message
            t.read_until("assistant: ")
            t.quit_at_prompt()
        finally:
            t.kill()
        assert site.seen_headers == []
    assert grants_in(ws) == []
    [events] = transcripts(ws)
    users = [e["text"] for e in events if e["event"] == "user"]
    assert users == ["fetch it", "a"]


def test_a_single_letter_never_records_a_durable_grant_the_word_does(tmp_path):
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"page")}) as site:
        ws, t = _chat(tmp_path, site, [{"tool": "web_fetch", "args": {"url": site.url("/")}},
                                       {"reply": "one"},
                                       {"tool": "web_fetch", "args": {"url": site.url("/")}},
                                       {"reply": "two"}])
        try:
            t.read_until("you> ")
            t.send("fetch\r")
            asked = t.read_until("allow?")
            assert "always = always" in asked
            t.send("a\r")
            t.read_until("[deny] net")
            t.read_until("you> ")
            assert grants_in(ws) == [] and site.seen_headers == []
            t.send("fetch again\r")
            t.read_until("allow?")
            t.send("always\r")
            t.read_until("[allow] net")
            t.quit_at_prompt()
        finally:
            t.kill()
        assert len(site.seen_headers) == 1
    assert [g["target"] for g in grants_in(ws)] == [site.target]
