"""The approval page over real HTTP (`assistant approvals serve` on 127.0.0.1, port 0): every
way in without the secret, or with a spent, altered, foreign or expired one, is refused with a
clear page and an audit line, and nothing is written (no answer file, no grant)."""

from __future__ import annotations

import json
import re
import socket
import time

import pytest

from web_approvals_support import (Serve, answer_file, audit_events, file_request, forms, links, make_ws,
                                   set_approvals, web_refusals)

CONTENT = "Ana likes <b>tea</b> & \"quotes\"\n\u202etxt.exe\x1b[2J\n"


@pytest.fixture
def served(tmp_path):
    ws = make_ws(tmp_path)
    server = Serve(ws)
    try:
        yield ws, server
    finally:
        server.stop()


def _grants(ws):
    p = ws / "grants.json"
    return p.read_bytes() if p.exists() else None



def _file_request_and_its_link(ws, server):
    """A file request for CONTENT: (the request, grants.json's bytes before, its approve link's path)."""
    req = file_request(ws, CONTENT)
    return req, _grants(ws), _path(links(ws, req, server.base)["approve_url"])


def _path(url: str) -> str:
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def test_no_token_no_page(served):
    ws, server = served
    req = file_request(ws, CONTENT)
    grants = _grants(ws)
    with server.client() as c:
        for path in ("/", f"/r/{req.id}", f"/r/{req.id}/show", f"/r/{req.id}/approve"):
            r = c.get(path)
            assert r.status_code == 401, path
            assert "Not signed in" in r.text and "tea" not in r.text      # nothing of the request shown
        r = c.post(f"/r/{req.id}/approve", data={"remember": "exact", "sha256": req.sha256})
        assert r.status_code == 401
        # without a secret nothing tells whether a request exists: an unknown id looks the same
        assert c.get("/r/ffffffffffff/show").status_code == 401
        sig = links(ws, req, server.base)["show_url"].split("?", 1)[1]
        unknown = c.get(f"/r/ffffffffffff/show?{sig}")
        assert unknown.status_code == 403 and "Invalid link" in unknown.text
    assert not answer_file(ws, req.id).exists() and _grants(ws) == grants
    assert any(e["why"] == "no link and no login" and e["request"] == req.id for e in web_refusals(ws))


def test_wrong_login_token_is_refused_and_gives_no_session(served):
    ws, server = served
    req = file_request(ws, CONTENT)
    with server.client() as c:
        wrong = server.token[:-1] + ("A" if server.token[-1] != "A" else "B")
        r = c.get("/login", params={"token": wrong})
        assert r.status_code == 403 and "Wrong login link" in r.text
        assert "assistant_session" not in r.headers.get("set-cookie", "")
        assert c.get("/").status_code == 401
        assert c.get("/login").status_code == 403
    assert not answer_file(ws, req.id).exists()
    whys = [e["why"] for e in web_refusals(ws)]
    assert "wrong login token" in whys and "login without a token" in whys


def test_login_then_answer_with_csrf(served):
    ws, server = served
    req = file_request(ws, CONTENT)
    with server.client() as c:
        r = c.get("/login", params={"token": server.token})
        assert r.status_code == 303
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
        home = c.get("/")
        assert home.status_code == 200 and req.id in home.text
        page = c.get(f"/r/{req.id}")
        assert page.status_code == 200
        action, fields = forms(page.text)["approve"]
        assert "sig" not in fields          # a logged-in form needs no link signature
        r = c.post(action, data={**fields, "remember": "once"})
        assert r.status_code == 200 and "Approved" in r.text, r.text
    ans = json.loads(answer_file(ws, req.id).read_text())
    assert ans["verdict"] == "approved" and ans["by"] == "web" and ans["sha256"] == req.sha256
    [line] = [e for e in audit_events(ws) if e.get("event") == "approval"]
    assert line["by"] == "web" and line["via"] == "login" and line["request"] == req.id
    import subprocess

    from web_approvals_support import PY, env

    shown = subprocess.run([PY, "-m", "assistant", "-w", str(ws), "approvals", "show", req.id],
                           capture_output=True, text=True, env=env(), timeout=60)
    assert "approved by a person (approval page)" in shown.stdout


def test_hostile_content_is_escaped(served):
    ws, server = served
    req = file_request(ws, CONTENT, current="<script>alert(1)</script>\n")
    with server.client() as c:
        page = c.get(_path(links(ws, req, server.base)["show_url"])).text
    assert "<b>tea</b>" not in page and "&lt;b&gt;tea&lt;/b&gt;" in page
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\u202e" not in page and "\\u202e" in page      # the bidi override is shown, not obeyed
    assert "\x1b" not in page and "\\x1b[2J" in page


def test_tampered_signature_and_expiry_are_refused(served):
    ws, server = served
    req = file_request(ws, CONTENT)
    good = _path(links(ws, req, server.base)["approve_url"])
    sig = good.split("sig=", 1)[1]
    bad_sig = good.replace(sig, ("A" if sig[0] != "A" else "B") + sig[1:])
    exp = good.split("exp=", 1)[1].split("&", 1)[0]
    bad_exp = good.replace(f"exp={exp}", f"exp={int(exp) + 3600}")
    with server.client() as c:
        ok, f = c.get(good), forms(c.get(good).text)
        assert ok.status_code == 200
        for url in (bad_sig, bad_exp, good.replace("/approve?", "/deny?"), good.split("&sig=")[0]):
            r = c.get(url)
            assert r.status_code == 403, url
            assert "Nothing was done" in r.text or "missing its expiry" in r.text
            assert "tea" not in r.text
        # and a POST carrying a tampered signature, with a good CSRF token
        action, fields = f["approve"]
        r = c.post(action, data={**fields, "sig": bad_sig.split("sig=")[1], "remember": "once"})
        assert r.status_code == 403 and "Invalid link" in r.text
    assert not answer_file(ws, req.id).exists()
    whys = [e["why"] for e in web_refusals(ws)]
    assert whys.count("bad link signature") >= 4 and "incomplete link" in whys


def test_link_for_another_request_is_refused_naming_it(served):
    ws, server = served
    a = file_request(ws, "note A\n", target="people/a.md")
    b = file_request(ws, "note B\n", target="people/b.md")
    a_link = _path(links(ws, a, server.base)["approve_url"])
    moved = a_link.replace(f"/r/{a.id}/", f"/r/{b.id}/")
    with server.client() as c:
        r = c.get(moved)
        assert r.status_code == 403 and f"made for request {a.id}, not {b.id}" in r.text
        action, fields = forms(c.get(a_link).text)["approve"]
        r = c.post(action.replace(a.id, b.id), data={**fields, "sha256": b.sha256, "remember": "once"})
        assert r.status_code == 403
    assert not answer_file(ws, a.id).exists() and not answer_file(ws, b.id).exists()
    assert any(e["why"] == f"link for another request ({a.id})" and e["request"] == b.id for e in web_refusals(ws))


def test_a_link_answers_once_and_a_replay_is_refused(served):
    ws, server = served
    req = file_request(ws, CONTENT)
    with server.client() as c:
        page = c.get(_path(links(ws, req, server.base)["approve_url"]))
        action, fields = forms(page.text)["approve"]
        assert "deny" not in forms(page.text)           # the approve link offers approving
        first = c.post(action, data={**fields, "remember": "exact"})
        assert first.status_code == 200 and "Grant recorded" in first.text
        written = answer_file(ws, req.id).read_bytes()
        grants = _grants(ws)
        again = c.post(action, data={**fields, "remember": "dir"})
        assert again.status_code == 409 and "already" in again.text
        # the deny link of the same request is spent too, and so is a GET of the used link
        deny_page = c.get(_path(links(ws, req, server.base)["deny_url"]))
        assert deny_page.status_code == 409
    assert answer_file(ws, req.id).read_bytes() == written and _grants(ws) == grants
    assert json.loads(written)["remember"] == "exact"
    assert sum(1 for e in web_refusals(ws) if e["why"] == "already answered (link replayed)") >= 2


def test_expired_request_is_refused(tmp_path):
    ws = make_ws(tmp_path)
    req = file_request(ws, CONTENT, timeout=1.0)
    with Serve(ws) as server, server.client() as c:
        url = _path(links(ws, req, server.base)["approve_url"])
        time.sleep(max(0.0, req.expires - time.time()) + 0.2)
        r = c.get(url)
        assert r.status_code == 410 and "Expired" in r.text
        # a form from a live page of another request gives a CSRF cookie and token; still refused
        other = file_request(ws, "x\n", target="people/x.md")
        action, fields = forms(c.get(_path(links(ws, other, server.base)["approve_url"])).text)["approve"]
        exp, sig = url.split("exp=")[1].split("&sig=")
        r = c.post(f"/r/{req.id}/approve", data={"csrf": fields["csrf"], "exp": exp, "sig": sig,
                                                  "sha256": req.sha256, "remember": "once"})
        assert r.status_code == 410
    assert not answer_file(ws, req.id).exists()
    assert any(e["why"] == "request expired" and e["request"] == req.id for e in web_refusals(ws))


def test_get_never_changes_anything_nor_uses_the_link(served):
    ws, server = served
    req, grants, approve = _file_request_and_its_link(ws, server)
    with server.client() as c:
        action, fields = forms(c.get(approve).text)["approve"]
        # every answer field in a GET: to the link, the form's action, and logged in
        from urllib.parse import urlencode

        extra = urlencode({"remember": "exact", "csrf": fields["csrf"], "sha256": fields["sha256"]})
        for url in (f"{approve}&{extra}", f"{action}?{urlencode({**fields, 'remember': 'exact'})}"):
            r = c.get(url)
            assert r.status_code == 200, url
        c.get("/login", params={"token": server.token})
        assert c.get(f"/r/{req.id}", params={**fields, "remember": "dir"}).status_code == 200
        assert c.get(f"/r/{req.id}/approve", params={**fields, "remember": "dir"}).status_code == 200
        assert c.request("PUT", action, data={**fields, "remember": "once"}).status_code == 405
        assert not answer_file(ws, req.id).exists() and _grants(ws) == grants
        # the link still works: GETs did not use it up (its page again: login rotated the CSRF nonce)
        action, fields = forms(c.get(approve).text)["approve"]
        r = c.post(action, data={**fields, "remember": "once"})
        assert r.status_code == 200
    assert json.loads(answer_file(ws, req.id).read_text())["remember"] == "once"


def test_post_without_csrf_is_refused(served):
    ws, server = served
    req, grants, approve = _file_request_and_its_link(ws, server)
    with server.client() as c:
        action, fields = forms(c.get(approve).text)["approve"]
        no_token = {k: v for k, v in fields.items() if k != "csrf"}
        assert c.post(action, data={**no_token, "remember": "once"}).status_code == 403
        # the token without its cookie (another browser), and a token for another cookie
        with server.client() as other:
            assert other.post(action, data={**fields, "remember": "once"}).status_code == 403
            other.get(approve)          # this browser's own cookie, someone else's token
            assert other.post(action, data={**fields, "remember": "once"}).status_code == 403
        # logged in: a session cookie is not enough without the form's token
        c.get("/login", params={"token": server.token})
        r = c.post(action, data={"sha256": req.sha256, "remember": "once"})
        assert r.status_code == 403 and "form token" in r.text
        # not a form, a body too large, a field twice
        assert c.post(action, json={"remember": "once"}).status_code == 415
        assert c.post(action, content=b"a=" + b"x" * 20000,
                      headers={"content-type": "application/x-www-form-urlencoded"}).status_code == 413
        assert c.post(action, content=f"csrf={fields['csrf']}&remember=once&remember=dir".encode(),
                      headers={"content-type": "application/x-www-form-urlencoded"}).status_code == 400
    assert not answer_file(ws, req.id).exists() and _grants(ws) == grants
    assert sum(1 for e in web_refusals(ws) if e["why"] == "missing or wrong CSRF token") >= 4


def test_other_host_names_are_refused(served):
    ws, server = served
    req = file_request(ws, CONTENT)
    with server.client() as c:
        r = c.get(_path(links(ws, req, server.base)["show_url"]), headers={"host": "attacker.example"})
        assert r.status_code == 400 and "tea" not in r.text


def test_security_headers_and_no_script(served):
    ws, server = served
    req = file_request(ws, CONTENT)
    with server.client() as c:
        r = c.get(_path(links(ws, req, server.base)["show_url"]))
    assert "default-src 'none'" in r.headers["content-security-policy"]
    assert r.headers["referrer-policy"] == "no-referrer" and r.headers["cache-control"] == "no-store"
    assert "<script" not in r.text.lower()
    assert 'name="viewport"' in r.text
    cookie = r.headers["set-cookie"]
    assert "assistant_csrf=" in cookie and "HttpOnly" in cookie and "samesite=strict" in cookie.lower()


def test_remote_listen_needs_allow_remote(tmp_path):
    import subprocess

    from web_approvals_support import PY, env

    ws = make_ws(tmp_path)
    r = subprocess.run([PY, "-m", "assistant", "-w", str(ws), "approvals", "serve", "--listen", "0.0.0.0:0"],
                       capture_output=True, text=True, env=env(), timeout=60)
    assert r.returncode != 0 and "--allow-remote" in r.stderr
    r = subprocess.run([PY, "-m", "assistant", "-w", str(ws), "approvals", "serve", "--listen", "example.com:80"],
                       capture_output=True, text=True, env=env(), timeout=60)
    assert r.returncode != 0 and "IP address" in r.stderr


def test_link_key_is_private(served):
    import stat

    ws, server = served
    file_request(ws, CONTENT)
    st = (ws / "state" / "approval_links.key").stat()
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_size == 32


def test_every_connection_is_bounded(tmp_path):
    """A client that never finishes its headers, or never sends the body it announced, is cut
    off: nothing waits for it without end."""
    ws = make_ws(tmp_path)
    req = file_request(ws, CONTENT)
    with Serve(ws, "--connection-lifetime", "1") as server:
        host, port = server.base.split("//")[1].split(":")
        for opening in (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                        f"POST /r/{req.id}/approve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nremember=".encode()):
            s = socket.create_connection((host, int(port)), timeout=10)
            try:
                s.sendall(opening)
                started = time.monotonic()
                data = b""
                while True:
                    chunk = s.recv(4096)          # raises socket.timeout after 10 s: a failure
                    if not chunk:
                        break
                    data += chunk
                assert time.monotonic() - started < 8
            finally:
                s.close()
        big = socket.create_connection((host, int(port)), timeout=10)
        try:
            big.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n")
            assert big.recv(4096).split(b" ")[1] in (b"400", b"431")
        finally:
            big.close()
    assert not answer_file(ws, req.id).exists()


# review (web approvals): deleted/added lines starting with --/++ were styled as the diff's file header
CURRENT = "# Ana\n---\n-- keep: Ana is allergic to penicillin\nlikes tea\n"
PROPOSED = "# Ana\n++ b/people/ana.md\nlikes tea\n"


def test_deleted_and_added_lines_are_styled_as_such(tmp_path):
    """A deleted or added line is styled as a diff file header.

    assistant.web.pages.diff_html classifies each line by its prefix without
    knowing where the diff's header ends: any line starting with "---" or "+++" gets the grey
    `meta` style of the file header. So a deleted note line that starts with "--" (a Markdown rule
    "---" or a "-- signed" line: "----", "--- signed") and an added line that starts with "++" are
    shown grey like "--- a/people/ana.md", not red/green as a deletion/addition; an added line
    "++ b/people/ana.md" even renders exactly like the real header. The person misreads what the
    write removes or adds.
    Real `assistant approvals serve` on loopback; the request is filed as the gate files it."""
    ws = make_ws(tmp_path)
    req = file_request(ws, PROPOSED, current=CURRENT)
    show = links(ws, req, "http://x")["show_url"].replace("http://x", "")
    with Serve(ws) as server, server.client() as c:
        page = c.get(show)
    assert page.status_code == 200
    spans = re.findall(r'<span class="([^"]*)">(.*?)</span>', page.text.split('<pre class="diff">', 1)[1])
    by_text = {text: cls for cls, text in spans}
    assert by_text.get("----") == "del", by_text                   # the deleted "---" line
    assert by_text.get("--- keep: Ana is allergic to penicillin") == "del", by_text
    assert by_text.get("+++ b/people/ana.md") is not None
    added = [cls for cls, text in spans if text == "+++ b/people/ana.md"]
    # the real file header is said in words now (issue 23 item 19): the added line alone keeps the text
    assert added == ["add"], f"the added line looks like the file header: {spans}"
    assert spans[0][0] == "meta" and spans[0][1].startswith("The change to this note")


# review (web approvals): an upper-case HTTPS:// web_url dropped the Secure flag from the session cookie
def test_uppercase_https_web_url_still_gives_secure_cookies(tmp_path):
    """`HTTPS://` in web_url drops the Secure cookie flag.

    Config accepts [approvals] web_url by urlsplit (whose scheme is lower-cased,
    so "HTTPS://host" is valid https), but `serve` decides Secure cookies with
    `web_url.startswith("https://")`. With web_url = "HTTPS://assistant.example.net" (a TLS proxy
    in front, as the docs advise) the session cookie is set without Secure, so a browser sends
    the 12-hour session on any plain-http request to that host (e.g. an http:// link an attacker
    on the path injects).
    Real `assistant approvals serve` on loopback."""
    ws = make_ws(tmp_path)
    set_approvals(ws, 'web_url = "HTTPS://assistant.example.net"\nnotify = []')
    with Serve(ws) as server, server.client() as c:
        r = c.get(f"/login?token={server.token}", headers={"Host": "assistant.example.net"})
    assert r.status_code == 303
    cookie = r.headers.get("set-cookie", "")
    assert "assistant_session=" in cookie
    assert "secure" in cookie.lower(), f"web_url is https (upper case) but the session cookie is not Secure: {cookie}"


# review (web approvals): an answer's reason reached the Answered / Already answered pages without terminal escaping
REASON = "ok \u202edevorppa\u202c \x9b2J\r\rX"


def test_reason_is_escaped_on_every_page(tmp_path):
    """An answer's reason reaches the page unescaped for the eye.

    assistant.web.pages promises that every text from a request, an answer's
    reason included, is first made visible like the terminal shows it (control, bidi and
    zero-width characters as \\u escapes) and then HTML-escaped. The "Already answered" page (any
    GET of a link after the answer) and the "Answered" page put the reason through
    pages.message_page, which only HTML-escapes: a U+202E RIGHT-TO-LEFT OVERRIDE, C1 controls and
    carriage returns in a reason (typed by whoever held a deny link) reach the browser raw and
    reorder what the person reads ("approved" shown for "devorppa").
    Real `assistant approvals serve` on loopback."""
    ws = make_ws(tmp_path)
    req = file_request(ws, "Ana likes tea.\n")
    urls = {k: v.replace("http://x", "") for k, v in links(ws, req, "http://x").items()}
    with Serve(ws) as server, server.client() as c:
        action, fields = forms(c.get(urls["deny_url"]).text)["deny"]
        done = c.post(action, data={**fields, "reason": REASON})
        assert done.status_code == 200
        again = c.get(urls["show_url"])
        assert again.status_code == 409
    for page in (done.text, again.text):
        assert "\u202e" not in page and "\x9b" not in page and "\r" not in page, \
            "a bidi override / C1 control / CR from the reason reached the page raw"


# review (web approvals): a wildcard --listen turned the Host check off (DNS rebinding served)
def test_wildcard_bind_still_refuses_a_foreign_host_name(tmp_path):
    """With a wildcard --listen the Host check is off.

    docs/usage.md says "The server answers only to its own host names (loopback,
    the bound address, web_url's host)", and assistant.web.server says a DNS-rebinding page gets a
    400. But allowed_hosts() returns None (any host) for `--listen 0.0.0.0:PORT --allow-remote`,
    exactly the exposed case, so a page at rebind.attacker.example that resolves to this machine is
    answered as if it were the approval page itself (here: a full login).
    Real `assistant approvals serve` (bound to 0.0.0.0, reached over loopback only)."""
    ws = make_ws(tmp_path)
    with Serve(ws, "--allow-remote", listen="0.0.0.0:0") as server:
        port = int(server.base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(f"GET /login?token={server.token} HTTP/1.1\r\nHost: rebind.attacker.example:{port}\r\n"
                      "Connection: close\r\n\r\n".encode())
            status = s.recv(200).split(b"\r\n", 1)[0]
    assert status.startswith(b"HTTP/1.1 400"), f"a foreign Host name was served: {status!r}"
