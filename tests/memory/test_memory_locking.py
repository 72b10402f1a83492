"""The memory writers' lock: exclusion across processes and threads, bounded wait, stale locks."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from assistant.notes.locking import FileLock, LockTimeout
from acceptance_support import cli

HOLDER = r"""
import sys, time
from assistant.notes.locking import FileLock
lock = FileLock(sys.argv[1], timeout=5)
lock.acquire()
print("held", flush=True)
time.sleep(60)
"""


def start_holder(path):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_live_holder_bounded_wait_then_dead_holder_releases(tmp_path):
    path = tmp_path / "memory.lock"
    proc = start_holder(path)
    try:
        t = time.monotonic()
        with pytest.raises(LockTimeout) as info:
            FileLock(path, timeout=0.3).acquire()
        waited = time.monotonic() - t
        assert 0.25 <= waited < 3
        msg = str(info.value)
        assert f"process {proc.pid}" in msg and "gave up after 0.3s" in msg
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # the holder died without unlocking: its lock died with it
    t = time.monotonic()
    with FileLock(path, timeout=5):
        assert time.monotonic() - t < 1


def test_stale_lock_file_from_dead_process_does_not_block(tmp_path):
    path = tmp_path / "memory.lock"
    path.write_text("999999\n")  # left behind by a crash
    with FileLock(path, timeout=0.5) as lock:
        assert lock.held
        assert path.read_text().strip() == str(os.getpid())
    assert not lock.held


def test_threads_are_serialised(tmp_path):
    path = tmp_path / "memory.lock"
    counter = tmp_path / "counter"
    counter.write_text("0")

    def bump():
        for _ in range(50):
            with FileLock(path, timeout=10):
                n = int(counter.read_text())
                time.sleep(0)  # invite a race
                counter.write_text(str(n + 1))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.read_text() == "200"


def test_symlinked_lock_path_is_refused(tmp_path):
    target = tmp_path / "elsewhere"
    os.symlink(target, tmp_path / "memory.lock")
    with pytest.raises(LockTimeout, match="symlink"):
        FileLock(tmp_path / "memory.lock").acquire()
    assert not target.exists()


def test_double_acquire_is_an_error(tmp_path):
    lock = FileLock(tmp_path / "l")
    with lock:
        with pytest.raises(RuntimeError):
            lock.acquire()


# acceptance (issue 5: memory), written from the words
def test_lock_lives_under_state_and_stale_lock_does_not_block(vault_ws):
    cli(vault_ws, "memory", "write", "l.md", input="one\n")
    state_files_before = {p for p in (vault_ws / "state").rglob("*")}
    assert state_files_before  # something (the lock) lives under state/
    # a dead process's lock: find lock-ish files and plant a dead pid in them
    locks = [p for p in (vault_ws / "state").rglob("*lock*") if p.is_file()]
    assert locks, "advisory lock file under state/"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for lk in locks:
        lk.write_text(str(dead.pid))
    t0 = time.perf_counter()
    cli(vault_ws, "memory", "write", "l2.md", input="two\n")
    assert time.perf_counter() - t0 < 10
