"""Ctrl-C in a chat while a memory_write is past its writer's point of no return, then /quit:
the chat waits for the write (bounded) and says what it did; nothing is half-written."""

from __future__ import annotations

import json
import time

from e2e_support import make_ws, write_script
from bounded import wait_for
from held_lock import HeldLock
from tty_harness import Pty


# review (chat): Ctrl-C after a write's commit, then /quit, cut the write's tail (the note on disk, no audit line)
def test_ctrl_c_after_the_commit_lets_the_write_finish_whole(tmp_path):
    """The chat waited 2 s and the exit cut the write's tail (the note on disk, no audit line).
    History's lock is held for 5 s (its own bound is 10 s) to slow the writer."""
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"tool": "memory_write", "args": {"path": "notes/e.md", "content": "landed\n"}},
                                     {"reply": "ok"}])
    note = ws / "memory" / "notes" / "e.md"
    t = Pty("-w", str(ws), "chat", "--model", f"script:{script}")
    try:
        t.read_until("you> ")
        with HeldLock(ws / "history" / ".lock") as history:
            t.send("write it\r")
            started = time.monotonic()
            assert wait_for(note.exists, 30), "the write did not start"
            t.send("\x03")                                    # Ctrl-C: the writer has committed
            time.sleep(max(0.0, 5 - (time.monotonic() - started)))
            history.release()
            t.read_until("interrupted after its write had begun")
        t.quit_at_prompt()
    finally:
        t.kill()
    assert note.read_bytes() == b"landed\n"
    records = [json.loads(line) for line in (ws / "state" / "audit.jsonl").read_text().splitlines()]
    assert any(r.get("event") == "written" and r.get("target") == "notes/e.md" for r in records)
