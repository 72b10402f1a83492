"""Crash test: a child process rewriting one note in a loop is SIGKILLed at random moments,
>= 200 times per resolver mode. After every kill the note is exactly the old or the new
content, never torn, empty or missing; stale temp files are swept afterwards."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import sys
import time

import pytest

from assistant.confine import TEMP_PREFIX, Root
from confine_fixtures import layout, mode  # noqa: F401  (fixtures)
from confine_fixtures import make_root, root
from assistant.confine import ConfinementError

KILLS = 200
MAX_KILLS = KILLS + 60  # slow disk (fsync under load): extra kills, window widening to 1 s
NOTE = "people/family/lina.md"


def body(tag: str) -> bytes:
    # big enough that a write takes several syscalls; self-checking so "parses" means something
    text = "".join(f"line {i}: {tag} {'x' * 60}\n" for i in range(2000))
    digest = hashlib.sha256(text.encode()).hexdigest()
    return f"---\nversion: {tag}\nsha256: {digest}\n---\n{text}".encode()


OLD, NEW = body("old"), body("new")


def child(root_path: str, use_openat2: bool, ready_fd: int) -> None:
    try:
        with Root(root_path, use_openat2=use_openat2) as r:
            r.write_bytes(NOTE, OLD)
            os.write(ready_fd, b"r")
            i = 0
            while True:
                r.write_bytes(NOTE, NEW if i % 2 == 0 else OLD)
                i += 1
    finally:
        os._exit(0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_sigkill_never_tears_a_note(layout, mode):
    rng = random.Random(0xC0FFEE)
    note = layout.root / NOTE
    seen = {OLD: 0, NEW: 0}
    temps_seen = 0
    window = 0.02  # kill 0.1 .. window seconds into the rewrite loop
    kills = 0
    # at least KILLS kills, and on until kills landed in both states and mid-write: when one
    # write takes longer than the window (fsync on a busy box), the window widens
    while kills < KILLS or not (seen[OLD] and seen[NEW] and temps_seen):
        assert kills < MAX_KILLS, f"kills never landed in both states/mid-write: {seen}, {temps_seen}"
        if kills >= KILLS:
            window = min(window * 1.25, 1.0)
        kills += 1
        rfd, wfd = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            os.close(rfd)
            child(str(layout.root), mode == "openat2", wfd)
        os.close(wfd)
        try:
            assert os.read(rfd, 1) == b"r", "child died before its first write"
            time.sleep(rng.uniform(0.0001, window))
            os.kill(pid, signal.SIGKILL)
        finally:
            os.close(rfd)
            _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        data = note.read_bytes()
        intact = data in (OLD, NEW)
        assert intact, f"torn note: {len(data)} bytes"
        seen[data] += 1
        temps_seen += sum(n.startswith(TEMP_PREFIX) for n in os.listdir(note.parent))
    # kills landed in both states and some mid-write (a temp file was left behind)
    assert seen[OLD] > 0 and seen[NEW] > 0, seen
    assert temps_seen > 0
    with Root(layout.root, use_openat2=(mode == "openat2")) as r:
        assert r.sweep_temp(older_than=0) > 0
        assert r.sweep_temp(older_than=0) == 0
        assert r.read_bytes(NOTE) in (OLD, NEW)
        assert r.walk_files() == [NOTE]
    assert not [n for n in os.listdir(note.parent) if n.startswith(".")]


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
