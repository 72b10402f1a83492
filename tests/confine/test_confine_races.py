"""Race tests: directories swapped for escaping symlinks, and directories renamed, while other
threads write and read through a Root.

Each case runs until enough really happened (a minimum number of swaps and of operations,
some refused and some through) and for at least MIN_DURATION, so a busy 2-core CI box only
makes it run longer, never fail for "too few races"; MAX_DURATION caps it (~1 s idle).

The outside tree (sentinel and a decoy note reached if a link were followed) must be
untouched: nothing created, changed or read (atime), and no read returns outside content.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time

import pytest

from assistant.confine import ConfinementError
from confine_fixtures import OUTSIDE_NOTE, layout, mode, root  # noqa: F401  (fixtures)
from assistant.confine import Root
from confine_fixtures import make_root
from confine_fixtures import box

MIN_DURATION = 1.0   # seconds: at least this long, even when the minimums come sooner
MAX_DURATION = 20.0  # seconds: generous cap for a loaded machine; minimums unmet by then fail
MIN_SWAPS = 50
MIN_WRITES = 20     # each path exercised while swaps run, whatever the scheduler favours
MIN_READS = 100
INSIDE = b"inside note\n" * 10

_libc = ctypes.CDLL(None, use_errno=True)
_RENAME_EXCHANGE = 2


def exchange(a, b) -> None:
    """Atomically swap two directory entries (Linux renameat2 RENAME_EXCHANGE)."""
    if _libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


has_exchange = sys.platform.startswith("linux") and hasattr(_libc, "renameat2")


def run_race(root, layout, swapper, write_path, min_ops=1000):
    stop = threading.Event()
    stats = {"w_ok": 0, "w_refused": 0, "r_ok": 0, "r_refused": 0, "swaps": 0}
    problems = []

    def swap_loop():
        try:
            while not stop.is_set():
                swapper()
                stats["swaps"] += 1
        except Exception as e:  # noqa: BLE001
            problems.append(f"swapper failed: {e!r}")

    def writer():
        while not stop.is_set():
            try:
                root.write_bytes(write_path, INSIDE)
                stats["w_ok"] += 1
            except (ConfinementError, FileNotFoundError):
                stats["w_refused"] += 1
            except Exception as e:  # noqa: BLE001
                problems.append(f"writer: {e!r}")
                return

    def reader():
        while not stop.is_set():
            try:
                data = root.read_bytes(write_path)
                if data == OUTSIDE_NOTE:
                    problems.append("reader got the outside note")
                    return
                stats["r_ok"] += 1
            except (ConfinementError, FileNotFoundError):
                stats["r_refused"] += 1
            except Exception as e:  # noqa: BLE001
                problems.append(f"reader: {e!r}")
                return

    before = layout.snapshot()
    threads = [threading.Thread(target=f) for f in (swap_loop, writer, reader, reader)]

    def enough() -> bool:
        ops = sum(v for k, v in stats.items() if k != "swaps")
        return (ops >= min_ops and stats["swaps"] >= MIN_SWAPS
                and stats["w_ok"] + stats["w_refused"] >= MIN_WRITES
                and stats["r_ok"] + stats["r_refused"] >= MIN_READS
                and stats["w_refused"] + stats["r_refused"] > 0
                and stats["w_ok"] + stats["r_ok"] > 0)

    for t in threads:
        t.start()
    start = time.monotonic()
    while not problems and time.monotonic() - start < MAX_DURATION:
        if time.monotonic() - start >= MIN_DURATION and enough():
            break
        time.sleep(0.02)
    stop.set()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert problems == []
    layout.assert_untouched(before)
    assert (layout.outside / "sub" / "note.md").read_bytes() == OUTSIDE_NOTE
    # the race really happened (enough swaps and operations; some refused, some through),
    # or the test proved nothing: only a machine stalled for MAX_DURATION gets here short
    assert enough(), f"too little happened in {MAX_DURATION}s: {stats}"
    print(stats)
    return stats


@pytest.mark.skipif(not has_exchange, reason="needs renameat2(RENAME_EXCHANGE)")
def test_intermediate_swapped_for_symlink_atomically(root, layout):
    """`a` flips between a real directory and a symlink to outside (atomic exchange)."""
    (layout.root / "a" / "sub").mkdir(parents=True)
    (layout.root / "a" / "sub" / "note.md").write_bytes(INSIDE)
    os.symlink(str(layout.outside), layout.root / "lnk")
    a, lnk = str(layout.root / "a"), str(layout.root / "lnk")
    run_race(root, layout, lambda: exchange(a, lnk), "a/sub/note.md")
    # whichever way round it ended, the real directory holds our note and nothing else
    real = layout.root / ("a" if not os.path.islink(a) else "lnk")
    assert (real / "sub" / "note.md").read_bytes() == INSIDE


def test_intermediate_replaced_by_symlink_and_back(root, layout):
    """`a` is renamed away, a symlink to outside put in its place, then removed and `a`
    restored: non-atomic, so writers also race the gap (and recreate `a` as a directory)."""
    (layout.root / "a" / "sub").mkdir(parents=True)
    a, hold = layout.root / "a", layout.root / "hold"

    def swap():
        try:
            os.rename(a, hold)
        except OSError:
            pass
        try:
            os.symlink(str(layout.outside), a)
        except FileExistsError:
            pass  # a writer recreated `a` in the gap
        time.sleep(0)
        if os.path.islink(a):
            os.unlink(a)
        try:
            os.rename(hold, a)
        except OSError:
            import shutil
            shutil.rmtree(hold, ignore_errors=True)

    run_race(root, layout, swap, "a/sub/note.md", min_ops=500)


def test_leaf_swapped_for_symlink(root, layout):
    """The note itself flips between a regular file and a symlink to the outside note."""
    (layout.root / "d").mkdir()
    (layout.root / "d" / "n.md").write_bytes(INSIDE)
    note = layout.root / "d" / "n.md"
    tmp_link, tmp_file = layout.root / "d" / "swap-link", layout.root / "d" / "swap-file"
    flip = [0]

    def swap():
        # each step atomically (rename) puts either a link to outside or a regular file at n.md
        flip[0] += 1
        if flip[0] % 2:
            os.symlink(str(layout.outside / "sub" / "note.md"), tmp_link)
            os.replace(tmp_link, note)
        else:
            tmp_file.write_bytes(INSIDE)
            os.replace(tmp_file, note)

    run_race(root, layout, swap, "d/n.md", min_ops=500)


def test_directory_renamed_mid_walk(root, layout):
    """Directories on the path move between parents (and back) while operations walk it."""
    (layout.root / "a" / "b" / "deep").mkdir(parents=True)
    (layout.root / "c").mkdir()
    os.symlink(str(layout.outside), layout.root / "c" / "out")  # a link beside the moving dirs
    ab, cb = layout.root / "a" / "b", layout.root / "c" / "b"
    a, z = layout.root / "a", layout.root / "z"
    flip = [0]

    def swap():
        flip[0] += 1
        src, dst = ((ab, cb), (cb, ab), (a, z), (z, a))[flip[0] % 4]
        try:
            os.rename(src, dst)
        except OSError:
            pass

    run_race(root, layout, swap, "a/b/deep/n.md", min_ops=500)
    # every note written landed inside the root
    for d, _, files in os.walk(layout.root):
        for f in files:
            assert (layout.root / d / f).read_bytes() == INSIDE


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


def _fd_count() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else -1


_has_exchange = sys.platform.startswith("linux") and hasattr(_libc, "renameat2")


def _exchange(a, b) -> None:
    if _libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) != 0:  # RENAME_EXCHANGE
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _race(swap, op, *, min_swaps=50, min_ops=300, min_s=0.5, max_s=20.0) -> dict:
    """Run `swap` and `op` in two threads until both did enough (and min_s passed), capped."""
    stop = threading.Event()
    n = {"swaps": 0, "ok": 0, "refused": 0}
    problems = []

    def swapper():
        try:
            while not stop.is_set():
                swap()
                n["swaps"] += 1
        except Exception as e:  # noqa: BLE001
            problems.append(repr(e))

    def worker():
        while not stop.is_set():
            try:
                op()
                n["ok"] += 1
            except (ConfinementError, FileNotFoundError):
                n["refused"] += 1
            except Exception as e:  # noqa: BLE001
                problems.append(repr(e))
                return

    ts = [threading.Thread(target=swapper), threading.Thread(target=worker)]
    for t in ts:
        t.start()
    t0 = time.monotonic()

    def enough():
        return (n["swaps"] >= min_swaps and n["ok"] + n["refused"] >= min_ops
                and n["ok"] > 0 and n["refused"] > 0)

    while not problems and time.monotonic() - t0 < max_s:
        if time.monotonic() - t0 >= min_s and enough():
            break
        time.sleep(0.02)
    stop.set()
    for t in ts:
        t.join(30)
    assert problems == []
    assert enough(), n
    return n


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
@pytest.mark.skipif(not _has_exchange, reason="needs renameat2(RENAME_EXCHANGE)")
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
    _race(lambda: _exchange(a, lnk), op)
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
