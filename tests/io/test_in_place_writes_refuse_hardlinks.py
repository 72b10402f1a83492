"""Review (io): files the project writes *in place* (the memory lock, the audit log and its head,
history's log and intent, the hand-edit cache) must never write through a hard link.

A local process that can plant an entry in state/ or history/ links one of those names to a
person's file elsewhere (`ln ~/thesis.tex WORKSPACE/state/memory.lock`). O_NOFOLLOW stops a
symlink, not a hard link: before the fix, taking the memory lock truncated the person's file to
a pid, writing the audit head cut it to 256 bytes, and history's intent truncated it too. Each
test plants a real hard link on the real filesystem and checks the outside file is unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assistant.notes.history import History, HistoryError, Origin
from assistant.notes.frontmatter import revision as keyed_revision


def revision(data: bytes) -> str:
    return keyed_revision(data, b"review-key-of-32-bytes-for-tests")
from policy.audit import AuditError, AuditLog
from policy.fileio import FileLock, LockTimeout

PERSON = b"the person's own file, never to be touched\n" * 50


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    p = outside / "thesis.tex"
    p.write_bytes(PERSON)
    return p


def test_memory_lock_never_truncates_a_hard_linked_file(tmp_path: Path, victim: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    lock = state / "memory.lock"
    os.link(victim, lock)
    with pytest.raises(LockTimeout, match="hard link"):
        with FileLock(lock, timeout=0.5):
            pass
    assert victim.read_bytes() == PERSON


def test_audit_head_and_log_never_write_through_a_hard_link(tmp_path: Path, victim: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    log = AuditLog(state / "audit.jsonl", lock_timeout=0.5)
    log.append({"event": "first"})
    os.unlink(state / "audit.head")
    os.link(victim, state / "audit.head")
    with pytest.raises(AuditError, match="hard link"):
        log.append({"event": "second"})
    assert victim.read_bytes() == PERSON

    os.unlink(state / "audit.head")
    os.unlink(state / "audit.jsonl")
    os.link(victim, state / "audit.jsonl")
    with pytest.raises(AuditError, match="hard link"):
        log.append({"event": "third"})
    assert victim.read_bytes() == PERSON


def test_history_intent_and_log_never_write_through_a_hard_link(tmp_path: Path, victim: Path) -> None:
    hist = History(tmp_path / "history", revision=revision, lock_timeout=0.5)
    hist.overlap = False
    hist.ensure()
    v = hist.make_version("a.md", b"hello\n", Origin("person"))
    os.link(victim, tmp_path / "history" / "intent.json")
    with pytest.raises(HistoryError, match="hard link"):
        hist.begin(v, b"hello\n")
    assert victim.read_bytes() == PERSON

    os.unlink(tmp_path / "history" / "intent.json")
    os.link(victim, tmp_path / "history" / "log.jsonl")
    with pytest.raises(HistoryError, match="hard link"):
        hist.record(v, b"hello\n")
    assert victim.read_bytes() == PERSON


def test_hand_edit_cache_never_truncates_a_hard_linked_temp(tmp_path: Path, victim: Path) -> None:
    from assistant.notes.intake import _save

    state = tmp_path / "state"
    state.mkdir()
    cache = state / "history-seen.json"
    # the cache's temp name is predictable (its pid): plant a hard link there
    os.link(victim, state / f".{cache.name}.{os.getpid()}")
    _save(cache, {"notes": {}})
    assert victim.read_bytes() == PERSON
