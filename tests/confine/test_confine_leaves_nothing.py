"""A Root operation that fails leaves nothing behind: no temp file, no new parent directory, no
leaked descriptor, the old note intact (full disk, no inodes, a failed rename, thousands of
failing calls). Findings of a review of assistant/confine.py, each on the real filesystem."""

from __future__ import annotations

import os

import pytest

from assistant.confine import ConfinementError

from confine_fixtures import layout, make_root, mode, root


def _fd_count() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else -1


def _tree(path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.fixture
def small_fs(tmp_path):
    """A 256 KiB tmpfs (needs root and mount); skipped where that is not possible."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0 or os.system(f"mount -t tmpfs -o size=256k tmpfs {mnt} 2>/dev/null") != 0:
        pytest.skip("needs root to mount a small tmpfs")
    try:
        (mnt / "root").mkdir()
        yield mnt / "root"
    finally:
        os.system(f"umount -l {mnt}")


def _mount_ok(cmd: str) -> bool:
    return os.geteuid() == 0 and os.system(cmd + " 2>/dev/null") == 0


# review (confine): failures leave nothing behind
def test_rename_into_itself_creates_nothing(root, layout):
    root.write_bytes("a/n.md", b"n\n")
    before = _tree(layout.root)
    with pytest.raises(ConfinementError, match="inside itself"):
        root.rename("a", "a/b/c/d")
    with pytest.raises(ConfinementError, match="inside itself"):
        root.rename("a", "a/x")
    assert _tree(layout.root) == before  # no a/b, a/b/c made on the way to the refusal


def test_full_disk_leaves_old_note_and_no_temp_or_new_dirs(small_fs, mode):
    r = make_root(small_fs, mode)
    try:
        r.write_bytes("a/n.md", b"old\n")
        before = _tree(small_fs)
        fds = _fd_count()
        for rel in ("a/n.md", "new/deeper/still/n.md", "a/fresh/n.md"):
            with pytest.raises(OSError) as ei:
                r.write_bytes(rel, b"x" * (1024 * 1024))
            assert ei.value.errno in (28, 27), ei.value  # ENOSPC (or EFBIG)
            assert _tree(small_fs) == before, rel  # no .tmp-*, no half-made parents
        assert r.read_bytes("a/n.md") == b"old\n"
        assert _fd_count() == fds
    finally:
        r.close()


def test_failed_rename_removes_the_parents_it_made(small_fs, mode):
    """rename creates missing parents of `new` first; when the rename itself then fails
    (here: the source is a mount point, EBUSY/EXDEV) those parents are removed again."""
    (small_fs / "m").mkdir()
    if os.system(f"mount -t tmpfs -o size=64k tmpfs {small_fs / 'm'} 2>/dev/null") != 0:
        pytest.skip("cannot mount")
    try:
        r = make_root(small_fs, mode)
        try:
            before = _tree(small_fs)
            with pytest.raises(OSError):
                r.rename("m", "x/y/z/m")
            assert _tree(small_fs) == before
        finally:
            r.close()
    finally:
        os.system(f"umount -l {small_fs / 'm'}")


# review (confine): no descriptor or temp leaks
@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_thousands_of_failing_operations_leak_no_fd_and_no_temp(root, layout):
    r = layout.root
    (r / "a" / "b").mkdir(parents=True)
    os.symlink(str(layout.outside), r / "lnk")
    os.symlink("a", r / "rel")
    os.mkfifo(r / "fifo")
    (r / "dir.md").mkdir()
    (r / "f.md").write_bytes(b"x")
    os.link(layout.sentinel, r / "hl.md")
    bad = ["lnk/x.md", "rel/b/x.md", "fifo", "fifo/x.md", "dir.md", "f.md/x", "nope/x.md",
           "a/b/nope.md", "lnk", "hl.md", "a/../x", ".tmp-0123456789abcdef"]
    ops = [lambda p: root.read_bytes(p), lambda p: root.read_head(p, 5),
           lambda p: root.write_bytes(p, b"z"), lambda p: root.stat(p), lambda p: root.listdir(p),
           lambda p: root.rename(p, "a/moved.md"), lambda p: root.rename("f.md", p),
           lambda p: root.mkdirs(p)]
    before = layout.snapshot()
    fds = _fd_count()
    count = 0
    for _ in range(20):
        for p in bad:
            for op in ops:
                try:
                    op(p)
                except (OSError, ValueError):
                    pass
                count += 1
                if not (r / "f.md").exists():  # a rename that went through: put it back
                    os.rename(r / "a" / "moved.md", r / "f.md")
        root.write_bytes("a/b/c/n.md", b"ok")
        assert root.read_bytes("a/b/c/n.md") == b"ok"
    assert count >= 1900
    assert _fd_count() == fds
    layout.assert_untouched(before)
    leftovers = [str(p) for p in r.rglob(".*")]
    assert leftovers == [], leftovers


# review (confine): failures leave nothing behind
def test_no_inodes_for_the_temp_file_leaves_no_new_parents(tmp_path, mode):
    """The temp file itself cannot be created (tmpfs out of inodes) after the missing parents
    were made: they are removed again."""
    mnt = tmp_path / "few"
    mnt.mkdir()
    if not _mount_ok(f"mount -t tmpfs -o size=1m,nr_inodes=32 tmpfs {mnt}"):
        pytest.skip("needs root to mount a small tmpfs")
    try:
        n = 0
        try:
            while True:
                (mnt / f"f{n}").write_bytes(b"")
                n += 1
        except OSError:
            pass
        for i in range(2):  # room for exactly two new inodes: the parents, not the temp file
            (mnt / f"f{n - 1 - i}").unlink()
        before = _tree(mnt)
        with make_root(mnt, mode) as r:
            with pytest.raises(OSError) as ei:
                r.write_bytes("p/q/n.md", b"x")
            assert ei.value.errno == 28, ei.value
        assert _tree(mnt) == before
    finally:
        os.system(f"umount -l {mnt}")
