"""`open_session` unwinds whatever it opened when set-up fails part-way, whatever the failure.

Each case makes one step after files/ and history/ are open raise, and counts this process's
open descriptors (/proc/self/fd) before and after: nothing may be left open. The failures are
kept (their tracebacks hold the frames of open_session): closing must not wait for the garbage
collector."""

from __future__ import annotations

import os

import pytest

import assistant.session as session_module
from assistant.session import SessionError, open_session
from assistant.workspace.layout import open_workspace

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


class IndexBroke(RuntimeError):
    pass


def test_a_failing_index_leaves_nothing_open(ws, monkeypatch):
    workspace = open_workspace(ws)
    with open_session(workspace, "watched", kind="test", transcript=False):
        pass     # the first open does the one-time set-up (state/, history/), not counted

    def broken(*args, **kwargs):
        raise IndexBroke("the index cannot be built")

    monkeypatch.setattr(session_module, "_build_recall", broken)
    before, failures = open_fds(), []
    for _ in range(5):
        with pytest.raises(IndexBroke) as failure:
            open_session(workspace, "watched", kind="test", transcript=False)
        failures.append(failure)
    assert open_fds() == before


def test_a_failing_transcript_leaves_nothing_open(ws, monkeypatch):
    workspace = open_workspace(ws)
    with open_session(workspace, "watched", kind="test", transcript=False):
        pass

    class NoTranscript:
        def __init__(self, *args, **kwargs):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(session_module, "Transcript", NoTranscript)
    before, failures = open_fds(), []
    for _ in range(5):
        with pytest.raises(SessionError, match="transcript cannot be opened") as failure:
            open_session(workspace, "watched", kind="test", transcript=True, turns=False)
        failures.append(failure)
    assert open_fds() == before


def test_failing_tools_leave_nothing_open(ws, monkeypatch):
    # a step with no SessionError of its own (the tool registry) unwinds too
    workspace = open_workspace(ws)
    with open_session(workspace, "watched", kind="test", transcript=False):
        pass

    def no_tools():
        raise ImportError("a tool module is broken")

    monkeypatch.setattr(session_module, "all_tools", no_tools)
    before, failures = open_fds(), []
    for _ in range(5):
        with pytest.raises(ImportError) as failure:
            open_session(workspace, "watched", kind="test", transcript=False)
        failures.append(failure)
    assert open_fds() == before


def test_an_opened_session_closes_what_it_opened(ws):
    workspace = open_workspace(ws)
    with open_session(workspace, "watched", kind="test", transcript=False):
        pass
    before = open_fds()
    for n in range(5):
        with open_session(workspace, "watched", kind="test", transcript=True, turns=False) as session:
            session.memory.write(f"people/lina{n}.md", "---\ndescription: Lina\n---\nLina likes tea.\n")
    assert open_fds() == before
