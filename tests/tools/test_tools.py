"""The file and web tools against the real gate, confinement and scanner, on a real workspace."""

from __future__ import annotations

import os
import time

import pytest

from assistant.agent.actions import action_schema
from assistant.tools.base import ToolError
from assistant.tools.registry import all_tools, tools_by_name
from assistant.tools.web import html_to_text, fetch_target
from policy.grants import GrantStore

from e2e_support import Site, make_ws
import json
from acceptance_support import script, sub

SECRET = "sk-live-4f3e2d1c0b9a8f7e6d5c"


@pytest.fixture
def session_factory(tmp_path, sessions):
    made = []

    def make(mode="watched", extra_config="", inline_ask=None, vault_secret=False, edit=None, vault_hosts=None):
        ws_path = make_ws(tmp_path / f"s{len(made)}", extra_config=extra_config)
        if edit:
            cfg = ws_path / "config.toml"
            assert edit[0] in cfg.read_text()
            cfg.write_text(cfg.read_text().replace(*edit))
        made.append(sessions(ws_path, mode, inline_ask=inline_ask,
                             vault={"LIVE_KEY": SECRET} if vault_secret else None, hosts=vault_hosts))
        return made[-1]

    return make


def call(parts, name, **args):
    return tools_by_name(parts.tools)[name].run(args, parts.ctx)


def audit_lines(parts):
    p = parts.ws.audit_path
    return p.read_text().splitlines() if p.exists() else []


# ---- registry


def test_registry_offers_exactly_the_model_tools():
    tools = all_tools()
    names = {t.name for t in tools}
    assert names == {"memory_write", "memory_edit", "memory_read", "memory_list", "memory_search", "file_read",
                     "file_write", "file_list", "web_fetch"}
    kinds = {t.name: t.kind for t in tools}
    assert kinds["memory_write"] == "memory" and kinds["memory_edit"] == "memory" and kinds["file_write"] == "file" and kinds["web_fetch"] == "net"
    assert kinds["file_read"] is None and kinds["file_list"] is None and kinds["memory_read"] is None
    schema = action_schema(tools)         # every parameter schema is enforceable
    assert len(schema["anyOf"]) == len(tools) + 1


# ---- file tools


def test_file_read_list_and_bounds(session_factory):
    parts = session_factory()
    files = parts.ws.files_dir
    (files / "docs").mkdir()
    (files / "docs" / "a.txt").write_text("hello\n")
    (files / "big.txt").write_text("x" * 100_000)
    (files / "bin.dat").write_bytes(b"\x00\x01\x02binary")
    assert call(parts, "file_read", path="docs/a.txt") == "hello\n"
    big = call(parts, "file_read", path="big.txt")
    assert big.startswith("x" * 1000) and "truncated" in big and len(big) < 40_000
    with pytest.raises(ToolError, match="binary"):
        call(parts, "file_read", path="bin.dat")
    with pytest.raises(ToolError, match="no such file"):
        call(parts, "file_read", path="docs/none.txt")
    listing = call(parts, "file_list", path="")
    assert "docs/" in listing and "big.txt  100000 bytes" in listing and "reading-list.md" in listing


@pytest.mark.parametrize("path", ["../memory/index.md", "/etc/passwd", "docs/../../memory/index.md",
                                  "../state/audit.jsonl", "../grants.json", "..", "a\\..\\b"])
def test_file_tools_cannot_name_outside_the_mount(session_factory, path):
    parts = session_factory()
    before = (parts.ws.memory_dir / "index.md").read_bytes()
    for name, args in (("file_read", {"path": path}), ("file_write", {"path": path, "content": "pwned"}),
                       ("file_list", {"path": path})):
        with pytest.raises(ToolError, match="refused"):
            call(parts, name, **args)
    assert (parts.ws.memory_dir / "index.md").read_bytes() == before
    assert audit_lines(parts) == []          # refused before any gate ruling


def test_symlink_in_files_to_memory_is_refused(session_factory):
    parts = session_factory()
    files = parts.ws.files_dir
    os.symlink("../memory/index.md", files / "notes.md")
    os.symlink("../memory", files / "mem")
    before = (parts.ws.memory_dir / "index.md").read_bytes()
    for args in ({"path": "notes.md"}, {"path": "mem/index.md"}):
        with pytest.raises(ToolError, match="refused"):
            call(parts, "file_read", **args)
    with pytest.raises(ToolError, match="refused"):
        call(parts, "file_write", path="mem/index.md", content="pwned")
    # a symlink at the leaf is refused too (issue 5: "a symlink planted in files/ ... is refused"),
    # never written through, and the link itself is left alone
    with pytest.raises(ToolError, match="symbolic link"):
        call(parts, "file_write", path="notes.md", content="mine")
    assert (parts.ws.memory_dir / "index.md").read_bytes() == before
    assert (files / "notes.md").is_symlink()


def test_fifo_in_files_does_not_hang(session_factory):
    parts = session_factory()
    os.mkfifo(parts.ws.files_dir / "pipe")
    t0 = time.monotonic()
    with pytest.raises(ToolError):
        call(parts, "file_read", path="pipe")
    assert time.monotonic() - t0 < 5


def test_file_write_gated_by_policy(session_factory):
    parts = session_factory(mode="watched")
    assert call(parts, "file_write", path="out/draft.txt", content="draft 1\n").startswith("created out/draft.txt")
    assert call(parts, "file_write", path="out/draft.txt", content="draft 2\n").startswith("replaced")
    assert (parts.ws.files_dir / "out" / "draft.txt").read_text() == "draft 2\n"
    assert any('"file"' in line and "out/draft.txt" in line for line in audit_lines(parts))

    tight = session_factory(mode="unattended", edit=('# file_unattended = "allow"', 'file_unattended = "deny"'))
    with pytest.raises(ToolError, match="denied"):
        call(tight, "file_write", path="x.txt", content="no")
    assert not (tight.ws.files_dir / "x.txt").exists()


def test_file_write_refuses_secret_content(session_factory):
    parts = session_factory(vault_secret=True)
    with pytest.raises(ToolError, match="secret") as exc:
        call(parts, "file_write", path="keys.txt", content=f"key = {SECRET}")
    # issue 10 item 5 reverses "name the secret": the model is never told which one
    assert SECRET not in str(exc.value) and "LIVE_KEY" not in str(exc.value)
    assert not (parts.ws.files_dir / "keys.txt").exists()


# ---- web_fetch


@pytest.mark.parametrize("url,target", [
    ("http://Example.COM/a", "example.com"),
    ("https://example.com:443/", "example.com"),
    ("https://example.com:8443/x?y=1", "example.com:8443"),
    ("http://127.0.0.1:8080/", "127.0.0.1:8080"),
    ("http://[::1]:9000/", "[::1]:9000"),
    ("http://bücher.example/", "xn--bcher-kva.example"),
])
def test_fetch_target(url, target):
    assert fetch_target(url)[0] == target


@pytest.mark.parametrize("url,msg", [
    ("file:///etc/passwd", "only http and https"),
    ("ftp://example.com/", "only http and https"),
    ("http://user:pw@example.com/", "credentials in the URL"),
    ("http:///nohost", "no host"),
    ("http://exa mple.com/", "spaces"),
])
def test_fetch_target_refusals(url, msg):
    with pytest.raises(ToolError, match=msg):
        fetch_target(url)


def test_html_to_text_drops_scripts():
    text = html_to_text("<html><head><style>x{}</style><title>T</title></head><body><script>evil()</script>"
                        "<h1>Head</h1><p>One &amp; two</p></body></html>")
    assert "evil" not in text and "x{}" not in text and "Head" in text and "One & two" in text


def test_watched_fetch_asks_inline_and_no_means_nothing_sent(session_factory):
    asked = []
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"hello")}) as site:
        parts = session_factory(mode="watched", inline_ask=lambda q: asked.append(q) or None)
        with pytest.raises(ToolError, match="denied"):
            call(parts, "web_fetch", url=site.url("/"))
        assert site.seen_headers == []                     # nothing left before the gate said yes
        assert asked[0].kind == "net" and asked[0].target == site.target
        yes = session_factory(mode="watched", inline_ask=lambda q: "once")
        assert call(yes, "web_fetch", url=site.url("/")) == "hello"


def test_unattended_fetch_without_grant_is_denied_with_channel_none(session_factory):
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"hello")}) as site:
        parts = session_factory(mode="unattended")
        parts.policy_gate.session.channel = "none"
        with pytest.raises(ToolError, match="denied"):
            call(parts, "web_fetch", url=site.url("/"))
        assert site.seen_headers == []


def _granted(session_factory, site, extra_config=""):
    parts = session_factory(mode="unattended", extra_config=extra_config)
    GrantStore(parts.ws.grants_path).add("net", site.target)
    return parts


def test_fetch_cut_inside_a_vault_secret_shows_no_part_of_it(session_factory):
    """A page cut at max_bytes in the middle of a secret must not show its first half."""
    page = b"z" * 980 + SECRET.encode() + b" and more text after it"
    with Site({"/p": (200, {"Content-Type": "text/plain"}, page)}) as site:
        parts = session_factory(mode="unattended", vault_secret=True)
        GrantStore(parts.ws.grants_path).add("net", site.target)
        parts.ws.config = parts.ws.config.updated({"web": {"max_bytes": 1000, "timeout": "2s"}})
        out = call(parts, "web_fetch", url=site.url("/p"))
        assert "truncated at 1000 bytes" in out
        assert SECRET[:10] not in out


def test_redirect_to_another_host_is_not_followed(session_factory):
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"other site")}) as other:
        with Site({"/go": (302, {"Location": other.url("/")}, b""),
                   "/here": (301, {"Location": "/final"}, b""),
                   "/final": (200, {"Content-Type": "text/plain"}, b"same host, followed")}) as site:
            parts = _granted(session_factory, site)
            with pytest.raises(ToolError, match=f"redirected to http://{other.target}: not followed"):
                call(parts, "web_fetch", url=site.url("/go"))
            assert other.seen_headers == []
            assert call(parts, "web_fetch", url=site.url("/here")) == "same host, followed"


def test_fetch_caps_type_size_and_time(session_factory):
    def slow(handler):
        time.sleep(2.5)
        return b"late"

    pages = {
        "/img": (200, {"Content-Type": "image/png"}, b"\x89PNG...."),
        "/big": (200, {"Content-Type": "text/plain"}, b"y" * 5000),
        "/slow": (200, {"Content-Type": "text/plain"}, slow),
        "/404": (404, {"Content-Type": "text/plain"}, b"gone"),
    }
    with Site(pages) as site:
        parts = _granted(session_factory, site, extra_config="")
        parts.ws.config = parts.ws.config.updated({"web": {"max_bytes": 1000, "timeout": "0.5s"}})
        with pytest.raises(ToolError, match="only text"):
            call(parts, "web_fetch", url=site.url("/img"))
        big = call(parts, "web_fetch", url=site.url("/big"))
        # cut at max_bytes; the last characters before the cut are masked (a secret may be cut there)
        assert big.startswith("y" * 600) and "truncated at 1000 bytes" in big and "y" * 1001 not in big
        t0 = time.monotonic()
        with pytest.raises(ToolError, match="could not fetch|took longer than 0.5s"):
            call(parts, "web_fetch", url=site.url("/slow"))
        assert time.monotonic() - t0 < 2
        with pytest.raises(ToolError, match="HTTP 404"):
            call(parts, "web_fetch", url=site.url("/404"))


def test_fetch_response_redacted_and_auth_by_name(session_factory):
    def echo(handler):
        return f"token seen: {handler.headers.get('Authorization')}".encode()

    with Site({"/": (200, {"Content-Type": "text/plain"}, echo)}) as site:
        parts = session_factory(mode="unattended", vault_secret=True, vault_hosts=["127.0.0.1"])
        GrantStore(parts.ws.grants_path).add("net", site.target)
        out = call(parts, "web_fetch", url=site.url("/"), auth="LIVE_KEY")
        assert site.seen_headers[-1]["Authorization"] == f"Bearer {SECRET}"
        assert SECRET not in out and "[redacted:LIVE_KEY]" in out
        with pytest.raises(ToolError, match="no such secret"):
            call(parts, "web_fetch", url=site.url("/"), auth="NOPE")
        with pytest.raises(ToolError, match="NAME of a vault secret"):
            call(parts, "web_fetch", url=site.url("/"), auth="Bearer xyz")


def test_fetch_auth_only_to_a_host_the_secret_is_bound_to(session_factory):
    """A durable grant for a host is not permission to send it any vault secret: web_fetch
    sends auth=NAME only to a host NAME is bound to (`vault set NAME --host HOST`), and a
    secret bound to no host is never sent; refused before the gate, nothing leaves."""
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"ok")}) as site:
        # bound to another host: refused, no request made
        parts = session_factory(mode="unattended", vault_secret=True, vault_hosts=["api.example.com"])
        GrantStore(parts.ws.grants_path).add("net", site.target)
        with pytest.raises(ToolError, match=r"may only be sent to api\.example\.com, not to 127\.0\.0\.1") as ei:
            call(parts, "web_fetch", url=site.url("/"), auth="LIVE_KEY")
        assert "--host" in str(ei.value) and SECRET not in str(ei.value)
        assert site.seen_headers == []
        # bound to no host at all (an entry as older vaults stored it): refused with the fix
        parts = session_factory(mode="unattended", vault_secret=True)
        GrantStore(parts.ws.grants_path).add("net", site.target)
        with pytest.raises(ToolError, match=r"not bound to any host.*assistant vault set LIVE_KEY --host 127\.0\.0\.1"):
            call(parts, "web_fetch", url=site.url("/"), auth="LIVE_KEY")
        assert site.seen_headers == []
        # bound to the host on another port: refused; on this port or any port: sent
        parts = session_factory(mode="unattended", vault_secret=True, vault_hosts=["127.0.0.1:1"])
        GrantStore(parts.ws.grants_path).add("net", site.target)
        with pytest.raises(ToolError, match="may only be sent to 127.0.0.1:1"):
            call(parts, "web_fetch", url=site.url("/"), auth="LIVE_KEY")
        assert site.seen_headers == []
        parts = session_factory(mode="unattended", vault_secret=True, vault_hosts=[site.target])
        GrantStore(parts.ws.grants_path).add("net", site.target)
        assert call(parts, "web_fetch", url=site.url("/"), auth="LIVE_KEY") == "ok"
        assert site.seen_headers[-1]["Authorization"] == f"Bearer {SECRET}"
        # without auth the fetch needs no binding
        assert call(parts, "web_fetch", url=site.url("/")) == "ok"
        assert "Authorization" not in site.seen_headers[-1]


# acceptance (issue 6: the assistant), written from the words
def test_file_tools_cannot_reach_memory(vault_ws, tmp_path):
    (vault_ws / "files" / "sneak.md").symlink_to("../memory/people/lina.md")
    before = (vault_ws / "memory/people/lina.md").read_bytes()
    steps = [
        {"tool": "file_write", "args": {"path": "../memory/x.md", "content": "evil\n"}},
        {"tool": "file_write", "args": {"path": "sneak.md", "content": "evil\n"}},
        {"tool": "file_read", "args": {"path": "sneak.md"}},
        {"tool": "file_read", "args": {"path": "../memory/people/lina.md"}},
        {"tool": "file_list", "args": {"path": ".."}},
        {"tool": "file_write", "args": {"path": "ok.txt", "content": "fine\n"}},
        {"reply": "done"},
    ]
    r = sub(vault_ws, "chat", "--model", script(tmp_path, steps), input="go\n/quit\n")
    assert r.returncode == 0, r.stderr
    assert not (vault_ws / "memory/x.md").exists()
    assert (vault_ws / "memory/people/lina.md").read_bytes() == before
    assert (vault_ws / "files/sneak.md").is_symlink()
    assert (vault_ws / "files/ok.txt").read_text() == "fine\n"
    t = next((vault_ws / "state/transcripts").glob("*.jsonl")).read_text()
    assert before.decode()[:40] not in t
    # issue 5: "a symlink planted in files/ pointing at ../memory/x.md is refused"
    events = [json.loads(l) for l in t.splitlines() if l.strip()]
    writes = [e for e in events if e.get("event") == "tool_result" and e.get("tool") == "file_write"]
    reads = [e for e in events if e.get("event") == "tool_result" and e.get("tool") == "file_read"]
    assert [w["ok"] for w in writes] == [False, False, True], writes
    assert [r["ok"] for r in reads] == [False, False], reads
