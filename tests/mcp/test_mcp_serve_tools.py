"""`assistant mcp serve`: what a client sees (tools, resources, redacted data) and every refusal
(path attacks, secrets, bad arguments), through the SDK's own client against the real server.
A refusal is a tool error with the writer's own message; the server keeps serving."""

from __future__ import annotations

import json
import os

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

from mcp_harness import (PIN_NAME, PIN_VALUE, SECRET, RawServer, add_vault, audit_lines, entries, make_ws,
                         pin_server_params, pin_vault_ws, run_async, serve, text_of)

TOOLS = ["memory_read", "memory_list", "memory_search", "memory_write", "memory_edit", "memory_remove"]


def test_lists_tools_and_resources_and_reads_notes_as_data(tmp_path):
    ws = make_ws(tmp_path)
    lina = (ws / "memory" / "people" / "lina.md").read_text()

    async def body():
        async with serve(ws) as s:
            tools = (await s.list_tools()).tools
            assert [t.name for t in tools] == TOOLS
            for t in tools:
                assert t.inputSchema["type"] == "object" and t.inputSchema["additionalProperties"] is False
            resources = {str(r.uri): r for r in (await s.list_resources()).resources}
            assert "memory://catalog" in resources and "memory://notes/people/lina.md" in resources
            read = await s.call_tool("memory_read", {"path": "people/lina.md"})
            text = text_of(read)
            assert not read.isError and "<<<UNTRUSTED DATA " in text and "not instructions" in text
            assert lina.strip() in text and "revision: " in text
            res = await s.read_resource("memory://notes/people/lina.md")
            assert lina.strip() in res.contents[0].text and "<<<END UNTRUSTED DATA " in res.contents[0].text
            catalog = await s.read_resource("memory://catalog")
            assert "people/lina.md" in catalog.contents[0].text
            listed = await s.call_tool("memory_list", {"limit": 2})
            assert not listed.isError and "Notes 0-1 of" in text_of(listed)
            found = await s.call_tool("memory_search", {"query": "Lina"})
            assert not found.isError and "people/lina.md" in text_of(found)

    run_async(body)


def test_secrets_are_redacted_out_and_refused_in_before_any_request(tmp_path):
    ws = make_ws(tmp_path)
    add_vault(ws)
    (ws / "memory" / "bank.md").write_text(f"---\ndescription: bank\n---\nThe PIN is {SECRET}.\n")

    async def body():
        async with serve(ws) as s:
            read = await s.call_tool("memory_read", {"path": "bank.md"})
            assert not read.isError and SECRET not in text_of(read) and "[redacted" in text_of(read)
            res = await s.read_resource("memory://notes/bank.md")
            assert SECRET not in res.contents[0].text
            shape = await s.call_tool("memory_write", {"path": "people/key.md",
                                                       "content": "aws AKIAQ3EGRTZPXK7N2M4B key\n"})
            assert shape.isError and "aws-access-key" in text_of(shape) and "refused" in text_of(shape)
            # a vault value anywhere in a call is refused before the tool runs, never named: not
            # in content, and not in a path (whose "no note at ..." would echo it redacted)
            probe = await s.call_tool("memory_read", {"path": f"{SECRET}.md"})
            out = text_of(probe)
            assert probe.isError and "secret stored in the person's vault" in out
            assert SECRET not in out and "bank" not in out and "redacted" not in out
            assert "takes no more tool calls" not in out
            # the second one ends this session's tool calls (refusals are no oracle to search with)
            r = await s.call_tool("memory_write", {"path": "people/leak.md", "content": f"split {SECRET} here\n"})
            assert r.isError and "secret stored in the person's vault" in text_of(r)
            assert "takes no more tool calls" in text_of(r) and SECRET not in text_of(r)
            after = await s.call_tool("memory_read", {"path": "people/lina.md"})
            assert after.isError and "takes no more tool calls" in text_of(after)
            assert entries(ws) == []                                  # nobody was asked

    run_async(body)
    assert not (ws / "memory" / "people" / "leak.md").exists()
    assert not (ws / "memory" / "people" / "key.md").exists()
    refused = [a for a in audit_lines(ws) if a.get("event") == "secret_refused"]
    assert [a["secrets"] for a in refused] == [["bank"], ["bank"]]          # the person is told which
    assert all(a["requester"] == "mcp:Test Client" for a in refused)
    transcripts = list((ws / "state" / "transcripts").iterdir())
    assert transcripts and all(SECRET not in t.read_text() for t in transcripts)


ESCAPES = ["../grants.json", "../x.md", "/etc/x.md", "a/../../x.md", "people/../../x.md", ".hidden.md",
           "people/.x.md", "a\\..\\x.md", "x\x00y.md", "people//x.md", "./x.md", "people/lina.md/../x.md",
           "\u202eevil.md", "people/x.md/", "/" + "a/" * 40 + "x.md", "a/" * 300 + "x.md"]


def test_path_attacks_are_refused_and_nothing_is_asked(tmp_path):
    ws = make_ws(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("outside\n")
    os.symlink(outside, ws / "memory" / "linked")
    os.symlink(outside / "x.md", ws / "memory" / "leaf.md")

    async def body():
        async with serve(ws) as s:
            for path in ESCAPES:
                for tool, args in (("memory_write", {"path": path, "content": "pwned\n"}),
                                   ("memory_read", {"path": path}), ("memory_remove", {"path": path})):
                    r = await s.call_tool(tool, args)
                    assert r.isError, (tool, path)
                    assert "path refused" in text_of(r) or "not" in text_of(r), (tool, path, text_of(r))
            for tool, args in (("memory_write", {"path": "linked/new.md", "content": "pwned\n"}),
                               ("memory_read", {"path": "linked/x.md"}), ("memory_read", {"path": "leaf.md"}),
                               ("memory_remove", {"path": "linked/x.md"})):
                r = await s.call_tool(tool, args)
                assert r.isError and "symlink" in text_of(r), (tool, text_of(r))
            for uri in ("memory://notes/..%2Fgrants.json", "memory://notes/%2E%2E/%2E%2E/x.md",
                        "memory://notes/linked/x.md", "file:///etc/passwd", "memory://notes/%FF.md"):
                with pytest.raises(McpError):
                    await s.read_resource(uri)
            assert entries(ws) == []
            ok = await s.call_tool("memory_read", {"path": "people/lina.md"})
            assert not ok.isError

    run_async(body)
    assert sorted(p.name for p in outside.iterdir()) == ["x.md"] and (outside / "x.md").read_text() == "outside\n"
    assert not (tmp_path / "x.md").exists() and not (ws / "x.md").exists()


def test_bad_arguments_get_specific_errors_and_the_server_keeps_serving(tmp_path):
    ws = make_ws(tmp_path)
    big = "y" * (300 * 1024)

    async def body():
        async with serve(ws) as s:
            cases = [
                ("nope", {}, "unknown tool 'nope'"),
                ("z" * 10_000, {}, "unknown tool 'zzz"),
                ("memory_read", {"path": "people/lina.md", "k" * 10_000: 1, "a": 2}, "unknown argument"),
                ("memory_read", {"path": 5}, "path must be a string"),
                ("memory_read", {}, "path must be a string"),
                ("memory_read", {"path": "people/lina.md", "extra": 1}, "unknown argument 'extra'"),
                ("memory_list", {"limit": "ten"}, "limit must be an integer"),
                ("memory_list", {"limit": 10_000}, "limit must be between"),
                ("memory_list", {"offset": True}, "offset must be an integer"),
                ("memory_write", {"path": "a.md", "content": ["x"]}, "content must be a string"),
                ("memory_write", {"path": "a.md", "content": big}, "at most 262144 are allowed"),
                ("memory_write", {"path": "a" * 9000 + ".md", "content": "x\n"}, "path is 9003 characters"),
                ("memory_write", {"path": "a" * 5000 + ".md", "content": "x\n"}, "is longer than 255 bytes"),
                ("memory_write", {"path": "a.md", "content": "x\n", "base": {"rev": 1}}, "base must be a string"),
                ("memory_write", {"path": "a.md", "content": "bell \x07\n"}, "control character"),
                ("memory_write", {"path": "a.txt", "content": "x\n"}, "does not end in .md"),
                ("memory_search", {"query": "x" * 10_000}, "query is 10000 characters"),
            ]
            for name, args, expected in cases:
                r = await s.call_tool(name, args)
                assert r.isError, (name, args)
                out = text_of(r)
                assert expected in out, (name, out)
                assert big not in out and "Traceback" not in out and len(out) < 2000, (name[:20], len(out))
            assert entries(ws) == []
            ok = await s.call_tool("memory_read", {"path": "people/lina.md"})
            assert not ok.isError

    run_async(body)
    assert not (ws / "memory" / "a.md").exists()


@pytest.fixture
def pin_ws(tmp_path):
    """A bare workspace whose vault holds PIN_NAME = PIN_VALUE, made through the real CLI."""
    return pin_vault_ws(tmp_path)


# review (mcp): the client's name (and the SDK's stderr log line) was cut before it was redacted, keeping all but one character of a vault value
async def _write_waits(ws, client):
    params = pin_server_params(ws)
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w):
            async with ClientSession(r, w, client_info=types.Implementation(name=client, version="1")) as s:
                await s.initialize()
                with anyio.move_on_after(4):
                    await s.call_tool("memory_write", {"path": "people/cut.md",
                                                       "content": "---\ndescription: cut\n---\nhello\n"})


def test_a_vault_value_in_the_client_name_is_never_kept_in_part(pin_ws):
    """The client's name was cut to 60 characters BEFORE it was redacted, so a vault value
    straddling the cut survived as all but its last character, unredacted, in the audit log, the
    approval request and the transcript (`MemoryServer._start` did client_name(raw), cut to 59
    characters + "…", and only then scanner.redact(): a cut value no longer matches; the
    scanner's own rule is "cut text before redacting it only through redact_prefix"). Real
    server, official SDK client, a waiting write."""
    ws = pin_ws
    # 60 - len(PIN_VALUE) + 1 filler characters: the cut at 59 keeps all of PIN_VALUE but its last character
    client = "A" * (60 - len(PIN_VALUE)) + PIN_VALUE + "Z"
    anyio.run(_write_waits, ws, client)
    partial = PIN_VALUE[:-1]
    leaked = [str(p.relative_to(ws)) for p in (ws / "state").rglob("*")
              if p.is_file() and partial.encode() in p.read_bytes()]
    assert not leaked, f"{len(partial)} of the secret's {len(PIN_VALUE)} characters are kept in {leaked}"


async def _unknown_tool(ws, tool, errlog):
    params = pin_server_params(ws)
    async with stdio_client(params, errlog=errlog) as (r, w):
        async with ClientSession(r, w, client_info=types.Implementation(name="logcut", version="1")) as s:
            await s.initialize()
            await s.call_tool(tool, {})


def test_a_vault_value_in_a_logged_sdk_message_is_never_kept_in_part(pin_ws, tmp_path):
    # The same cut-then-redact in the stderr log formatter (OneLine: first line cut at 300
    # characters, then redacted): the SDK logs "Tool '<name>' not listed, ..." for an unknown
    # tool, and the client keeps stderr in its MCP log file.
    ws = pin_ws
    tool = "A" * (300 - len("Tool '") - (len(PIN_VALUE) - 1)) + PIN_VALUE
    log = tmp_path / "stderr.log"
    with open(log, "w") as errlog:
        anyio.run(_unknown_tool, ws, tool, errlog)
    assert PIN_VALUE[:-1] not in log.read_text(), "all but one character of the secret is in the server's log"


# review (mcp): a vault value as a tool name, argument name or resource URI came back as [redacted:NAME], a silent naming oracle
async def _probe(ws, kind):
    params = pin_server_params(ws)
    texts = []
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w):
            async with ClientSession(r, w, client_info=types.Implementation(name="probe", version="1")) as s:
                await s.initialize()
                for _ in range(3):      # more than the two refusals a session is allowed
                    if kind == "tool":
                        res = await s.call_tool(PIN_VALUE, {})
                        texts.append(res.content[0].text)
                    elif kind == "argument":
                        res = await s.call_tool("memory_read", {PIN_VALUE: 1})
                        texts.append(res.content[0].text)
                    else:
                        try:
                            await s.read_resource(f"memory://notes/{PIN_VALUE}.md")
                        except McpError as exc:
                            texts.append(exc.error.message)
                after = await s.call_tool("memory_list", {})
    return texts, after


@pytest.mark.parametrize("kind", ["tool", "argument", "resource"])
def test_a_vault_value_in_a_name_or_uri_is_no_silent_oracle(pin_ws, kind):
    """The server refuses a call carrying a vault value in its arguments before the tool runs,
    never names the secret to the client, tells the person (audit `secret_refused`), and closes
    the session's tool calls at the second one. But the unknown-tool and unknown-argument checks
    ran BEFORE that check, and resources/read is not a tool call at all: each answered with an
    error that echoed the guess through the redactor, so a guess equal to a vault value came back
    as "[redacted:bank_pin]" (naming the secret), the person was not told, and the session never
    closed. Real server, official SDK client."""
    ws = pin_ws
    texts, after = anyio.run(_probe, ws, kind)
    for text in texts:
        assert PIN_VALUE not in text
        assert PIN_NAME not in text, f"the answer names the vault secret the guess hit: {text!r}"
    log = ws / "state" / "audit.jsonl"
    audit = [json.loads(l) for l in (log.read_text() if log.exists() else "").splitlines() if l.strip()]
    assert any(e.get("event") == "secret_refused" for e in audit), "the person was never told"
    assert after.isError, "the session kept taking tool calls after three calls carrying a vault value"


# review (mcp): a vault value used as a nested argument key was written to the transcript in clear
async def _call_with_a_key(ws):
    params = pin_server_params(ws)
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w):
            async with ClientSession(r, w, client_info=types.Implementation(name="keys", version="1")) as s:
                await s.initialize()
                return await s.call_tool("memory_list", {"offset": {PIN_VALUE: 1}})


def test_a_vault_value_as_a_nested_key_never_reaches_the_transcript(pin_ws):
    """`MemoryServer.call` recorded `tool_call` with the raw arguments before refusing the call for
    the secret it carries; the transcript redacts every string VALUE (`redact_value`) but kept dict
    keys as they were. So memory_list {"offset": {"<vault value>": 1}} was refused ("the call
    carries a secret") while state/transcripts/<session>.jsonl held the value in clear. Real
    server, official SDK client."""
    ws = pin_ws
    res = anyio.run(_call_with_a_key, ws)
    assert res.isError
    leaked = [str(p.relative_to(ws)) for p in (ws / "state").rglob("*")
              if p.is_file() and PIN_VALUE.encode() in p.read_bytes()]
    assert not leaked, f"the vault value is on disk in clear in {leaked}"


# review (mcp): s4 B6: memory_write of a note holding a vault value was refused, memory_remove was not
def test_a_client_cannot_remove_a_note_holding_a_secret_it_saw_redacted(tmp_path):
    ws = make_ws(tmp_path, mode="watched")
    add_vault(ws)
    note = ws / "memory" / "creds.md"
    note.write_text(f"login: {SECRET}\nother line\n")
    with RawServer(ws) as server:
        server.handshake()
        server.call(2, "memory_read", {"path": "creds.md"})
        shown = server.next()["result"]["content"][0]["text"]
        assert "[redacted:bank]" in shown and SECRET not in shown
        base = shown.split("revision: ", 1)[1].split()[0].strip(")\"'")
        server.call(3, "memory_write", {"path": "creds.md", "content": "other line\n", "base": base})
        write = server.next()
        server.call(4, "memory_remove", {"path": "creds.md", "base": base})
        remove = server.next()
    assert write["result"]["isError"] and remove["result"]["isError"], (write, remove)
    assert "holds a secret" in remove["result"]["content"][0]["text"]
    assert note.read_text() == f"login: {SECRET}\nother line\n"
