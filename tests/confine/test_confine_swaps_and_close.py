"""Root operations racing a link swapped in (renames, mkdirs, a directory flipping to a link) or
a close() from another thread never resolve outside the root. Issue 2's acceptance race and the
findings of a review of assistant/confine.py, in both resolver modes."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from assistant.confine import ConfinementError, Root

from confine_fixtures import HAS_EXCHANGE, box, exchange, layout, make_root, mode, race, root


def _fd_count() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else -1


def _race(swap, op, *, min_swaps=50, min_ops=300) -> dict:
    """Run `swap` and `op` in two threads until both did enough (some ops refused, some through)."""
    def enough(n: dict[str, int]) -> bool:
        return (n["swaps"] >= min_swaps and n["op_ok"] + n["op_refused"] >= min_ops
                and n["op_ok"] > 0 and n["op_refused"] > 0)
    return race(swap, [("op", op)], enough)


# acceptance (issue 2: Root), written from the words
def test_swap_race_never_escapes(box, tmp_path):
    root, sentinel = box
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_bytes(b"outside note")
    real = root / "d"
    real.mkdir()
    stop = threading.Event()

    def swapper():
        while not stop.is_set():
            try:
                os.rename(real, root / "d.real")
                os.symlink(outside, real)
                os.unlink(real)
                os.rename(root / "d.real", real)
            except OSError:
                pass

    t = threading.Thread(target=swapper, daemon=True)
    t.start()
    end = time.monotonic() + 1.0
    with Root(str(root)) as r:
        while time.monotonic() < end:
            for op in (lambda: r.write_bytes("d/x.md", b"inside"), lambda: r.read_bytes("d/x.md")):
                try:
                    data = op()
                    assert data in (None, b"inside")
                except OSError:   # ConfinementError, FileNotFoundError, or a lost race: refused
                    pass
    stop.set()
    t.join(5)
    assert (outside / "x.md").read_bytes() == b"outside note"
    assert sorted(os.listdir(outside)) == ["x.md"]
    assert sentinel.read_bytes() == b"outside"


# review (confine): close() while operations run
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


# review (confine): renames and mkdirs vs link swaps
@pytest.mark.skipif(not HAS_EXCHANGE, reason="needs renameat2(RENAME_EXCHANGE)")
def test_rename_into_and_out_of_a_dir_flipping_to_a_link(root, layout):
    """`a` atomically flips between a real directory and a symlink to outside while a note is
    renamed into `a/` and back out: it never lands outside, nothing outside moves in."""
    (layout.root / "a").mkdir()
    os.symlink(str(layout.outside), layout.root / "lnk")
    (layout.root / "n.md").write_bytes(b"note\n")
    a, lnk = str(layout.root / "a"), str(layout.root / "lnk")
    where = ["n.md"]

    def op():
        if where[0] == "n.md":
            root.rename("n.md", "a/n.md")
            where[0] = "a/n.md"
        else:
            try:
                root.rename("a/sub.md", "x.md")  # a name that exists only outside if followed
            except FileNotFoundError:
                pass
            root.rename("a/n.md", "n.md")
            where[0] = "n.md"

    (layout.outside / "sub.md").write_bytes(b"outside\n")
    before = layout.snapshot()
    _race(lambda: exchange(a, lnk), op)
    layout.assert_untouched(before)
    assert not (layout.root / "x.md").exists()
    real = layout.root / ("a" if not os.path.islink(a) else "lnk")
    found = [p for p in (layout.root / "n.md", real / "n.md") if p.exists()]
    assert len(found) == 1 and found[0].read_bytes() == b"note\n"


def test_mkdirs_never_follows_a_link_swapped_in_after_mkdirat(root, layout):
    """The swapper keeps replacing a freshly made `a` with a symlink to outside (the window
    between mkdirat and the open of the new directory); mkdirs and writes under it must
    never create anything outside."""
    a = layout.root / "a"
    gone = layout.root / "gone"

    def swap():
        try:
            os.rename(a, gone)  # whatever mkdirs just made
        except OSError:
            pass
        try:
            os.symlink(str(layout.outside), a)
        except FileExistsError:
            pass
        time.sleep(0)
        try:
            os.unlink(a) if os.path.islink(a) else None
        except FileNotFoundError:
            pass
        import shutil
        shutil.rmtree(gone, ignore_errors=True)

    flip = [0]

    def op():
        flip[0] += 1
        if flip[0] % 2:
            root.mkdirs("a/b/c")
        else:
            root.write_bytes("a/b/n.md", b"n\n")

    before = layout.snapshot()
    _race(swap, op)
    layout.assert_untouched(before)
    assert not (layout.outside / "b").exists()
