"""Hostile review s4 (2026-12-01), MCP: what a client and the transcript are told matches what
happened on disk once a write has passed its point of no return, and a client may not drop a
secret it saw only redacted.

The writer is slowed after its commit by holding history/.lock (and state/audit.lock), real locks
any other writer may hold, each for less than its own 10 s bound."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager

from bounded import wait_for
from held_lock import HeldLock
from mcp_harness import SECRET, RawServer, add_vault, make_ws


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


# review s4 B6: memory_write of a note holding a vault value was refused, memory_remove was not
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
