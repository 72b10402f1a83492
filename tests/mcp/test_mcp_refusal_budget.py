"""Issue 23 item 4 through MCP: refusals for a vault value are counted toward the workspace's
budget across MCP sessions too; once it is spent, memory_write and memory_remove do not start
(a clear error naming `assistant approvals ack`, nothing written, no request filed) while reads go
on; `approvals ack` lets writes through again. Real server, the SDK's own client."""

from __future__ import annotations

import anyio

from mcp_harness import SECRET, add_vault, audit_lines, cli, entries, make_ws, run_async, serve, text_of


def test_a_spent_refusal_budget_refuses_mcp_writes_until_approvals_ack(tmp_path):
    ws = make_ws(tmp_path, mode="watched")     # watched: an allowed write lands without a request
    add_vault(ws)
    errlog = tmp_path / "serve.log"

    async def probe(times: int) -> None:
        async with serve(ws) as s:
            for _ in range(times):
                r = await s.call_tool("memory_search", {"query": f"pin {SECRET}"})
                assert r.isError and SECRET not in text_of(r)

    async def write(path: str):
        async with serve(ws, errlog=errlog) as s:
            wrote = await s.call_tool("memory_write", {"path": path, "content": "plain text\n"})
            removed = await s.call_tool("memory_remove", {"path": "people/lina.md"})
            read = await s.call_tool("memory_read", {"path": "people/lina.md"})
            return wrote, removed, read

    run_async(probe, 2)          # the second ends that session's calls
    run_async(probe, 1)          # a new session: the third refusal within 24 hours spends the budget
    assert len([a for a in audit_lines(ws) if a.get("event") == "secret_refused"]) == 3
    wrote, removed, read = run_async(write, "after.md")
    for r in (wrote, removed):
        assert r.isError and "did not start" in text_of(r) and "assistant approvals ack" in text_of(r), text_of(r)
    assert not read.isError                                  # reads go on
    assert not (ws / "memory" / "after.md").exists() and (ws / "memory" / "people" / "lina.md").exists()
    assert entries(ws) == []                                 # nothing was put to the person either
    assert "writes and removals are refused" in errlog.read_text()   # said once at start, on stderr
    ack = cli(ws, "approvals", "ack")
    assert ack.returncode == 0 and "lifted the block" in ack.stdout, ack.stdout + ack.stderr
    wrote, _removed, _read = run_async(write, "after.md")
    assert not wrote.isError, text_of(wrote)
    assert (ws / "memory" / "after.md").read_text() == "plain text\n"
