"""history/'s cheaper write path (issue 12, write cost) keeps its crash guarantees.

The intent is written and cleared in place (its first line; the file stays), objects are
created O_EXCL at their final name by one long-lived worker thread, and an object that is
already there is used only if its bytes hash to its name (else it is replaced, never written
through). Each test works on the real filesystem."""

from __future__ import annotations

import hashlib
import json
import threading

import pytest

from assistant.notes.history import History, HistoryError, Origin, object_relpath
from assistant.session import open_session
from assistant.workspace.layout import init_workspace


def rev(data: bytes) -> str:
    return hashlib.sha256(b"k" + data).hexdigest()[:12]


@pytest.fixture
def ws(tmp_path):
    init_workspace(tmp_path / "ws")
    return tmp_path / "ws"


def history(ws) -> History:
    from assistant.notes.frontmatter import revision
    from assistant.secrets.revision_key import load_key

    key = load_key(ws / "state")
    return History(ws / "history", revision=lambda d: revision(d, key))


def test_a_finished_write_leaves_no_pending_intent(ws):
    with open_session(ws, "watched", kind="api", transcript=False) as s:
        s.memory.write("a.md", "first version, a rather long line of text\n", force=True)
        s.memory.write("a.md", "short\n", force=True)
        h = s.memory.history
        assert not h.intent_pending()
    raw = (ws / "history" / "intent.json").read_bytes()
    assert raw.startswith(b"\n")        # cleared in place: an empty first line
    [a, b] = history(ws).versions("a.md")
    assert (a.source, b.source) == ("person", "person")


def test_an_intent_over_a_longer_stale_one_is_read_to_its_newline(ws):
    """The new intent is pwritten over the start of an older, longer one: recovery reads the
    first line only (the stale tail is never parsed)."""
    with open_session(ws, "watched", kind="api", transcript=False):
        pass
    h = history(ws)
    long_v = h.make_version("x.md", b"x" * 10, Origin("assistant", sources=("web:" + "h" * 300,)))
    h.begin(long_v, b"x" * 10)
    h.abandon()
    v = h.make_version("x.md", b"approved\n", Origin("assistant", model="m"), run="r9")
    h.begin(v, b"approved\n")
    raw = (ws / "history" / "intent.json").read_bytes()
    first, rest = raw.split(b"\n", 1)
    assert json.loads(first)["run"] == "r9" and rest     # stale bytes follow the line
    (ws / "memory" / "x.md").write_bytes(b"approved\n")  # the note was written, then kill -9
    h.close()
    with open_session(ws, "watched", kind="api", transcript=False):
        pass
    [got] = history(ws).versions("x.md")
    assert (got.source, got.model, got.run) == ("assistant", "m", "r9")


def test_an_intent_in_the_old_format_is_still_recovered(ws):
    """An intent left by the previous release (the record alone, no newline) is recovered."""
    with open_session(ws, "watched", kind="api", transcript=False):
        pass
    h = history(ws)
    v = h.make_version("old.md", b"from before\n", Origin("assistant", model="m0"), run="r0")
    h.put_object(b"from before\n")
    (ws / "history" / "intent.json").write_bytes(json.dumps(v.to_record()).encode())
    (ws / "memory" / "old.md").write_bytes(b"from before\n")
    with open_session(ws, "watched", kind="api", transcript=False):
        pass
    [got] = history(ws).versions("old.md")
    assert (got.source, got.run) == ("assistant", "r0")
    assert not history(ws).intent_pending()


def test_a_damaged_object_is_replaced_and_an_odd_entry_is_never_written_through(ws, tmp_path):
    h = history(ws)
    h.ensure()
    data = b"the exact bytes\n"
    sha = hashlib.sha256(data).hexdigest()
    obj = ws / "history" / object_relpath(sha)
    obj.parent.mkdir(parents=True)
    obj.write_bytes(b"the exact by")               # torn by a crash mid-write
    assert h.put_object(data) == sha
    assert obj.read_bytes() == data
    # a symlink at the object's name: replaced as a directory entry, the target untouched
    data2 = b"other bytes\n"
    sha2 = hashlib.sha256(data2).hexdigest()
    obj2 = ws / "history" / object_relpath(sha2)
    obj2.parent.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "persons-file"
    target.write_bytes(b"not yours\n")
    obj2.symlink_to(target)
    assert h.put_object(data2) == sha2
    assert target.read_bytes() == b"not yours\n"
    assert not obj2.is_symlink() and obj2.read_bytes() == data2
    # an intact copy is kept as it is (same inode)
    ino = obj.stat().st_ino
    assert h.put_object(data) == sha and obj.stat().st_ino == ino
    h.close()


def test_one_worker_thread_serves_every_write_and_ends_with_the_session(ws):
    before = {t.ident for t in threading.enumerate()}
    with open_session(ws, "watched", kind="api", transcript=False) as s:
        for i in range(5):
            s.memory.write(f"n{i}.md", f"note {i}\n", force=True)
        workers = [t for t in threading.enumerate() if t.name == "history-object" and t.ident not in before]
        assert len(workers) == 1
    workers[0].join(5)
    assert not workers[0].is_alive()
    assert [v.path for v in history(ws).versions()][-5:] == [f"n{i}.md" for i in range(5)]


def test_an_object_the_worker_could_not_store_is_logged_later_with_its_source(ws):
    """The object is stored while the note is written: if storing fails, the note is written
    anyway and the write says so; the intent stays, and the version (its object included) is
    logged with its source once the store works again. Never a log line without its object."""
    new = b"a new text whose object cannot be stored yet\n"
    with open_session(ws, "watched", kind="api", transcript=False) as s:
        s.memory.write("keep.md", "kept\n", force=True)
        # a file where the object's fan-out folder must be: the store fails in the worker
        blocker = ws / "history" / "objects" / hashlib.sha256(new).hexdigest()[:2]
        blocker.write_bytes(b"in the way\n")
        result = s.memory.write("keep.md", new, force=True, origin=Origin("assistant", model="m"))
        assert result.warning and "not logged yet" in result.warning
        assert s.memory.history.intent_pending()
        assert [v.bytes for v in history(ws).versions("keep.md")] == [5]
        blocker.unlink()
    with open_session(ws, "watched", kind="api", transcript=False):
        pass
    h = history(ws)
    [_, got] = h.versions("keep.md")
    assert (got.source, got.model) == ("assistant", "m")
    assert h.object_bytes(got.sha256) == new
    assert not h.intent_pending()


def test_history_error_type_is_unchanged_for_a_missing_object(ws):
    h = history(ws)
    h.ensure()
    with pytest.raises(HistoryError, match="missing"):
        h.object_bytes("0" * 64)


def test_the_worker_ends_when_idle_and_the_next_write_starts_another(ws, monkeypatch):
    import time

    from assistant.notes import history as history_mod

    monkeypatch.setattr(history_mod._Worker, "IDLE", 0.05)
    others = {t for t in threading.enumerate() if t.name == "history-object"}   # earlier tests'

    def ours() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "history-object" and t not in others]

    with open_session(ws, "watched", kind="api", transcript=False) as s:
        for round_ in range(3):
            s.memory.write("idle.md", f"round {round_}\n", force=True)
            deadline = time.monotonic() + 5
            while ours() and time.monotonic() < deadline:
                time.sleep(0.02)
            assert not ours()
    assert [v.bytes for v in history(ws).versions("idle.md")] == [8, 8, 8]
