"""`mcp serve`'s memory_search is kept fresh by a watcher of memory/, not by a walk of it per
call (issue 23, item 11): once the server has synced, searches walk memory/ no more, a hand edit
is found once the watcher reports it, and the session's own write is found by the very next
search. The server is driven in process (its read tool, as a client's call reaches it), on a
real workspace, a real inotify watcher and the real index; the walk is counted where the index
makes it (assistant.recall.index.scan_notes)."""

from __future__ import annotations

import pytest

import assistant.recall.index as index_module
from assistant.mcp.calls import CallRegistry
from assistant.mcp.server import MemoryServer
from assistant.notes.watch import MemoryWatcher
from assistant.session import open_session
from assistant.tools.memory import run_memory_search

from bounded import wait_for

WAIT = 30.0


@pytest.fixture
def walks(monkeypatch):
    """How many times memory/ has been walked for the index since the fixture started."""
    count = {"n": 0}
    real = index_module.scan_notes

    def counted(memory_dir):
        count["n"] += 1
        return real(memory_dir)
    monkeypatch.setattr(index_module, "scan_notes", counted)
    return count


def _search(server: MemoryServer, query: str) -> str:
    text, ok = server._read_tool(server.specs["memory_search"], {"query": query})
    assert ok, text
    return text


def test_searches_after_the_first_sync_walk_memory_no_more_and_find_a_hand_edit(ws, walks):
    calls = CallRegistry()
    session = open_session(ws, "unattended", kind="mcp", interactive=False, transcript=True, turns=False,
                           on_request=calls.on_request)
    watcher = MemoryWatcher(ws / "memory").start()
    server = MemoryServer(session, calls, watcher=watcher)
    try:
        server.start_intake()
        assert server.watching.wait(WAIT), "the server never started trusting its watcher"
        walked = walks["n"]
        assert walked == 1                               # the one sync as it starts
        for query in ("Lina", "garden", "birthday", "project", "Lina garden"):
            _search(server, query)
        assert walks["n"] == walked                      # five searches, no walk

        note = ws / "memory" / "people" / "lina.md"
        note.write_text(note.read_text() + "\nShe keeps bees called quillfeather.\n")   # an editor's save
        assert wait_for(lambda: "people/lina.md" in _search(server, "quillfeather"), WAIT), \
            "the hand edit was never found"
        assert walks["n"] == walked                      # found without a walk
    finally:
        server.finish("done", "test over")
        watcher.stop()


def test_a_search_right_after_the_sessions_own_write_finds_it(ws, walks):
    with open_session(ws, "watched", kind="api", transcript=False) as session:
        session.index.sync(conversations=False)
        session.index.note_changes([])                 # a watcher feeds this index (none reports)
        walked = walks["n"]
        session.memory.write("places/oslo.md", "---\ndescription: a trip\n---\nThe zanzibarite museum.\n")
        out = run_memory_search({"query": "zanzibarite"}, session.ctx)
        assert "places/oslo.md" in out                 # not waiting for any watcher's report
        session.memory.remove("places/oslo.md")
        assert "places/oslo.md" not in run_memory_search({"query": "zanzibarite"}, session.ctx)
        assert walks["n"] == walked


def test_without_a_watcher_every_search_compares_every_note(ws, walks):
    with open_session(ws, "watched", kind="api", transcript=False) as session:
        note = ws / "memory" / "people" / "lina.md"
        run_memory_search({"query": "Lina"}, session.ctx)
        note.write_text(note.read_text() + "\nA word: marzipanic.\n")
        assert "people/lina.md" in run_memory_search({"query": "marzipanic"}, session.ctx)
        assert walks["n"] == 2
