"""Issue 23 item 2: the new bytes go in by renameat2(RENAME_EXCHANGE) and what they displaced
is compared with the bytes that were checked; a difference (a save that landed after the
writer's last look) is swapped back and kept as a version, never overwritten. Real files in
tmp_path; a save "in the window" is made by the test at the exact point between the writer's
recheck and its swap (history's `begin`, the step just before the write), so it is not left
to chance. Where the exchange is missing, today's plain rename is used and `doctor` says so."""

import hashlib
import json
import os

import pytest
from click.testing import CliRunner

from policy import fileio
from assistant.cli import main
from assistant.confine import Root
from assistant.notes.store import Conflict

SUPPORTED = fileio.exchange_supported(os.open(".", os.O_RDONLY | os.O_DIRECTORY))


def _temps(folder):
    return [n for n in os.listdir(folder) if n.startswith(fileio.TEMP_PREFIX)]


@pytest.fixture
def no_exchange(monkeypatch):
    """A kernel without renameat2: the lookup finds nothing (what ENOSYS looks like)."""
    monkeypatch.setattr(fileio, "_renameat2", (None, None))


needs_exchange = pytest.mark.skipif(not SUPPORTED, reason="this filesystem has no RENAME_EXCHANGE")


@needs_exchange
def test_swap_over_the_checked_bytes_writes_and_leaves_nothing(tmp_path):
    (tmp_path / "n.md").write_bytes(b"old\n")
    kept = []
    with Root(tmp_path) as root:
        assert root.write_over("n.md", b"new\n", expect=b"old\n", keep=kept.append) is True
    assert (tmp_path / "n.md").read_bytes() == b"new\n"
    assert kept == [] and _temps(tmp_path) == []


@needs_exchange
def test_a_save_the_writer_did_not_check_is_swapped_back_and_kept(tmp_path):
    (tmp_path / "n.md").write_bytes(b"saved by hand meanwhile\n")
    kept = []
    with Root(tmp_path) as root:
        assert root.write_over("n.md", b"new\n", expect=b"what was checked\n", keep=kept.append) is False
    assert (tmp_path / "n.md").read_bytes() == b"saved by hand meanwhile\n"
    assert kept == [b"saved by hand meanwhile\n"] and _temps(tmp_path) == []


def test_create_only_where_nothing_is(tmp_path):
    (tmp_path / "made.md").write_bytes(b"made by hand meanwhile\n")
    with Root(tmp_path) as root:
        assert root.write_over("made.md", b"new\n", expect=None) is False
        assert root.write_over("fresh.md", b"new\n", expect=None) is True
    assert (tmp_path / "made.md").read_bytes() == b"made by hand meanwhile\n"
    assert (tmp_path / "fresh.md").read_bytes() == b"new\n" and _temps(tmp_path) == []


def test_remove_only_the_checked_bytes(tmp_path):
    (tmp_path / "a.md").write_bytes(b"checked\n")
    (tmp_path / "b.md").write_bytes(b"saved by hand meanwhile\n")
    kept = []
    with Root(tmp_path) as root:
        assert root.remove_if("a.md", expect=b"checked\n", keep=kept.append) is True
        assert root.remove_if("b.md", expect=b"checked\n", keep=kept.append) is False
    assert not (tmp_path / "a.md").exists()
    assert (tmp_path / "b.md").read_bytes() == b"saved by hand meanwhile\n"
    assert kept == [b"saved by hand meanwhile\n"] and _temps(tmp_path) == []


def test_without_the_exchange_today_s_rename_is_used(tmp_path, no_exchange):
    (tmp_path / "n.md").write_bytes(b"old\n")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert fileio.exchange_supported(fd) is False
        with pytest.raises(fileio.ExchangeUnsupported):
            fileio.swap_in("n.md", b"new\n", dir_fd=fd, expect=b"old\n", keep=None, max_bytes=100)
    finally:
        os.close(fd)
    assert (tmp_path / "n.md").read_bytes() == b"old\n" and _temps(tmp_path) == []
    with Root(tmp_path) as root:
        assert root.write_over("n.md", b"new\n", expect=b"old\n") is True
        assert root.can_exchange() is False
    assert (tmp_path / "n.md").read_bytes() == b"new\n" and _temps(tmp_path) == []


def _save_by_hand(note, text):
    """What an editor does: the text into a temp file beside the note, renamed over it."""
    tmp = note.parent / f".{note.name}.swp"
    tmp.write_bytes(text)
    os.replace(tmp, note)


def _in_the_window(monkeypatch, history, action):
    """Run `action` once, right after the writer's recheck under the lock (history's begin
    is the last step before the note is written)."""
    real = history.begin
    done = []

    def begin(version, data):
        real(version, data)
        if not done:
            done.append(True)
            action()
    monkeypatch.setattr(history, "begin", begin)


@needs_exchange
def test_a_hand_save_between_recheck_and_write_is_kept_as_a_version(ws, sessions, monkeypatch):
    mem = sessions(ws, "watched").memory
    mem.write("people/ana.md", "Ana keeps bees.\n")
    note = ws / "memory/people/ana.md"
    hand = b"Ana keeps bees and goats.\n"
    _in_the_window(monkeypatch, mem.history, lambda: _save_by_hand(note, hand))
    with pytest.raises(Conflict, match="saved by someone else while this write was being made; that save is kept"):
        mem.write("people/ana.md", "Ana moved away.\n", force=True)
    assert note.read_bytes() == hand
    versions = mem.history.versions("people/ana.md")
    assert versions[-1].source == "hand-edit" and mem.history.object_bytes(versions[-1].sha256) == hand
    assert hashlib.sha256(b"Ana moved away.\n").hexdigest() not in {v.sha256 for v in versions}
    assert not mem.history.intent_pending()
    assert _temps(note.parent) == []


@needs_exchange
def test_a_hand_save_between_recheck_and_removal_is_kept(ws, sessions, monkeypatch):
    mem = sessions(ws, "watched").memory
    note = ws / "memory/people/marek.md"
    hand = b"Marek: call him back.\n"
    _in_the_window(monkeypatch, mem.history, lambda: _save_by_hand(note, hand))
    with pytest.raises(Conflict, match="saved by someone else while it was being removed"):
        mem.remove("people/marek.md")
    assert note.read_bytes() == hand
    last = mem.history.versions("people/marek.md")[-1]
    assert last.source == "hand-edit" and not last.removed
    assert _temps(note.parent) == []


def test_doctor_says_whether_writes_swap(ws, no_exchange):
    r = CliRunner().invoke(main, ["-w", str(ws), "doctor", "--json", "--no-notify"])
    checks = [c for c in json.loads(r.stdout)["checks"] if c["area"] == "writes"]
    assert len(checks) == 2
    assert all("without renameat2 RENAME_EXCHANGE" in c["message"] and "fall back to a plain rename" in c["message"]
               for c in checks)


@needs_exchange
def test_doctor_says_memory_swaps_where_it_can(ws):
    r = CliRunner().invoke(main, ["-w", str(ws), "doctor", "--json", "--no-notify"])
    checks = [c for c in json.loads(r.stdout)["checks"] if c["area"] == "writes"]
    assert any(c["message"].startswith("memory/ swaps each new version in atomically") for c in checks)
