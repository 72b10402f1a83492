"""Issue 24 items 1 and 6 over MCP: memory_edit, the same tool as the model's (one schema, the same
parsing and computation), through the SDK's own client against the real server; and the tool
annotations clients show (readOnlyHint, destructiveHint, idempotentHint)."""

from __future__ import annotations

import anyio

from mcp_harness import (SECRET, add_vault, cli_async, history_rows, make_ws, run_async, serve, text_of,
                         wait_pending)

NOTE = ("---\ndescription: garden plans\n---\n# Garden\nThe shed code is " + SECRET + ".\n\n"
        "## Plans\n- plant tomatoes\n- fix the fence\n\n## Done\n- dug the beds\n")


def _note(ws) -> str:
    return (ws / "memory" / "garden.md").read_text()


def _revision(text: str) -> str:
    return next(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("revision: "))


def test_tools_carry_annotations_clients_show(tmp_path):
    ws = make_ws(tmp_path)

    async def body():
        async with serve(ws) as s:
            return {t.name: t.annotations for t in (await s.list_tools()).tools}

    hints = run_async(body)
    for name in ("memory_read", "memory_list", "memory_search"):
        assert hints[name] is not None and hints[name].readOnlyHint is True, name
        assert not hints[name].destructiveHint, name
    for name in ("memory_write", "memory_edit", "memory_remove"):
        assert hints[name].readOnlyHint is False and hints[name].destructiveHint is True, name
        assert hints[name].idempotentHint is True, name        # bound to a revision: again is refused
    assert all(h.openWorldHint is False for h in hints.values())


def test_edit_ops_and_refusals_over_mcp_keep_the_vault_value(tmp_path):
    ws = make_ws(tmp_path, mode="watched")
    add_vault(ws)
    (ws / "memory" / "garden.md").write_text(NOTE)

    async def body():
        async with serve(ws) as s:
            async def rev() -> str:
                read = await s.call_tool("memory_read", {"path": "garden.md"})
                assert "[redacted:bank]" in text_of(read) and SECRET not in text_of(read)
                return _revision(text_of(read))

            steps = [
                ({"op": "append", "text": "- water daily"}, "- water daily\n"),
                ({"op": "replace", "old": "- fix the fence", "text": "- fix the gate"}, "- fix the gate\n"),
                ({"op": "insert_after", "heading": "## Plans", "text": "- buy seeds"}, "## Plans\n- buy seeds\n"),
                ({"op": "replace_section", "heading": "## Done", "text": "- dug the beds\n- built the shed"},
                 "- built the shed\n"),
            ]
            for args, lands in steps:
                r = await s.call_tool("memory_edit", {"path": "garden.md", "base": await rev(), **args})
                assert not r.isError, text_of(r)
                assert "edited garden.md" in text_of(r) and lands in _note(ws) and SECRET in _note(ws)
            before = _note(ws)
            base = await rev()
            refusals = [
                ({"op": "replace", "old": "- no such line", "text": "x"}, "does not occur"),
                ({"op": "replace", "old": "- ", "text": "x"}, "occurs"),
                ({"op": "insert_after", "heading": "## Ideas", "text": "x"}, "no heading line"),
                ({"op": "replace", "old": "code is [redacted:bank]", "text": "code is 1"}, "touches a redacted secret"),
                ({"op": "append", "text": "x", "base": "0" * 12}, "changed since you read it"),
            ]
            for args, words in refusals:
                r = await s.call_tool("memory_edit", {"path": "garden.md", "base": base, **args})
                assert r.isError and words in text_of(r), (args, text_of(r))
                assert SECRET not in text_of(r)
            missing = await s.call_tool("memory_edit", {"path": "garden.md", "op": "append", "text": "x"})
            assert missing.isError and "base is required" in text_of(missing)
            assert _note(ws) == before
        return before

    run_async(body)
    rows = history_rows(ws, "garden.md")
    assert [r["source"] for r in rows].count("mcp:Test Client") == 4


def test_an_unattended_edit_is_asked_with_its_diff(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory" / "garden.md").write_text(NOTE.replace(SECRET, "1234"))

    async def body():
        async with serve(ws) as s:
            base = _revision(text_of(await s.call_tool("memory_read", {"path": "garden.md"})))
            result: dict = {}

            async def edit() -> None:
                result["r"] = await s.call_tool("memory_edit", {"path": "garden.md", "base": base,
                                                                "op": "append", "text": "- water daily"})

            async with anyio.create_task_group() as tg:
                tg.start_soon(edit)
                [pending] = await wait_pending(ws)
                assert "memory_edit garden.md" in pending.request.summary
                shown = await cli_async(ws, "approvals", "show", pending.id)
                assert "+- water daily" in shown.stdout and "-- dug the beds" not in shown.stdout
                assert (await cli_async(ws, "approvals", "approve", pending.id)).returncode == 0
            assert not result["r"].isError, text_of(result["r"])

    run_async(body)
    assert _note(ws) == NOTE.replace(SECRET, "1234") + "- water daily\n"
