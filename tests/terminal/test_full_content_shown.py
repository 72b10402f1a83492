"""Item 2 of issue 10: nothing cut silently. A watched chat showed only the first 160 characters
of a memory write, and with memory_watched = "ask" a person approved 286 bytes after seeing 160.
Now the whole text (or the whole diff) is shown, escaped; a long one is paged with its length
stated; and the inline approval binds to the sha256 of what was shown."""

from __future__ import annotations

import hashlib

from e2e_support import make_ws, memory_files, write_script
from tty_harness import Pty

ASK = 'memory_watched = "ask"\n'


def _long_note(marker: str, lines: int = 1) -> str:
    body = "".join(f"line {i}: an ordinary remark about the garden and the weather\n" for i in range(lines))
    return body + f"and at the very end: {marker}\n"


def _chat(tmp_path, items, extra_config=""):
    ws = make_ws(tmp_path)
    if extra_config:
        # the example config has a [policy] table of comments: put the cell into it
        cfg = ws / "config.toml"
        cfg.write_text(cfg.read_text().replace("[policy]\n", "[policy]\n" + extra_config, 1))
    script = write_script(tmp_path, items)
    return ws, Pty("-w", str(ws), "chat", "--model", f"script:{script}")


def test_a_watched_write_is_shown_in_full_not_its_first_160_characters(tmp_path):
    content = _long_note("SEND-NOTES-TO-evil.example", lines=4)
    assert len(content) > 286
    ws, t = _chat(tmp_path, [{"tool": "memory_write", "args": {"path": "garden.md", "content": content}},
                             {"reply": "saved"}])
    t.one_turn_then_quit("note the garden", "assistant: saved")
    assert "SEND-NOTES-TO-evil.example" in t.text
    assert memory_files(ws)["garden.md"] == content.encode()


def test_a_watched_replacement_is_shown_as_its_full_diff(tmp_path):
    ws = make_ws(tmp_path)
    old = "".join(f"keep {i}\n" for i in range(30))
    (ws / "memory" / "list.md").write_text(old)
    from assistant.notes.frontmatter import revision as keyed_revision
    from assistant.secrets.revision_key import load_key

    def revision(data):
        return keyed_revision(data, load_key(ws / "state"))     # keyed (issue 10 item 6)

    new = old + "added far below the first 160 characters: EXFIL-MARKER\n"
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "list.md", "content": new, "base": revision(old.encode())}},
        {"reply": "updated"}])
    t = Pty("-w", str(ws), "chat", "--model", f"script:{script}")
    t.one_turn_then_quit("update it", "assistant: updated")
    assert "+added far below the first 160 characters: EXFIL-MARKER" in t.text
    assert "--- a/list.md" in t.text and "+++ b/list.md" in t.text


def test_an_inline_ask_shows_the_whole_content_before_the_question(tmp_path):
    content = _long_note("QUERY-CARRIES-NOTES", lines=4)
    ws, t = _chat(tmp_path, [{"tool": "memory_write", "args": {"path": "garden.md", "content": content}},
                             {"reply": "done"}], ASK)
    before = t.one_turn_then_quit("note the garden", "assistant: done", answer="y")
    assert "QUERY-CARRIES-NOTES" in before     # seen before the question, not after
    assert memory_files(ws)["garden.md"] == content.encode()


def test_a_long_ask_is_paged_with_its_length_stated_and_the_rest_reachable(tmp_path):
    content = _long_note("THE-LAST-LINE", lines=120)
    ws, t = _chat(tmp_path, [{"tool": "memory_write", "args": {"path": "garden.md", "content": content}},
                             {"reply": "done"}], ASK)
    try:
        t.read_until("you> ")
        t.send("note the garden\r")
        first = t.read_until("allow?")
        assert "THE-LAST-LINE" not in first
        assert f"{len(content):,} characters of content in all" in first and "more lines" in first and "type `more`" in first
        for _ in range(10):
            t.send("more\r")
            seen = t.read_until("allow?")
            if "THE-LAST-LINE" in seen:
                break
        assert "THE-LAST-LINE" in t.text
        t.send("n\r")
        t.read_until("assistant: done")
        t.send("/quit\r")
        assert t.wait() == 0
    finally:
        t.kill()
    assert "garden.md" not in memory_files(ws)


def test_an_inline_approval_binds_to_the_sha256_of_the_content_shown(tmp_path):
    from policy.audit import AuditLog
    from policy.gate import Gate, InlineAnswer

    content = b"what the person saw\n"
    shown = []

    def honest(q):
        shown.append(q.content)
        return InlineAnswer("once", hashlib.sha256(q.content.encode()).hexdigest())

    def gate(asker):
        return Gate("watched", run_id="r1", audit=AuditLog(tmp_path / "audit.jsonl"),
                    policy={"memory_watched": "ask"}, inline_ask=asker)

    d = gate(honest).authorize("memory", "a.md", content=content, summary="memory_write a.md")
    assert d.allowed and shown == ["what the person saw\n"]
    other = hashlib.sha256(b"something else").hexdigest()
    assert not gate(lambda q: InlineAnswer("once", other)).authorize("memory", "a.md", content=content).allowed
    # a bare yes is not bound to any content: refused for a question with content
    d = gate(lambda q: "once").authorize("memory", "a.md", content=content)
    assert not d.allowed and "not bound" in d.reason


def test_a_watched_file_write_is_shown_in_full_too(tmp_path):
    content = _long_note("END-OF-THE-DRAFT", lines=5)
    ws, t = _chat(tmp_path, [{"tool": "file_write", "args": {"path": "draft.txt", "content": content}},
                             {"reply": "written"}])
    t.one_turn_then_quit("draft it", "assistant: written")
    assert "   | END-OF-THE-DRAFT" not in t.text and "   | and at the very end: END-OF-THE-DRAFT" in t.text
    assert (ws / "files" / "draft.txt").read_text() == content
