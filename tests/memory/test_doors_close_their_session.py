"""Every door closes the session it opens (issue 21, lifetimes): the plain Python API
(`assistant.memory.memory_write` / `memory_read` / `memory_list`), `open_memory` when its Memory
is closed, and the `assistant memory` and `assistant runs` commands. A dropped session keeps its
history, index and files/ descriptors open; twenty calls of the API once left them all open."""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager

import pytest
from click.testing import CliRunner

from assistant.cli import main
from assistant.memory import memory_list, memory_read, memory_write, open_memory
from assistant.workspace.layout import init_workspace

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd (Linux)")


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@contextmanager
def no_collection():
    """The garbage collector off: a dropped session must not be rescued by a collection that
    happens to run in the middle (it would close the descriptors the door left open)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    init_workspace(root)
    # one call first: whatever a first call sets up for good (imports, caches) is not counted
    memory_write("warm.md", "warm\n", workspace=root)
    memory_read("warm.md", workspace=root)
    return root


def test_twenty_api_calls_leave_no_descriptor_open(ws):
    with no_collection():
        before = open_descriptors()
        rev = None
        for i in range(10):
            memory_write("people/ann.md", f"Ann, version {i}\n", base=rev, workspace=ws)
            rev = memory_read("people/ann.md", workspace=ws).revision
        assert open_descriptors() == before
        assert memory_read("people/ann.md", workspace=ws).content == "Ann, version 9\n"
        memory_list(workspace=ws)
        assert open_descriptors() == before


def test_open_memory_closes_its_session_when_closed(ws):
    with no_collection():
        before = open_descriptors()
        with open_memory(ws) as mem:
            mem.write("a.md", "a\n")
            assert mem.read("a.md").content == "a\n"
        assert open_descriptors() == before
        mem = open_memory(ws)
        mem.read("a.md")
        mem.close()
        mem.close()          # a second close does nothing
        assert open_descriptors() == before


def test_memory_and_runs_commands_close_their_session(ws):
    runner = CliRunner()
    for args in (["memory", "ls"], ["memory", "log"], ["runs"]):   # each opens its session once
        assert runner.invoke(main, ["-w", str(ws), *args]).exit_code == 0
    with no_collection():
        before = open_descriptors()
        for _ in range(5):
            for args in (["memory", "cat", "warm.md"], ["memory", "log"], ["memory", "ls"], ["runs"]):
                result = runner.invoke(main, ["-w", str(ws), *args])
                assert result.exit_code == 0, result.output
        assert open_descriptors() == before
