"""The plain Python API (`assistant.memory.memory_write`) opens a session at the composition root
for each call (open_memory) and never closes it: every write leaves the session's history/
descriptor open, so a script that writes many notes runs out of descriptors (EMFILE), after
which every later call fails. The session's other doors close theirs (`with open_session`)."""

from __future__ import annotations

import gc
import os

import pytest

from assistant.memory import memory_list, memory_read, memory_write

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_the_python_api_leaves_no_descriptor_open(ws):
    memory_write("people/first.md", "---\ndescription: first\n---\nfirst\n", workspace=ws)   # one-time set-up
    gc.collect()
    before = open_fds()
    for n in range(5):
        memory_write(f"people/p{n}.md", f"---\ndescription: p{n}\n---\nnote {n}\n", workspace=ws)
        memory_read(f"people/p{n}.md", workspace=ws)
        memory_list(workspace=ws)
    gc.collect()
    assert len(open_fds() - before) == 0
