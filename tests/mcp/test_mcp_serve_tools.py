"""`assistant mcp serve`: what a client sees (tools, resources, redacted data) and every refusal
(path attacks, secrets, bad arguments), through the SDK's own client against the real server.
A refusal is a tool error with the writer's own message; the server keeps serving."""

from __future__ import annotations

import os

import pytest
from mcp.shared.exceptions import McpError

from mcp_harness import SECRET, add_vault, audit_lines, entries, make_ws, run_async, serve, text_of

TOOLS = ["memory_read", "memory_list", "memory_search", "memory_write", "memory_remove"]


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
