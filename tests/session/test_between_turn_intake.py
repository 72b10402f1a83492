"""The session's one between-turn intake (`Session.notice_hand_edits`, what chat and `memory
watch` call): the notes a watcher saw change are returned, and a hand edit becomes a version in
history/ right then, not at the next write."""

from __future__ import annotations

import time

from assistant.notes.watch import MemoryWatcher


def drained(session, watcher, bound: float = 30.0) -> list:
    """The first non-empty intake (bounded wait: a watcher reports within its debounce)."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        watcher.wait(0.5)
        fresh = session.notice_hand_edits(watcher)
        if fresh:
            return fresh
    return []


def test_a_hand_edit_between_turns_becomes_a_version(ws, sessions):
    session = sessions(ws, "watched", kind="chat")
    before = session.history.head("people/lina.md")
    with MemoryWatcher(session.ws.memory_dir) as watcher:
        (ws / "memory" / "people" / "lina.md").write_text("---\ndescription: Lina\n---\nLina moved to Porto.\n")
        fresh = drained(session, watcher)
    assert [(c.path, c.kind) for c in fresh] == [("people/lina.md", "modified")]
    head = session.history.head("people/lina.md")
    assert head is not None and head != before and head.source == "hand-edit"
    assert session.history.object_bytes(head.sha256).endswith(b"Lina moved to Porto.\n")


def test_nothing_changed_is_an_empty_intake(ws, sessions):
    session = sessions(ws, "watched", kind="chat")
    before = session.history.versions()      # the session's start recorded the notes as found
    with MemoryWatcher(session.ws.memory_dir) as watcher:
        watcher.wait(0.2)
        assert session.notice_hand_edits(watcher) == []
    assert session.history.versions() == before
