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


# ------------------------------------------------------------ failures leave nothing behind
def _tree(path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_rename_into_itself_creates_nothing(root, layout):
    root.write_bytes("a/n.md", b"n\n")
    before = _tree(layout.root)
    with pytest.raises(ConfinementError, match="inside itself"):
        root.rename("a", "a/b/c/d")
    with pytest.raises(ConfinementError, match="inside itself"):
        root.rename("a", "a/x")
    assert _tree(layout.root) == before  # no a/b, a/b/c made on the way to the refusal


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


# ------------------------------------------------------------ a file mounted over a note
def _mount_ok(cmd: str) -> bool:
    return os.geteuid() == 0 and os.system(cmd + " 2>/dev/null") == 0


def test_file_bind_mounted_over_leaf_from_other_fs_is_not_read(layout, mode, tmp_path):
    """A file from another filesystem bind-mounted over a note: the parent resolves fine
    (no mount on the way), the leaf open crosses into the mount. Refused in both modes."""
    other = tmp_path / "otherfs"
    other.mkdir()
    if not _mount_ok(f"mount -t tmpfs -o size=64k tmpfs {other}"):
        pytest.skip("needs root to mount")
    try:
        (other / "secret").write_bytes(SENTINEL_BYTES)
        (layout.root / "x.md").write_bytes(b"mine\n")
        assert _mount_ok(f"mount --bind {other / 'secret'} {layout.root / 'x.md'}")
        try:
            with make_root(layout.root, mode) as r:
                for op in (lambda: r.read_bytes("x.md"), lambda: r.read_head("x.md", 4)):
                    with pytest.raises(ConfinementError, match="mount point"):
                        op()
        finally:
            os.system(f"umount -l {layout.root / 'x.md'}")
    finally:
        os.system(f"umount -l {other}")


def test_same_fs_file_bind_mount_over_leaf_refused_by_openat2(layout):
    """Same filesystem (equal st_dev): only openat2's RESOLVE_NO_XDEV on the leaf sees it.
    (The walk cannot; see the known limits in docs/confine.md.)"""
    from assistant.confine import openat2_available
    if not openat2_available():
        pytest.skip("openat2 not available")
    (layout.root / "x.md").write_bytes(b"mine\n")
    if not _mount_ok(f"mount --bind {layout.sentinel} {layout.root / 'x.md'}"):
        pytest.skip("needs root to bind-mount")
    try:
        before = layout.snapshot()
        with make_root(layout.root, "openat2") as r:
            with pytest.raises(ConfinementError, match="mount point"):
                r.read_bytes("x.md")
        layout.assert_untouched(before)
    finally:
        os.system(f"umount -l {layout.root / 'x.md'}")


# ------------------------------------------------------------ no descriptor or temp leaks
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


# ------------------------------------------------------------ renames and mkdirs vs link swaps
import ctypes  # noqa: E402
import time  # noqa: E402

_libc = ctypes.CDLL(None, use_errno=True)
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


# ------------------------------------------------------------ huge, sparse, device leaves
def test_read_head_of_a_huge_sparse_file_reads_only_the_head(root, layout):
    p = layout.root / "huge.md"
    with open(p, "wb") as f:
        f.write(b"head\n")
        f.truncate(1 << 40)  # 1 TiB, sparse
    assert root.read_head("huge.md", 5) == b"head\n"
    assert root.read_head("huge.md", 0) == b""
    with pytest.raises(OSError, match="limit"):
        root.read_bytes("huge.md")  # refused by size, before any read
    with pytest.raises(ValueError):
        root.read_head("huge.md", -1)


def test_device_node_at_the_leaf_is_never_opened(root, layout):
    if os.geteuid() != 0:
        pytest.skip("mknod needs root")
    import stat as st
    os.mknod(layout.root / "zero.md", st.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero
    for op in (lambda: root.read_bytes("zero.md"), lambda: root.read_head("zero.md", 8),
               lambda: root.write_bytes("zero.md", b"x"), lambda: root.rename("zero.md", "z.md")):
        with pytest.raises(ConfinementError, match="character device"):
            op()
    assert st.S_ISCHR(os.lstat(layout.root / "zero.md").st_mode)


def test_walk_and_sweep_do_not_enter_a_same_fs_bind_mount_with_openat2(layout):
    """sweep_temp deletes old `.tmp-*` files wherever it walks: entering a bind mount of an
    outside directory would delete outside files. openat2 mode refuses the mount (the walk
    mode's st_dev check sees only other filesystems; documented limit)."""
    from assistant.confine import openat2_available
    if not openat2_available():
        pytest.skip("openat2 not available")
    stale = layout.outside / ".tmp-assistant-0123456789abcdef"   # our exact pattern (issue 10 item 14)
    stale.write_bytes(b"outside, looks like our temp\n")
    stale.chmod(0o600)
    os.utime(stale, (1, 1))
    (layout.root / "m").mkdir()
    if not _mount_ok(f"mount --bind {layout.outside} {layout.root / 'm'}"):
        pytest.skip("needs root to bind-mount")
    try:
        with make_root(layout.root, "openat2") as r:
            assert r.walk_files() == []
            assert r.sweep_temp(0) == 0
        assert stale.exists()
    finally:
        os.system(f"umount -l {layout.root / 'm'}")


# ------------------------------------------------------------ lookalikes the table missed
@pytest.mark.parametrize("rel, why", [
    ("\u2100.md", "NFKC"), ("notes/\u2105/x.md", "NFKC"), ("a/\ufe30/b.md", "NFKC"),
    ("\ufe19.md", "NFKC"), ("a\u2571b.md", "diagonal"), ("a\u29f9b.md", "reverse solidus"),
    ("a\u27cbb.md", "diagonal"), ("\uff61\uff61/x.md", "full stop"),
])
def test_separator_and_dot_lookalikes_refused(root, layout, rel, why):
    """Names that *render* as a path ("℀" is "a/c", "︰" is "..") would mislead whoever reads
    an approval request; the component and the reason are named, nothing is created."""
    with pytest.raises(ConfinementError, match=why):
        root.write_bytes(rel, b"x")
    assert list(layout.root.iterdir()) == []


@pytest.mark.parametrize("rel", ["\u00bd.md", "caf\u00e9.md", "\u2488 list.md", "\u65e5\u8a18/\u4eca\u65e5.md"])
def test_ordinary_unicode_names_still_accepted(root, rel):
    root.write_bytes(rel, b"ok\n")
    assert root.read_bytes(rel) == b"ok\n"


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
