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
