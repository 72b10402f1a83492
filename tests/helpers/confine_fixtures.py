"""Shared fixtures for the confine tests: a root, an outside directory with a sentinel, and the
two resolver modes (openat2 and the per-component walk), and the race harness. Import the
fixtures by name."""

from __future__ import annotations

import ctypes
import os
import stat
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from assistant.confine import ConfinementError, Root, openat2_available

MODES = ["openat2", "walk"]
SENTINEL_BYTES = b"SENTINEL: outside the root, must never be created, changed or read\n"
OUTSIDE_NOTE = b"OUTSIDE NOTE: a followed link would land here\n"


def make_root(path, mode: str) -> Root:
    r = Root(path, use_openat2=(mode == "openat2"))
    assert r.uses_openat2 == (mode == "openat2")
    return r


@dataclass
class Layout:
    base: Path
    root: Path
    outside: Path
    sentinel: Path

    def _scan(self) -> dict:
        """Stat-only picture of everything outside the root (reading would touch atimes)."""
        seen = {}
        for dirpath, dirnames, filenames in os.walk(self.base):
            d = Path(dirpath)
            if d == self.root or self.root in d.parents:
                dirnames[:] = []
                continue
            for name in dirnames + filenames:
                p = d / name
                if p == self.root:
                    continue
                st = os.lstat(p)
                seen[str(p)] = (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns,
                                None if stat.S_ISDIR(st.st_mode) else st.st_atime_ns,
                                st.st_nlink if not stat.S_ISDIR(st.st_mode) else None)
        return seen

    def snapshot(self) -> dict:
        return self._scan()

    def assert_untouched(self, before: dict) -> None:
        after = self._scan()
        created = sorted(set(after) - set(before))
        removed = sorted(set(before) - set(after))
        assert not created, f"created outside the root: {created}"
        assert not removed, f"removed outside the root: {removed}"
        for k in before:
            b, a = before[k], after[k]
            # nlink of the sentinel may drop when a test removes a hard link inside the root
            assert b[:4] == a[:4], f"changed outside the root: {k}"
            assert b[4] == a[4], f"read outside the root (atime moved): {k}"
        # content check last: it reads the file itself, so put its atime back afterwards
        st = os.stat(self.sentinel)
        assert self.sentinel.read_bytes() == SENTINEL_BYTES
        os.utime(self.sentinel, ns=(st.st_atime_ns, st.st_mtime_ns))


def build_layout(base: Path) -> Layout:
    root = base / "root"
    outside = base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "sub").mkdir()
    sentinel = outside / "secret.txt"
    sentinel.write_bytes(SENTINEL_BYTES)
    for p in (outside / "sub" / "note.md",):
        p.write_bytes(OUTSIDE_NOTE)
    # atime far in the past: on relatime mounts any read of these files moves it
    old = time.time() - 30 * 86400
    for p in (sentinel, outside / "sub" / "note.md"):
        st = os.stat(p)
        os.utime(p, ns=(int(old * 1e9), st.st_mtime_ns))
    return Layout(base=base, root=root, outside=outside, sentinel=sentinel)


@pytest.fixture(params=MODES)
def mode(request) -> str:
    if request.param == "openat2" and not openat2_available():
        pytest.skip("openat2 not available on this kernel")
    return request.param


@pytest.fixture
def layout(tmp_path) -> Layout:
    return build_layout(tmp_path)


@pytest.fixture
def root(layout, mode):
    r = make_root(layout.root, mode)
    try:
        yield r
    finally:
        r.close()


@pytest.fixture(params=["auto", "walk"])
def box(tmp_path, request, monkeypatch):
    """(root directory, sentinel file outside it), in both resolution paths (openat2 where the
    kernel has it, and the per-component walk); the acceptance tests' simpler layout."""
    if request.param == "walk":
        monkeypatch.setenv("ASSISTANT_CONFINE_NO_OPENAT2", "1")
    else:
        monkeypatch.delenv("ASSISTANT_CONFINE_NO_OPENAT2", raising=False)
    root = tmp_path / "root"
    root.mkdir()
    sentinel = tmp_path / "sentinel.txt"
    sentinel.write_bytes(b"outside")
    return root, sentinel


# --- races -----------------------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
HAS_EXCHANGE = sys.platform.startswith("linux") and hasattr(_libc, "renameat2")


def exchange(a, b) -> None:
    """Atomically swap two directory entries (Linux renameat2 RENAME_EXCHANGE)."""
    if _libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def race(swap, workers, enough, *, min_s: float = 0.5, max_s: float = 20.0) -> dict[str, int]:
    """Run `swap` in a loop in one thread and each (name, op) of `workers` in a loop in its own,
    until `enough(counts)` holds and min_s has passed (max_s at the most; a busy machine only
    makes it run longer). counts: "swaps", and "NAME_ok" / "NAME_refused" per worker name (a
    ConfinementError or FileNotFoundError is a refusal). Any other error, in the swapper or in an
    op (an AssertionError included), fails the race; so does not doing enough by max_s."""
    stop = threading.Event()
    counts = {"swaps": 0} | {f"{name}_{end}": 0 for name, _ in workers for end in ("ok", "refused")}
    problems: list[str] = []

    def swapper() -> None:
        try:
            while not stop.is_set():
                swap()
                counts["swaps"] += 1
        except Exception as e:  # noqa: BLE001 - reported below
            problems.append(f"swapper: {e!r}")

    def worker(name: str, op) -> None:
        while not stop.is_set():
            try:
                op()
            except (ConfinementError, FileNotFoundError):
                counts[f"{name}_refused"] += 1
                continue
            except Exception as e:  # noqa: BLE001 - reported below
                problems.append(f"{name}: {e!r}")
                return
            counts[f"{name}_ok"] += 1

    threads = [threading.Thread(target=swapper)]
    threads += [threading.Thread(target=worker, args=pair) for pair in workers]
    for t in threads:
        t.start()
    start = time.monotonic()
    while not problems and time.monotonic() - start < max_s:
        if time.monotonic() - start >= min_s and enough(counts):
            break
        time.sleep(0.02)
    stop.set()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert problems == []
    # the race really happened (enough swaps and operations; some refused, some through), or
    # the test proved nothing: only a machine stalled for max_s gets here short
    assert enough(counts), f"too little happened in {max_s}s: {counts}"
    return counts
