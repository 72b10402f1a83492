"""web_fetch hardening against a real loopback server: the URL is scanned for secrets before
the gate (issue 10 item 7), hosts are normalised once and that spelling is both checked and
contacted (item 11), and HTML text extraction is bounded in size and time (item 12)."""

from __future__ import annotations

import threading
import time
import urllib.parse

import pytest


from assistant.tools.base import ToolError  # noqa: E402
from assistant.tools.registry import tools_by_name  # noqa: E402
from assistant.tools.web import fetch_target  # noqa: E402
from policy.grants import GrantStore  # noqa: E402

from e2e_support import Site, TextPage as _Page, make_ws  # noqa: E402
from assistant.secrets.vault import Vault  # noqa: E402
from session_support import PASSPHRASE  # noqa: E402
import json
from acceptance_support import SECRET as acc_SECRET, _set_config, script, sub, with_vault
from loopback import http_server

# a fake vault value, assembled at run time
SECRET = "wifi" + "-Lantern-" + "7731" + "-quokka"


@pytest.fixture
def session(tmp_path, sessions):
    made = []

    def make(mode="watched", asked=None, answer="once", vault=True):
        log = asked if asked is not None else []

        def ask(q):
            log.append(q)
            return answer

        made.append(sessions(make_ws(tmp_path / f"s{len(made)}"), mode, inline_ask=ask,
                             vault={"HOME_WIFI": SECRET} if vault else None))
        return made[-1]

    return make


def fetch(parts, url):
    return tools_by_name(parts.tools)["web_fetch"].run({"url": url}, parts.ctx)


def _mixed_percent(s: str) -> str:
    """Every other character percent-encoded: no single encoding of the whole value."""
    return "".join(f"%{ord(c):02X}" if i % 2 else c for i, c in enumerate(s))


# ---- item 7: the whole URL is scanned before the gate


@pytest.mark.parametrize("where", [
    lambda s: "/search?q=" + s,                                   # raw in the query
    lambda s: "/notes/" + s + "/view",                            # raw in the path
    lambda s: "/search?q=" + urllib.parse.quote(s, safe=""),      # percent-encoded
    lambda s: "/p/" + _mixed_percent(s),                          # half percent-encoded, path
    lambda s: "/search?a=1&q=" + _mixed_percent(s),               # half percent-encoded, query
    lambda s: "/search?q=" + urllib.parse.quote(urllib.parse.quote(s, safe=""), safe=""),  # twice
    lambda s: "/search?q=" + s[:9] + "+" + s[9:],                 # split by a form-encoded space
    lambda s: "/x#" + s,                                          # even in the fragment
], ids=["query", "path", "percent", "mixed-path", "mixed-query", "double", "plus-split", "fragment"])
def test_vault_value_in_url_is_refused_before_the_gate(session, where):
    asked: list = []
    with Site({}) as site:
        parts = session(asked=asked)
        url = site.url(where(SECRET))
        with pytest.raises(ToolError) as info:
            fetch(parts, url)
        msg = str(info.value)
        assert "refused" in msg and "secret" in msg
        # the model is not told which secret: neither the value nor its name
        assert SECRET not in msg and "HOME_WIFI" not in msg and "Lantern" not in msg
        assert asked == []                      # nobody was asked
        assert site.seen_headers == []          # nothing left


def test_url_without_a_secret_still_goes_through_the_gate(session):
    asked: list = []
    with Site({"/search?q=lantern": (200, {"Content-Type": "text/plain"}, b"found")}) as site:
        parts = session(asked=asked)
        assert fetch(parts, site.url("/search?q=lantern")) == "found"
        assert len(asked) == 1 and asked[0].target == site.target


def test_secret_in_url_refused_even_with_a_durable_grant(session):
    with Site({}) as site:
        parts = session(mode="unattended")
        GrantStore(parts.ws.grants_path).add("net", site.target)
        with pytest.raises(ToolError, match="refused"):
            fetch(parts, site.url("/?k=" + urllib.parse.quote(SECRET)))
        assert site.seen_headers == []


# ---- item 11: one normalised host, checked and contacted


@pytest.mark.parametrize("host", ["1\u00b27.1", "0x7f.1", "\uff11\uff12\uff17.1", "127\u30021"])
def test_legacy_ipv4_hidden_behind_unicode_is_refused(session, host):
    asked: list = []
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"reached")}) as site:
        parts = session(asked=asked, vault=False)
        with pytest.raises(ToolError, match="legacy spelling"):
            fetch(parts, f"http://{host}:{site.port}/")
        assert asked == [] and site.seen_headers == []


def test_unicode_spelling_of_an_address_is_asked_and_contacted_as_one_host(session):
    """Full-width digits and ideographic dots are asked about as 127.0.0.1:PORT, and the
    request goes to exactly that spelling (the Host header shows what was contacted)."""
    asked: list = []
    wide = "\uff11\uff12\uff17\u3002\uff10\uff0e\uff10\uff61\uff11"   # １２７。０．０｡１
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"reached")}) as site:
        parts = session(asked=asked, vault=False)
        target, url_parts = fetch_target(f"http://{wide}:{site.port}/")
        assert target == site.target and url_parts.netloc == site.target
        assert fetch(parts, f"http://{wide}:{site.port}/") == "reached"
        assert [q.target for q in asked] == [site.target]
        assert site.seen_headers[-1]["Host"] == site.target


# ---- item 12: bounded HTML


def _our_threads() -> set:
    return {t for t in threading.enumerate() if not t.name.startswith(("Thread-", "process_request"))}


@pytest.mark.parametrize("page", [
    b"<a" * 131072,
    b"<a" * 131072 + b">",
    b"<!--" * 60000,
    b"<script>" * 60000,
    b"<p title='" * 60000,
    b"&" * 300000,
], ids=["open-tags", "one-huge-tag", "comments", "scripts", "open-attrs", "ampersands"])
def test_hostile_html_finishes_within_the_timeout_and_leaves_nothing_running(session, page):
    timeout = 3.0
    with Site({"/p": (200, {"Content-Type": "text/html"}, page)}) as site:
        parts = session(mode="unattended", vault=False)
        GrantStore(parts.ws.grants_path).add("net", site.target)
        parts.ws.config = parts.ws.config.updated({"web": {"max_bytes": 1 << 20, "timeout": f"{timeout:g}s"}})
        before = _our_threads()
        box: dict = {}

        def run():
            try:
                box["out"] = fetch(parts, site.url("/p"))
            except ToolError as exc:
                box["err"] = str(exc)

        worker = threading.Thread(target=run, name="hostile-html-fetch", daemon=True)
        t0 = time.monotonic()
        worker.start()
        worker.join(timeout + 2)
        assert not worker.is_alive(), "web_fetch was still extracting text past web.timeout"
        assert time.monotonic() - t0 < timeout + 2
        assert "out" in box or "err" in box
        # nothing of ours keeps running, and the process stops burning CPU
        assert _our_threads() - before == set()
        cpu = time.process_time()
        time.sleep(0.5)
        assert time.process_time() - cpu < 0.25


def test_extraction_stops_at_its_deadline_and_says_so():
    from assistant.tools.web import extract_text

    markup = "<p>word</p>" * 200_000
    page = extract_text(markup, deadline=time.monotonic() - 1)
    assert not page.complete and len(page.text) < len(markup)
    whole = extract_text("<html><head><title>T</title><style>p{}</style></head><body><script>x()</script>"
                         "<h1>Head</h1><p>One &amp; two</p><p>a < b</p></body></html>")
    assert whole.complete and whole.text == "Head\nOne & two\na < b"


def test_secret_in_a_malformed_url_is_refused_as_a_secret_too(session):
    """The secret check comes first: a URL that would fail parsing does not tell the model,
    by a different error, that its guess was not a vault value."""
    parts = session()
    for url in ("http://" + SECRET + ".example.com:99999/", "ftp://example.com/" + SECRET):
        with pytest.raises(ToolError, match="would carry a secret") as info:
            fetch(parts, url)
        assert SECRET not in str(info.value)


@pytest.fixture
def page():
    with http_server(_Page) as srv:
        yield srv.server_address[1]


# acceptance (issue 6: the assistant), written from the words
def test_injected_page_cannot_write_memory_unattended(vault_ws, tmp_path, page):
    _set_config(vault_ws, "approvals", "channel", '"none"')
    (vault_ws / "grants.json").write_text(json.dumps({"version": 1, "grants": [
        {"kind": "net", "target": f"127.0.0.1:{page}", "granted_at": "2026-01-01T00:00:00Z",
         "note": "test"}]}))
    r = sub(vault_ws, "run", "summarise the page", "--model", script(tmp_path, [
        {"tool": "web_fetch", "args": {"url": f"http://127.0.0.1:{page}/"}},
        {"tool": "memory_write", "args": {"path": "admin.md", "content": "admin password is X\n"}},
        {"reply": "done"}]))
    assert not (vault_ws / "memory/admin.md").exists()
    assert r.returncode != 0
    log = (vault_ws / "state/audit.jsonl").read_text()
    assert "admin.md" in log


def test_web_fetch_output_redacted(vault_ws, tmp_path):
    with_vault(vault_ws)

    class H(_Page):
        body = f"the code is {acc_SECRET} ok".encode()

    with http_server(H) as srv:
        port = srv.server_address[1]
        (vault_ws / "grants.json").write_text(json.dumps({"version": 1, "grants": [
            {"kind": "net", "target": f"127.0.0.1:{port}", "granted_at": "2026-01-01T00:00:00Z",
             "note": "test"}]}))
        r = sub(vault_ws, "run", "fetch", "--model", script(tmp_path, [
            {"tool": "web_fetch", "args": {"url": f"http://127.0.0.1:{port}/"}},
            {"reply": "fetched"}]))
    assert r.returncode == 0, r.stderr
    t = "".join(p.read_text() for p in (vault_ws / "state/transcripts").glob("*.jsonl"))
    assert "the code is" in t and "[redacted:bank]" in t
    assert acc_SECRET not in t and acc_SECRET not in r.stdout + r.stderr


@pytest.fixture
def review_session(tmp_path, sessions):
    made = []

    def make(mode="watched", inline_ask=None):
        made.append(sessions(make_ws(tmp_path / f"s{len(made)}"), mode, kind="review", inline_ask=inline_ask))
        return made[-1]

    return make


def call(parts, name, **args):
    return tools_by_name(parts.tools)[name].run(args, parts.ctx)


# review (agent): web_fetch: the ruling must be about the host actually contacted
@pytest.mark.parametrize("host", ["2130706433", "0x7f.1", "127.1", "0177.0.0.1", "0x7f000001", "127.0.1"])
def test_numeric_ipv4_spellings_are_refused_not_ruled_on_under_another_name(review_session, host):
    """`http://2130706433/` is 127.0.0.1 to the resolver (inet_aton), but the gate was asked
    about "2130706433": a person (or a grant) ruled on a name that is not the host contacted.
    Such spellings are refused before the gate with the dotted form to use."""
    asked = []
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"loopback secret page")}) as site:
        parts = review_session(inline_ask=lambda q: asked.append(q.target) or "once")
        with pytest.raises(ToolError, match=r"a\.b\.c\.d"):
            call(parts, "web_fetch", url=f"http://{host}:{site.port}/")
        assert site.seen_headers == [] and asked == []
        # the canonical spelling is asked about under its own name and fetched
        assert call(parts, "web_fetch", url=f"http://127.0.0.1:{site.port}/") == "loopback secret page"
        assert asked == [f"127.0.0.1:{site.port}"]


# review (agent): a hostile-review finding on web_fetch, pinned (it failed before its fix)
def test_the_person_asked_about_a_fetch_sees_its_query_string(review_session):
    """The inline ask (and an out-of-band request) summarised a fetch as scheme://host/path,
    dropping the query: `https://host/?q=<the contents of a private note>` looked like a harmless
    page to the person approving. The query is shown, in full since issue 10 item 3 (a cut query
    hid the part that carried notes); only one-line displays cut it, saying how long it is."""
    asked = []
    with Site({"/p?note=lina+likes+tea": (200, {"Content-Type": "text/plain"}, b"ok")}) as site:
        parts = review_session(inline_ask=lambda q: asked.append(q) or None)
        with pytest.raises(ToolError, match="denied"):
            call(parts, "web_fetch", url=site.url("/p?note=lina+likes+tea"))
        assert site.seen_headers == []
        assert "?note=lina+likes+tea" in asked[0].summary
        long_query = "x=" + "A" * 1500
        with pytest.raises(ToolError, match="denied"):
            call(parts, "web_fetch", url=site.url("/p?" + long_query))
        s = asked[1].summary
        assert "?" + long_query in s


@pytest.mark.parametrize("head, drip, refusal", [
    # the body phase: resp.read(64 KiB) blocks until 64 KiB or EOF, and each byte arriving
    # resets the socket timeout: a server sending a byte every 0.2 s kept a fetch with a 1 s
    # timeout going for as long as it liked
    (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n", b"x",
     "longer than 1s"),
    # the header phase: http.client reads the status line and headers with the socket timeout
    # per receive, so headers sent a byte at a time never hit it
    (b"HTTP/1.1 200 OK\r\nX-Slow: ", b"y", "longer than 1s|could not fetch"),
], ids=["body", "headers"])
def test_web_timeout_holds_against_a_server_that_drips_bytes(review_session, head, drip, refusal):
    """[web] timeout is the whole fetch's budget, in the header phase and in the body's."""
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    stop = threading.Event()

    def serve():
        conn, _ = srv.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(head)
            while not stop.is_set():
                try:
                    conn.sendall(drip)
                except OSError:
                    return
                time.sleep(0.2)

    threading.Thread(target=serve, daemon=True).start()
    try:
        parts = review_session(inline_ask=lambda q: "once")
        parts.ws.config = parts.ws.config.updated({"web": {"max_bytes": 100000, "timeout": "1s"}})
        t0 = time.monotonic()
        with pytest.raises(ToolError, match=refusal):
            call(parts, "web_fetch", url=f"http://127.0.0.1:{port}/")
        assert time.monotonic() - t0 < 2.5
    finally:
        stop.set()
        srv.close()


def test_a_multiline_secret_is_refused_as_auth_and_its_value_never_in_the_error(tmp_path, sessions):
    """http.client refuses a header value with a line break by raising ValueError('Invalid
    header value b"Bearer <the value>"'): the secret's value was in the exception web_fetch
    raised. Refused up front, naming the secret only."""
    value = "-----BEGIN KEY-----\nabcdefghijklmnop\n-----END KEY-----"
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"ok")}) as site:
        ws_path = make_ws(tmp_path / "ws")
        parts = sessions(ws_path, kind="review", inline_ask=lambda q: "once",
                         vault={"PEM": value}, hosts=["127.0.0.1"])
        try:
            with pytest.raises(ToolError) as ei:
                call(parts, "web_fetch", url=site.url("/"), auth="PEM")
            msg = str(ei.value)
            assert "PEM" in msg and "abcdefghijklmnop" not in msg and "BEGIN" not in msg
            assert site.seen_headers == []
        finally:
            parts.close()


def test_unbinding_a_host_takes_effect_in_a_running_session(tmp_path, sessions):
    """The session unlocked the vault at its start; a person who narrows a secret's hosts
    (`vault set NAME --host other`) or removes it meanwhile expects the running chat to stop
    sending it. web_fetch re-reads the vault for each auth use (fail closed if it cannot)."""
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"ok")}) as site:
        ws_path = make_ws(tmp_path / "ws")
        parts = sessions(ws_path, kind="review", inline_ask=lambda q: "run",
                         vault={"TOKEN": "token-value-0123456789"}, hosts=["127.0.0.1"])
        v = Vault.open(ws_path / "vault.enc", PASSPHRASE)
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


def test_auth_is_not_sent_in_clear_text_to_another_machine(tmp_path, sessions):
    """A binding to api.example.com let web_fetch send the bearer token over plain http:// to
    it (readable by anyone on the path). Auth goes over https, or over http only to this
    machine (loopback); refused before the gate, nothing leaves."""
    ws_path = make_ws(tmp_path / "ws")
    asked = []
    parts = sessions(ws_path, kind="review", inline_ask=lambda q: asked.append(q) or None,
                     vault={"TOKEN": "token-value-0123456789"}, hosts=["api.example.com"])
    try:
        with pytest.raises(ToolError, match="https"):
            call(parts, "web_fetch", url="http://api.example.com/v1/me", auth="TOKEN")
        assert asked == []
    finally:
        parts.close()


def test_ipv6_spellings_compare_equal_for_bindings_and_targets():
    """[0:0::1] and [::1] are one host: web_fetch's target and a vault binding both use the
    compressed form (as the policy does), so a binding matches whichever way the URL spells it."""
    from assistant.tools.web import fetch_target
    from assistant.secrets.vault import normalize_host

    assert fetch_target("http://[0:0:0::1]:8080/")[0] == "[::1]:8080"
    assert normalize_host("[0:0::1]") == "[::1]" == normalize_host("[::1]")
    assert normalize_host("[::FFFF:127.0.0.1]:99") == "[::ffff:7f00:1]:99"
