"""Hostile review of the agent side: findings pinned as tests (each failed before its fix).

Real sessions (open_session on a real workspace), a real loopback web server, the real
leak scanner; no mocked boundary.
"""

from __future__ import annotations

import os

import pytest

from assistant.agent import SafeStream
from assistant.session import open_session
from assistant.leaks import Scanner
from assistant.tools.base import ToolError
from assistant.tools.registry import tools_by_name
from assistant.workspace import open_workspace

from e2e_support import Site, make_ws


@pytest.fixture
def session(tmp_path):
    made = []

    def make(mode="watched", inline_ask=None):
        ws_path = make_ws(tmp_path / f"s{len(made)}")
        parts = open_session(open_workspace(ws_path), mode, kind="review", interactive=False,
                              inline_ask=inline_ask)
        made.append(parts)
        return parts

    yield make
    for p in made:
        p.close()


def call(parts, name, **args):
    return tools_by_name(parts.tools)[name].run(args, parts.ctx)


# ---- web_fetch: the ruling must be about the host actually contacted

@pytest.mark.parametrize("host", ["2130706433", "0x7f.1", "127.1", "0177.0.0.1", "0x7f000001", "127.0.1"])
def test_numeric_ipv4_spellings_are_refused_not_ruled_on_under_another_name(session, host):
    """`http://2130706433/` is 127.0.0.1 to the resolver (inet_aton), but the gate was asked
    about "2130706433": a person (or a grant) ruled on a name that is not the host contacted.
    Such spellings are refused before the gate with the dotted form to use."""
    asked = []
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"loopback secret page")}) as site:
        parts = session(inline_ask=lambda q: asked.append(q.target) or "once")
        with pytest.raises(ToolError, match=r"a\.b\.c\.d"):
            call(parts, "web_fetch", url=f"http://{host}:{site.port}/")
        assert site.seen_headers == [] and asked == []
        # the canonical spelling is asked about under its own name and fetched
        assert call(parts, "web_fetch", url=f"http://127.0.0.1:{site.port}/") == "loopback secret page"
        assert asked == [f"127.0.0.1:{site.port}"]


# ---- the streamed reply: no part of a secret reaches the terminal

LONG = "lv-" + "".join(f"{i:03d}Qx" for i in range(40))   # a 203-character vault value


def test_stream_never_shows_the_start_of_a_long_vault_value():
    """SafeStream held back 96 characters: a vault value longer than that was shown in part
    (everything but its last 96 characters) before the whole value was there to be redacted."""
    scanner = Scanner({"LONG_TOKEN": LONG})
    shown = []
    s = SafeStream(shown.append, scanner.redact, scanner=scanner)
    text = "Here it is: " + LONG + " and that is all, thanks for asking about it today."
    for ch in text:
        s.feed(ch)
    s.finish()
    out = "".join(shown)
    assert LONG[:16] not in out and LONG[3:19] not in out
    for i in range(0, len(LONG) - 16):
        assert LONG[i:i + 16] not in out, i
    assert out.startswith("Here it is: ")


def test_turn_loop_streams_no_part_of_a_long_vault_value(tmp_path):
    """The same through Agent.turn: the token events (what `assistant chat` prints as the reply
    streams) carry no 16-character piece of a 203-character vault value; the final reply event
    is redacted."""
    import json

    from assistant.agent import Agent, Limits
    from assistant.models.scripted import ScriptedModel
    from assistant.prompt import Conversation
    from assistant.tools.base import ToolContext

    scanner = Scanner({"LONG_TOKEN": LONG})
    p = tmp_path / "s.json"
    p.write_text(json.dumps([{"reply": "Sure: " + LONG + " is what the page said, more or less."}]))
    events = []

    class Allow:
        def authorize(self, *a, **k):
            raise AssertionError("no tool runs here")

    agent = Agent(model=ScriptedModel(p), tools=[], ctx=ToolContext(workspace=None, scanner=scanner, gate=Allow()),
                  conversation=Conversation("t", [], ""), limits=Limits(max_steps=2, tool_timeout=5, max_tokens=400),
                  on_event=lambda n, d: events.append((n, d)))
    res = agent.turn("what did it say")
    assert res.outcome == "reply"
    streamed = "".join(d["text"] for n, d in events if n == "token")
    for i in range(0, len(LONG) - 16):
        assert LONG[i:i + 16] not in streamed, i
    reply = [d for n, d in events if n == "reply"][0]
    assert LONG[:16] not in reply["text"] and "[redacted:LONG_TOKEN]" in reply["text"]


def test_the_person_asked_about_a_fetch_sees_its_query_string(session):
    """The inline ask (and an out-of-band request) summarised a fetch as scheme://host/path,
    dropping the query: `https://host/?q=<the contents of a private note>` looked like a harmless
    page to the person approving. The query is shown, in full since issue 10 item 3 (a cut query
    hid the part that carried notes); only one-line displays cut it, saying how long it is."""
    asked = []
    with Site({"/p?note=lina+likes+tea": (200, {"Content-Type": "text/plain"}, b"ok")}) as site:
        parts = session(inline_ask=lambda q: asked.append(q) or None)
        with pytest.raises(ToolError, match="denied"):
            call(parts, "web_fetch", url=site.url("/p?note=lina+likes+tea"))
        assert site.seen_headers == []
        assert "?note=lina+likes+tea" in asked[0].summary
        long_query = "x=" + "A" * 1500
        with pytest.raises(ToolError, match="denied"):
            call(parts, "web_fetch", url=site.url("/p?" + long_query))
        s = asked[1].summary
        assert "?" + long_query in s


def test_untrusted_marker_tag_is_too_long_to_forge_by_search():
    """The end marker's tag is a prefix of sha256(output); a page that contains its own end
    marker needs a fixed point on that prefix. At 12 hex digits (48 bits) that is a few GPU
    hours of search for a static text/plain page; at 32 (128 bits) it is out of reach."""
    from assistant.prompt import untrusted_block

    block = untrusted_block("web_fetch", "some page")
    tag = block.splitlines()[1][len("<<<UNTRUSTED DATA "):-3]
    assert len(tag) >= 32 and all(c in "0123456789abcdef" for c in tag)
    assert block.count(tag) == 2


def test_a_memory_write_that_timed_out_does_not_land_later(tmp_path):
    """limits.tool_timeout fired while memory_write waited for the writers' lock (after the gate
    had allowed it): the model and the transcript were told the call was stopped, and then the
    worker thread took the lock and wrote the note anyway. A timed-out call must write nothing."""
    import json
    import time

    from assistant.agent import Limits
    from assistant.locking import FileLock
    from assistant.models.scripted import ScriptedModel

    ws_path = make_ws(tmp_path / "ws")
    parts = open_session(open_workspace(ws_path), "watched", kind="review", interactive=False)
    try:
        parts.limits = Limits(max_steps=4, tool_timeout=0.4, max_tokens=256)
        p = tmp_path / "s.json"
        p.write_text(json.dumps([{"tool": "memory_write", "args": {"path": "late.md", "content": "late note\n"}},
                                 {"reply": "ok"}]))
        agent = parts.new_agent(ScriptedModel(p))
        with FileLock(parts.ws.lock_path, timeout=5):
            res = agent.turn("remember it")
            assert res.outcome == "reply"
            [result] = [e for e in agent.model.calls[1] if "took longer" in e.get("content", "")] or [None]
            assert result is not None
        time.sleep(1.5)   # the worker is still waiting on the lock (timeout 10 s): it gets it now
        assert not (ws_path / "memory" / "late.md").exists()
    finally:
        parts.close()


def test_web_timeout_holds_against_a_server_that_drips_bytes(session):
    """[web] timeout is the whole fetch's budget. resp.read(64 KiB) blocks until 64 KiB or EOF,
    and each byte arriving resets the socket timeout: a server sending a byte every 0.2 s kept
    a fetch with a 1 s timeout going for as long as it liked."""
    import socket
    import threading
    import time

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    stop = threading.Event()

    def serve():
        conn, _ = srv.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n")
            while not stop.is_set():
                try:
                    conn.sendall(b"x")
                except OSError:
                    return
                time.sleep(0.2)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        parts = session(inline_ask=lambda q: "once")
        parts.ws.config = parts.ws.config.updated({"web": {"max_bytes": 100000, "timeout": "1s"}})
        t0 = time.monotonic()
        with pytest.raises(ToolError, match="longer than 1s"):
            call(parts, "web_fetch", url=f"http://127.0.0.1:{port}/")
        assert time.monotonic() - t0 < 2.5
    finally:
        stop.set()
        srv.close()


def test_web_timeout_holds_against_a_server_dripping_its_headers(session):
    """The same in the header phase: http.client reads the status line and headers with the
    socket timeout per receive, so headers sent a byte at a time never hit it."""
    import socket
    import threading
    import time

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    stop = threading.Event()

    def serve():
        conn, _ = srv.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            while not stop.is_set():
                try:
                    conn.sendall(b"y")
                except OSError:
                    return
                time.sleep(0.2)

    threading.Thread(target=serve, daemon=True).start()
    try:
        parts = session(inline_ask=lambda q: "once")
        parts.ws.config = parts.ws.config.updated({"web": {"max_bytes": 100000, "timeout": "1s"}})
        t0 = time.monotonic()
        with pytest.raises(ToolError, match="longer than 1s|could not fetch"):
            call(parts, "web_fetch", url=f"http://127.0.0.1:{port}/")
        assert time.monotonic() - t0 < 2.5
    finally:
        stop.set()
        srv.close()


def test_a_multiline_secret_is_refused_as_auth_and_its_value_never_in_the_error(tmp_path):
    """http.client refuses a header value with a line break by raising ValueError('Invalid
    header value b"Bearer <the value>"'): the secret's value was in the exception web_fetch
    raised. Refused up front, naming the secret only."""
    from assistant.vault import Vault

    value = "-----BEGIN KEY-----\nabcdefghijklmnop\n-----END KEY-----"
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"ok")}) as site:
        ws_path = make_ws(tmp_path / "ws")
        v = Vault.create(ws_path / "vault.enc", "pass phrase x", opslimit=1, memlimit=8 * 1024 * 1024)
        v.set("PEM", value, hosts=["127.0.0.1"])
        os.environ["ASSISTANT_VAULT_PASSPHRASE"] = "pass phrase x"
        try:
            parts = open_session(open_workspace(ws_path), "watched", kind="review", interactive=False,
                                  inline_ask=lambda q: "once")
        finally:
            os.environ.pop("ASSISTANT_VAULT_PASSPHRASE", None)
        try:
            with pytest.raises(ToolError) as ei:
                call(parts, "web_fetch", url=site.url("/"), auth="PEM")
            msg = str(ei.value)
            assert "PEM" in msg and "abcdefghijklmnop" not in msg and "BEGIN" not in msg
            assert site.seen_headers == []
        finally:
            parts.close()


def test_unbinding_a_host_takes_effect_in_a_running_session(tmp_path):
    """The session unlocked the vault at its start; a person who narrows a secret's hosts
    (`vault set NAME --host other`) or removes it meanwhile expects the running chat to stop
    sending it. web_fetch re-reads the vault for each auth use (fail closed if it cannot)."""
    from assistant.vault import Vault

    with Site({"/": (200, {"Content-Type": "text/plain"}, b"ok")}) as site:
        ws_path = make_ws(tmp_path / "ws")
        v = Vault.create(ws_path / "vault.enc", "pass phrase x", opslimit=1, memlimit=8 * 1024 * 1024)
        v.set("TOKEN", "token-value-0123456789", hosts=["127.0.0.1"])
        os.environ["ASSISTANT_VAULT_PASSPHRASE"] = "pass phrase x"
        try:
            parts = open_session(open_workspace(ws_path), "watched", kind="review", interactive=False,
                                  inline_ask=lambda q: "run")
        finally:
            os.environ.pop("ASSISTANT_VAULT_PASSPHRASE", None)
        try:
            assert call(parts, "web_fetch", url=site.url("/"), auth="TOKEN") == "ok"
            v.set("TOKEN", "token-value-0123456789", hosts=["api.example.com"])
            with pytest.raises(ToolError, match="may only be sent to api.example.com"):
                call(parts, "web_fetch", url=site.url("/"), auth="TOKEN")
            v.remove("TOKEN")
            with pytest.raises(ToolError, match="no such secret"):
                call(parts, "web_fetch", url=site.url("/"), auth="TOKEN")
            assert len(site.seen_headers) == 1
        finally:
            parts.close()


def test_auth_is_not_sent_in_clear_text_to_another_machine(tmp_path):
    """A binding to api.example.com let web_fetch send the bearer token over plain http:// to
    it (readable by anyone on the path). Auth goes over https, or over http only to this
    machine (loopback); refused before the gate, nothing leaves."""
    from assistant.vault import Vault

    ws_path = make_ws(tmp_path / "ws")
    v = Vault.create(ws_path / "vault.enc", "pass phrase x", opslimit=1, memlimit=8 * 1024 * 1024)
    v.set("TOKEN", "token-value-0123456789", hosts=["api.example.com"])
    asked = []
    os.environ["ASSISTANT_VAULT_PASSPHRASE"] = "pass phrase x"
    try:
        parts = open_session(open_workspace(ws_path), "watched", kind="review", interactive=False,
                              inline_ask=lambda q: asked.append(q) or None)
    finally:
        os.environ.pop("ASSISTANT_VAULT_PASSPHRASE", None)
    try:
        with pytest.raises(ToolError, match="https"):
            call(parts, "web_fetch", url="http://api.example.com/v1/me", auth="TOKEN")
        assert asked == []
    finally:
        parts.close()


def test_ipv6_spellings_compare_equal_for_bindings_and_targets():
    """[0:0::1] and [::1] are one host: web_fetch's target and a vault binding both use the
    compressed form (as the policy does), so a binding matches whichever way the URL spells it."""
    from assistant.tools.web import net_target
    from assistant.vault import normalize_host

    assert net_target("http://[0:0:0::1]:8080/")[0] == "[::1]:8080"
    assert normalize_host("[0:0::1]") == "[::1]" == normalize_host("[::1]")
    assert normalize_host("[::FFFF:127.0.0.1]:99") == "[::ffff:7f00:1]:99"


def test_a_transcript_that_cannot_be_opened_is_a_clear_session_error(tmp_path):
    """state/transcripts not a folder (a file, or a dangling symlink): open_session raised a raw
    FileExistsError/OSError (a traceback from `assistant chat`) and left the files/ Root open."""
    from assistant.session import SessionError

    ws_path = make_ws(tmp_path / "ws")
    ws = open_workspace(ws_path)
    ws.ensure_state()
    tdir = ws.transcripts_dir
    if tdir.exists():
        for p in tdir.iterdir():
            p.unlink()
        tdir.rmdir()
    tdir.write_text("not a folder")
    with pytest.raises(SessionError, match="transcript"):
        open_session(ws, "watched", kind="review", interactive=False)


def test_transcript_refuses_a_fifo_or_symlink_at_its_path(tmp_path):
    """A FIFO at the transcript's path hung the session start forever (O_WRONLY waits for a
    reader); a symlink is refused (O_NOFOLLOW). Both are clear errors, nothing written elsewhere."""
    import threading

    from assistant.transcript import Transcript

    d = tmp_path / "tr"
    d.mkdir()
    os.mkfifo(d / "s1.jsonl")
    box = {}

    def attempt():
        try:
            Transcript(d, "s1", None)
            box["ok"] = True
        except OSError as exc:
            box["error"] = exc

    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "opening a FIFO as the transcript hung"
    assert "error" in box
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    (d / "s2.jsonl").symlink_to(outside)
    with pytest.raises(OSError):
        Transcript(d, "s2", None)
    assert outside.read_text() == "keep"
