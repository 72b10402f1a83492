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
