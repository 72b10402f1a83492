"""Issue 13 item 6: the chat flags (one line) a reply that follows a failed call."""

from __future__ import annotations

from run_support import cli, make_ws, write_script


def test_a_reply_after_a_failed_call_is_flagged_once(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/lina.md", "content": "Lina.\n"}},   # exists: refused
        {"reply": "Saved."},
        {"reply": "Hello again."}])
    r = cli("-w", str(ws), "chat", "--model", f"script:{script}", input="note lina\nhi\n")
    lines = r.stdout.splitlines()
    flagged = [i for i, line in enumerate(lines) if "follows a failed call" in line]
    assert len(flagged) == 1, r.stdout
    assert "memory_write" in lines[flagged[0]]
    assert any("Saved." in line for line in lines[:flagged[0]])     # flagged right after that reply
    assert not any("Hello again." in line for line in lines[:flagged[0]])
