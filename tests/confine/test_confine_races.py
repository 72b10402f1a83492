"""Race tests: directories swapped for escaping symlinks, and directories renamed, while other
threads write and read through a Root.

Each case runs until enough really happened (a minimum number of swaps and of operations,
some refused and some through) and for at least MIN_DURATION, so a busy 2-core CI box only
makes it run longer, never fail for "too few races"; MAX_DURATION caps it (~1 s idle).

The outside tree (sentinel and a decoy note reached if a link were followed) must be
untouched: nothing created, changed or read (atime), and no read returns outside content.
"""

from __future__ import annotations

import os
import time

import pytest

from confine_fixtures import HAS_EXCHANGE, OUTSIDE_NOTE, exchange, layout, mode, race, root  # noqa: F401  (fixtures)

MIN_DURATION = 1.0   # seconds: at least this long, even when the minimums come sooner
MAX_DURATION = 20.0  # seconds: generous cap for a loaded machine; minimums unmet by then fail
MIN_SWAPS = 50
MIN_WRITES = 20     # each path exercised while swaps run, whatever the scheduler favours
MIN_READS = 100
INSIDE = b"inside note\n" * 10


def run_race(root, layout, swapper, write_path, min_ops=1000):
    """One writer and two readers of write_path through `root` while `swapper` runs; the
    outside tree stays untouched and no read returns the outside note."""
    def read() -> None:
        assert root.read_bytes(write_path) != OUTSIDE_NOTE, "reader got the outside note"

    def enough(n: dict[str, int]) -> bool:
        ops = sum(v for k, v in n.items() if k != "swaps")
        return (ops >= min_ops and n["swaps"] >= MIN_SWAPS
                and n["w_ok"] + n["w_refused"] >= MIN_WRITES
                and n["r_ok"] + n["r_refused"] >= MIN_READS
                and n["w_refused"] + n["r_refused"] > 0
                and n["w_ok"] + n["r_ok"] > 0)

    before = layout.snapshot()
    stats = race(swapper, [("w", lambda: root.write_bytes(write_path, INSIDE)), ("r", read), ("r", read)],
                 enough, min_s=MIN_DURATION, max_s=MAX_DURATION)
    layout.assert_untouched(before)
    assert (layout.outside / "sub" / "note.md").read_bytes() == OUTSIDE_NOTE
    print(stats)
    return stats


@pytest.mark.skipif(not HAS_EXCHANGE, reason="needs renameat2(RENAME_EXCHANGE)")
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
