"""Item 3 of issue 10: the net ask shows the whole URL. A long path pushed the query out of the
question, and a person said yes to a URL whose query carried notes. Now scheme, host, port,
path and query are each shown in full, escaped, with their lengths. Against a loopback server."""

from __future__ import annotations

from e2e_support import Site, make_ws, write_script
from tty_harness import Pty


def test_the_net_ask_shows_scheme_host_port_path_and_query_in_full(tmp_path):
    with Site({}) as site:
        ws = make_ws(tmp_path)
        path = "/" + "a-very-long-innocent-looking-path/" * 12
        query = "q=" + "x" * 400 + "&notes=MY-DIARY-TEXT-LEAVES-HERE"
        url = site.url(path) + "?" + query
        script = write_script(tmp_path, [{"tool": "web_fetch", "args": {"url": url}}, {"reply": "ok"}])
        t = Pty("-w", str(ws), "chat", "--model", f"script:{script}")
        asked = t.one_turn_then_quit("look it up", "assistant: ok", answer="n")
        assert site.seen_headers == []
    # a line wider than the screen goes on after the continuation mark (assistant.display.screen_lines)
    asked = asked.replace("\n   : ", "")
    assert "scheme:  http (4 characters)" in asked
    assert "host:    127.0.0.1 (9 characters)" in asked
    assert f"port:    {site.port} " in asked
    assert f"path:    {path} ({len(path):,} characters)" in asked
    assert f"query:   {query} ({len(query):,} characters)" in asked


def test_the_net_ask_escapes_what_it_shows(tmp_path):
    with Site({}) as site:
        ws = make_ws(tmp_path)
        url = site.url("/x%1b%5b2K") + "?a=\u202eevil"
        script = write_script(tmp_path, [{"tool": "web_fetch", "args": {"url": url}}, {"reply": "ok"}])
        t = Pty("-w", str(ws), "chat", "--model", f"script:{script}")
        asked = t.one_turn_then_quit("go", "you> ", answer="n")
    assert "\u202e" not in asked and "query:   a=\\u202eevil" in asked
