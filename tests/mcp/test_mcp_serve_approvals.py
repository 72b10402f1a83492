"""`assistant mcp serve`, unattended (the default): a write asks out of band, and the client's
call waits for the answer. Driven by the SDK's own stdio_client + ClientSession against the
real server subprocess; answers come from the real `assistant approvals` CLI."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager

import anyio
import mcp.types as types

from bounded import wait_for
from held_lock import HeldLock
from policy.grants import GrantStore
from workspaces import notify_with

from mcp_harness import (WAIT, RawServer, audit_lines, call_answered, cli, cli_async, entries, history_rows, make_ws,
                         run_async, serve, text_of, wait_pending, wait_state)

NEW = "---\ndescription: Ana, Lina's sister\n---\nAna lives in Porto and likes climbing.\n"
WRITE_ANA = {"path": "people/ana.md", "content": NEW}


def _note(ws, path):
    p = ws / "memory" / path
    return p.read_bytes() if p.exists() else None


def test_write_waits_is_approved_through_the_cli_and_lands_exactly(tmp_path):
    ws = make_ws(tmp_path)

    async def body():
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total, message))

        async with serve(ws, name="Claude Desktop") as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert "60 seconds" in tools["memory_write"].description      # the approval timeout, told
            result: dict = {}

            async def write() -> None:
                result["r"] = await s.call_tool("memory_write", WRITE_ANA,
                                                progress_callback=on_progress)

            async with anyio.create_task_group() as tg:
                tg.start_soon(write)
                [pending] = await wait_pending(ws)
                assert _note(ws, "people/ana.md") is None           # nothing lands before the answer
                shown = await cli_async(ws, "approvals", "show", pending.id)
                assert shown.returncode == 0, shown.stderr
                assert "requested by Claude Desktop over MCP" in shown.stdout
                assert "+Ana lives in Porto and likes climbing." in shown.stdout
                listed = json.loads((await cli_async(ws, "approvals", "list", "--json")).stdout)
                assert listed[0]["requester"] == "mcp:Claude Desktop"
                with anyio.fail_after(WAIT):
                    while not progress:                              # told while it waits
                        await anyio.sleep(0.05)
                answer = await cli_async(ws, "approvals", "approve", pending.id)
                assert answer.returncode == 0, answer.stderr
            r = result["r"]
            assert not r.isError, text_of(r)
            assert "created people/ana.md" in text_of(r)
            assert progress[0][1] == 60.0 and pending.id in (progress[0][2] or "")
            # the server keeps serving the same session afterwards
            again = await s.call_tool("memory_read", {"path": "people/ana.md"})
            assert "Ana lives in Porto" in text_of(again)
        return pending.id

    request_id = run_async(body)
    assert _note(ws, "people/ana.md") == NEW.encode()                # exactly the approved bytes
    [row] = [r for r in history_rows(ws, "people/ana.md")]
    assert row["source"] == "mcp:Claude Desktop" and row["approval"] == request_id
    lines = audit_lines(ws)
    ruling = [a for a in lines if a.get("event") == "ruling" and a.get("target") == "people/ana.md"]
    written = [a for a in lines if a.get("event") == "written" and a.get("target") == "people/ana.md"]
    assert ruling and all(a["requester"] == "mcp:Claude Desktop" for a in ruling)
    assert written and written[0]["source"] == "mcp:Claude Desktop"
    runs = json.loads(cli(ws, "runs", "--json").stdout)
    mcp_runs = [r for r in runs if r["kind"] == "mcp"]
    assert mcp_runs and mcp_runs[0]["outcome"] == "done" and mcp_runs[0]["tool_calls"] >= 2
    assert "Claude Desktop" in (mcp_runs[0]["task"] or "")


def test_denied_write_writes_nothing_and_says_so(tmp_path):
    ws = make_ws(tmp_path)

    async def body():
        async with serve(ws) as s:
            r, _ = await call_answered(ws, s, "memory_write", WRITE_ANA, "deny", "--reason", "not now")
            assert r.isError
            assert "denied" in text_of(r) and "not now" in text_of(r) and "nothing was written" in text_of(r)

    run_async(body)
    assert _note(ws, "people/ana.md") is None


def test_unanswered_write_expires_and_writes_nothing(tmp_path):
    ws = make_ws(tmp_path, timeout="2s")

    async def body():
        async with serve(ws) as s:
            with anyio.fail_after(WAIT):
                r = await s.call_tool("memory_write", WRITE_ANA)
            assert r.isError and "expired" in text_of(r) and "nothing was written" in text_of(r)
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert "2 seconds" in tools["memory_write"].description

    run_async(body)
    assert _note(ws, "people/ana.md") is None
    [entry] = entries(ws)
    assert entry.state == "expired"


def test_client_cancel_closes_the_request_as_denied(tmp_path):
    ws = make_ws(tmp_path)

    async def body():
        async with serve(ws) as s:
            request_id = s._request_id          # the id the next request will carry
            failure: dict = {}

            async def write() -> None:
                try:
                    await s.call_tool("memory_write", WRITE_ANA)
                except Exception as exc:   # the server answers a cancelled call with an error
                    failure["e"] = exc

            async with anyio.create_task_group() as tg:
                tg.start_soon(write)
                [pending] = await wait_pending(ws)
                await s.send_notification(types.ClientNotification(types.CancelledNotification(
                    params=types.CancelledNotificationParams(requestId=request_id, reason="client timeout"))))
                closed = await wait_state(ws, pending.id, ("denied",))
                assert closed.answer is not None and closed.answer.by == "run"
                assert "cancelled the call" in closed.answer.reason
                tg.cancel_scope.cancel()
            # an approval now comes too late: the request is answered, nothing is written
            late = await cli_async(ws, "approvals", "approve", pending.id)
            assert late.returncode != 0 and "already answered" in (late.stderr + late.stdout)
            # and the server goes on serving
            r = await s.call_tool("memory_read", {"path": "people/lina.md"})
            assert not r.isError

    run_async(body)
    assert _note(ws, "people/ana.md") is None


def test_client_disconnect_mid_wait_closes_the_request(tmp_path):
    ws = make_ws(tmp_path)
    seen: dict = {}

    async def body():
        async with serve(ws) as s:
            async with anyio.create_task_group() as tg:
                async def write() -> None:
                    try:
                        await s.call_tool("memory_write", WRITE_ANA)
                    except Exception:
                        pass

                tg.start_soon(write)
                [pending] = await wait_pending(ws)
                seen["id"] = pending.id
                tg.cancel_scope.cancel()
        # leaving the client closed the server's stdin (and ended the process)

    run_async(body)
    entry = anyio.run(wait_state, ws, seen["id"], ("denied",))
    # closed by the server the moment stdin ended ("disconnected"); on a machine so loaded that the
    # SDK's client sent SIGTERM first (2 s after closing stdin), by the stop ("stopped")
    assert entry.answer is not None and entry.answer.by == "run"
    assert "disconnected while the call waited" in entry.answer.reason or "server was stopped" in entry.answer.reason
    assert _note(ws, "people/ana.md") is None
    late = cli(ws, "approvals", "approve", seen["id"])
    assert late.returncode != 0


def test_standing_grant_allows_without_asking_and_remove_is_gated(tmp_path):
    ws = make_ws(tmp_path)
    GrantStore(ws / "grants.json").add("memory", "people/*", note="a grant the person made earlier")

    async def body():
        async with serve(ws, name="my-agent") as s:
            r = await s.call_tool("memory_write", WRITE_ANA)
            assert not r.isError, text_of(r)
            assert entries(ws) == []                       # no request: the grant allowed it
            read = await s.call_tool("memory_read", {"path": "people/ana.md"})
            revision = text_of(read).split("revision: ")[1].split("\n")[0]
            stale = await s.call_tool("memory_write", {"path": "people/ana.md", "content": "x\n", "base": "0" * 12})
            assert stale.isError and "changed since you read it" in text_of(stale)
            again = await s.call_tool("memory_write", {"path": "people/ana.md", "content": NEW + "More.\n",
                                                       "base": revision})
            assert not again.isError, text_of(again)
            gone = await s.call_tool("memory_remove", {"path": "people/ana.md"})
            assert not gone.isError, text_of(gone)
            # outside the grant, a removal asks like a write
            result: dict = {}

            async def remove() -> None:
                result["r"] = await s.call_tool("memory_remove", {"path": "index.md"})

            async with anyio.create_task_group() as tg:
                tg.start_soon(remove)
                [pending] = await wait_pending(ws)
                assert pending.request.target == "index.md"
                assert (await cli_async(ws, "approvals", "deny", pending.id)).returncode == 0
            assert result["r"].isError and "denied" in text_of(result["r"])

    run_async(body)
    assert _note(ws, "people/ana.md") is None and _note(ws, "index.md") is not None
    rows = history_rows(ws, "people/ana.md")
    assert [r["source"] for r in rows] == ["removal", "mcp:my-agent", "mcp:my-agent"]


def test_watched_mode_is_an_explicit_opt_in(tmp_path):
    ws = make_ws(tmp_path, mode="watched")

    async def body():
        async with serve(ws) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert "watched" in tools["memory_write"].description
            r = await s.call_tool("memory_write", WRITE_ANA)
            assert not r.isError, text_of(r)

    run_async(body)
    assert _note(ws, "people/ana.md") == NEW.encode() and entries(ws) == []


def test_nobody_to_ask_is_a_deny_at_once(tmp_path):
    ws = make_ws(tmp_path)
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace('channel = "inbox"', 'channel = "none"'))

    async def body():
        async with serve(ws) as s:
            with anyio.fail_after(WAIT):
                r = await s.call_tool("memory_write", WRITE_ANA)
            assert r.isError and "denied" in text_of(r) and "nothing was written" in text_of(r)

    run_async(body)
    assert _note(ws, "people/ana.md") is None and entries(ws) == []


def test_notify_command_names_the_client(tmp_path):
    ws = make_ws(tmp_path)
    told = tmp_path / "told.txt"
    notify_with(ws, f'printf "%s\\n" "$1" >> {told}\n')

    async def body():
        async with serve(ws, name="Cursor") as s:
            async with anyio.create_task_group() as tg:
                async def write() -> None:
                    await s.call_tool("memory_write", WRITE_ANA)

                tg.start_soon(write)
                [pending] = await wait_pending(ws)
                assert (await cli_async(ws, "approvals", "deny", pending.id)).returncode == 0

    run_async(body)
    line = told.read_text()
    assert "Cursor over MCP asks: approve memory_write people/ana.md" in line


def test_a_client_cannot_flood_the_inbox(tmp_path):
    ws = make_ws(tmp_path)

    async def body():
        async with serve(ws) as s:
            results: list = []
            async with anyio.create_task_group() as tg:
                async def write(i: int) -> None:
                    results.append(await s.call_tool("memory_write", {"path": f"flood/n{i}.md", "content": f"{i}\n"}))

                for i in range(8):
                    tg.start_soon(write, i)
                pending = await wait_pending(ws, 8)
                over = await s.call_tool("memory_write", {"path": "flood/over.md", "content": "9\n"})
                assert over.isError and "already in progress" in text_of(over)
                assert len([e for e in entries(ws) if e.state == "pending"]) == 8
                for e in pending:
                    assert (await cli_async(ws, "approvals", "deny", e.id)).returncode == 0
            assert len(results) == 8 and all(r.isError for r in results)

    run_async(body)
    assert not (ws / "memory" / "flood").exists()


def test_stopping_the_server_mid_wait_closes_the_request(tmp_path):
    import signal

    ws = make_ws(tmp_path)
    with RawServer(ws) as server:
        server.handshake("stopper")
        server.request(2, "tools/call", {"name": "memory_write", "arguments": WRITE_ANA})
        [pending] = anyio.run(wait_pending, ws)
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=WAIT) != 0     # stdin still open: it stops anyway
    entry = anyio.run(wait_state, ws, pending.id, ("denied",))
    assert "stopped" in entry.answer.reason
    assert _note(ws, "people/ana.md") is None


def test_rest_of_this_run_means_this_mcp_session(tmp_path):
    ws = make_ws(tmp_path)

    async def first_session():
        async with serve(ws) as s:
            r, _ = await call_answered(ws, s, "memory_write", WRITE_ANA, "approve", "--remember", "run")
            assert not r.isError
            read = await s.call_tool("memory_read", {"path": "people/ana.md"})
            revision = text_of(read).split("revision: ")[1].split("\n")[0]
            with anyio.fail_after(WAIT):       # the same session: allowed without asking again
                again = await s.call_tool("memory_write", {"path": "people/ana.md", "content": NEW + "1\n",
                                                           "base": revision})
            assert not again.isError, text_of(again)
            assert len(entries(ws)) == 1

    async def second_session():
        async with serve(ws) as s:             # a new MCP session: the same note is asked again
            read = await s.call_tool("memory_read", {"path": "people/ana.md"})
            revision = text_of(read).split("revision: ")[1].split("\n")[0]
            async with anyio.create_task_group() as tg:
                async def write() -> None:
                    await s.call_tool("memory_write", {"path": "people/ana.md", "content": "changed\n",
                                                       "base": revision})

                tg.start_soon(write)
                pending = await wait_pending(ws)
                assert [e.request.target for e in pending] == ["people/ana.md"]
                tg.cancel_scope.cancel()

    run_async(first_session)
    assert _note(ws, "people/ana.md") == (NEW + "1\n").encode()
    run_async(second_session)
    assert _note(ws, "people/ana.md") == (NEW + "1\n").encode()


# review (mcp): a write past its point of no return: a client's cancel, or the client gone, was
# told (and the transcript said) "nothing was changed" while the note landed. The writer is slowed
# after its commit by holding history/.lock (and state/audit.lock), real locks any other writer
# may hold, each for less than its own 10 s bound.
def _transcript(ws) -> str:
    return "".join(p.read_text() for p in (ws / "state" / "transcripts").glob("*.jsonl"))


@contextmanager
def _committed_write(tmp_path, path: str):
    """A watched `mcp serve` whose memory_write of PATH (request 2) is past its point of no
    return, slowed by history's lock: yields (workspace, server, the held lock, the note)."""
    ws = make_ws(tmp_path, mode="watched")
    note = ws / "memory" / path
    with RawServer(ws) as server, HeldLock(ws / "history" / ".lock") as history:
        server.handshake()
        server.call(2, "memory_write", {"path": path, "content": "landed\n"})
        assert wait_for(note.exists, 30), "the write did not start"
        yield ws, server, history, note


# review s4 B1: the client was answered "Request cancelled" and the transcript said "nothing was
# changed" while the note landed
def test_a_cancel_that_comes_after_the_commit_gets_the_real_result(tmp_path):
    with _committed_write(tmp_path, "notes/c.md") as (ws, server, history, note):
        server.notify("notifications/cancelled", {"requestId": 2, "reason": "user"})
        time.sleep(0.5)
        history.release()
        reply = server.next()
    assert note.read_bytes() == b"landed\n"
    assert "error" not in reply and reply["result"]["isError"] is False, reply
    assert "created notes/c.md" in reply["result"]["content"][0]["text"]
    assert "nothing was changed" not in _transcript(ws)


# review s4 B2: the server exited 10 s after the client went away, cutting the write's tail (no
# audit line), and the transcript said "nothing was changed"
def test_a_client_gone_after_the_commit_leaves_the_write_whole(tmp_path):
    t0 = time.monotonic()
    with _committed_write(tmp_path, "notes/d.md") as (ws, server, history, note):
        with HeldLock(ws / "state" / "audit.lock") as audit:    # after the ruling's own audit line
            server.proc.stdin.close()                           # the client goes away
            time.sleep(max(0.0, 9 - (time.monotonic() - t0)))
            history.release()                                   # held 9 s (its bound is 10 s)
            time.sleep(max(0.0, 15 - (time.monotonic() - t0)))
            audit.release()                                     # waited for 6 s (its bound is 10 s)
        server.proc.wait(60)
    assert note.read_bytes() == b"landed\n"
    records = [json.loads(line) for line in (ws / "state" / "audit.jsonl").read_text().splitlines()]
    assert any(r.get("event") == "written" and r.get("target") == "notes/d.md" for r in records)
    assert "nothing was changed" not in _transcript(ws)
