"""Review findings against assistant/confine.py, each a test on the real filesystem in both
resolver modes (openat2 and the forced walk): the Root's descriptor closed mid-operation,
hard links read through, sweep_temp removing what is not ours, and leftovers after failures."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from assistant.confine import ConfinementError, Root
from confine_fixtures import SENTINEL_BYTES, layout, make_root, mode, root  # noqa: F401  (fixtures)


def _fd_count() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else -1


# ------------------------------------------------------------ close() while operations run
def test_close_during_operations_never_resolves_elsewhere(layout, mode):
    """close() from one thread while another writes: the freed descriptor number is reused
    at once by an open of the outside directory. An operation that had already fetched the
    number would then write *there*. The root descriptor must stay open until running
    operations finish (Go's os.Root refcounts it for the same reason)."""
    before = layout.snapshot()
    fds = _fd_count()
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads between almost every bytecode
    try:
        for _ in range(30):
            r = make_root(layout.root, mode)
            running = threading.Event()
            errors = []

            def worker():
                n = 0
                while True:
                    try:
                        r.write_bytes("esc.md", b"E")
                        r.mkdirs("made")
                    except ValueError:
                        return  # closed: the only way out
                    except OSError as e:  # noqa: PERF203
                        errors.append(e)
                    n += 1
                    if n == 2:
                        running.set()

            t = threading.Thread(target=worker)
            t.start()
            assert running.wait(10)
            r.close()
            decoy = os.open(layout.outside, os.O_RDONLY | os.O_DIRECTORY)  # likely the same number
            try:
                t.join(10)
                assert not t.is_alive()
            finally:
                os.close(decoy)
            assert errors == []
    finally:
        sys.setswitchinterval(old_interval)
    layout.assert_untouched(before)
    assert not (layout.outside / "esc.md").exists() and not (layout.outside / "made").exists()
    if fds >= 0:
        assert _fd_count() == fds  # the last operation closed the descriptor


def test_closed_root_refuses_new_operations(layout, mode):
    r = make_root(layout.root, mode)
    r.write_bytes("a.md", b"x")
    r.close()
    r.close()  # idempotent
    for op in (lambda: r.read_bytes("a.md"), lambda: r.write_bytes("b.md", b"y"),
               lambda: r.listdir(), lambda: r.stat("a.md"), lambda: r.exists("a.md"),
               lambda: r.sweep_temp(0), lambda: r.walk_files(), lambda: r.fileno()):
        with pytest.raises(ValueError, match="closed"):
            op()
    assert not (layout.root / "b.md").exists()
    assert "closed" in repr(r)


# ------------------------------------------------------------ hard links are never read
@pytest.mark.parametrize("rel", ["hl.md", "x/y/hl.md"])
def test_hard_link_to_outside_file_is_never_read(root, layout, rel):
    """A hard link planted inside the root to an outside file (a key, the audit log) is
    indistinguishable by descriptors from a note: reading it would read the outside file.
    Reads refuse any leaf with more than one link; a write replaces the entry."""
    (layout.root / rel).parent.mkdir(parents=True, exist_ok=True)
    os.link(layout.sentinel, layout.root / rel)
    before = layout.snapshot()
    with pytest.raises(ConfinementError, match="hard links"):
        root.read_bytes(rel)
    with pytest.raises(ConfinementError, match="hard links"):
        root.read_head(rel, 16)
    layout.assert_untouched(before)  # sentinel's atime unmoved: not a byte was read
    assert root.stat(rel).st_nlink == 2  # stat (metadata only) still answers
    root.write_bytes(rel, b"ours now\n")
    assert root.read_bytes(rel) == b"ours now\n"
    assert layout.sentinel.read_bytes() == SENTINEL_BYTES


def test_hard_link_between_two_notes_is_refused_for_reads_too(root, layout):
    root.write_bytes("a.md", b"a\n")
    os.link(layout.root / "a.md", layout.root / "b.md")
    for rel in ("a.md", "b.md"):
        with pytest.raises(ConfinementError, match="2 hard links"):
            root.read_bytes(rel)
