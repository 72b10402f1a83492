"""Interrupted syncs: kill -9 mid-integration and mid-push leave every note as it was or as it
should be, and the next sync completes the work (nothing lost, nothing logged twice); a remote
that hangs ends in a bounded error, with the hanging ssh killed too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assistant.sync.engine import SyncError, init_sync

from sync_support import ROOT, cli, devices, sync, text, versions, write

NOTES = 8


def _wait_for(path: Path, proc: subprocess.Popen, bound: float = 60.0) -> None:
    """Until PATH exists (bounded; the child must still be running)."""
    end = time.monotonic() + bound
    while not path.exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "the child ended early"
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.05)


CHILD_INTEGRATE = """
import sys, time
from pathlib import Path
sys.path[:0] = [{helpers!r}]
from assistant.notes.store import Memory
from sync_support import sync
real = Memory.write
count = [0]
def write(self, *a, **kw):
    out = real(self, *a, **kw)
    count[0] += 1
    if count[0] == 3:
        Path({marker!r}).touch()
        time.sleep(120)
    return out
Memory.write = write
sync(Path({ws!r}))
"""


def test_kill_9_mid_integration_is_completed_by_the_next_sync(tmp_path):
    d = devices(tmp_path, "A", "B")
    for i in range(NOTES):
        write(d["A"], f"n{i}.md", f"note {i}\n")
    sync(d["A"])
    marker = tmp_path / "three-written"
    script = CHILD_INTEGRATE.format(helpers=str(ROOT / "tests" / "helpers"), marker=str(marker), ws=str(d["B"]))
    child = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                             stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(marker, child)
    finally:
        child.kill()          # SIGKILL
        child.wait(timeout=30)
    present = [i for i in range(NOTES) if text(d["B"], f"n{i}.md") is not None]
    assert len(present) == 3
    for i in present:                                      # each note: as it was, or as it should be
        assert text(d["B"], f"n{i}.md") == f"note {i}\n"
    status = json.loads(cli(d["B"], "sync", "status", "--json").stdout)
    assert status["interrupted"]["device"] == "A"

    report = sync(d["B"])
    assert report.resumed and report.resumed["device"] == "A"
    for i in range(NOTES):
        assert text(d["B"], f"n{i}.md") == f"note {i}\n"
        mine = versions(d["B"], f"n{i}.md")
        assert len([v for v in mine if not v.imported]) == 1          # landed once
        assert len([v for v in mine if v.imported]) == 1              # logged once
    assert json.loads(cli(d["B"], "sync", "status", "--json").stdout)["interrupted"] is None


SSH = """#!/bin/sh
for last; do :; done
echo $$ >> {pids}
case "$last" in *{slow}*) if [ -e {switch} ]; then touch {marker}; sleep 120; fi ;; esac
exec sh -c "$last"
"""


def _fake_ssh(tmp_path: Path, slow: str) -> tuple[Path, Path, Path, Path]:
    """An ssh stand-in that runs the git command locally; while SWITCH exists, a command
    matching SLOW touches MARKER and hangs. Returns (script, switch, marker, pid list)."""
    script, switch, marker, pids = (tmp_path / "fake-ssh", tmp_path / "slow-on", tmp_path / "hanging",
                                    tmp_path / "ssh-pids")
    script.write_text(SSH.format(pids=pids, slow=slow, switch=switch, marker=marker))
    script.chmod(0o700)
    return script, switch, marker, pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:                   # a zombie is not alive
        return f.read().split(") ")[-1][0] != "Z"


def _ssh_devices(tmp_path: Path, script: Path, monkeypatch):
    monkeypatch.setenv("GIT_SSH_COMMAND", str(script))
    monkeypatch.setenv("GIT_SSH_VARIANT", "simple")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    d = devices(tmp_path, "A", "B", remote=remote)
    url = f"ssh://fakehost{remote}"
    for ws in d.values():
        init_sync(ws / "state", url, ws.name.upper())
    return d


def test_a_hanging_remote_ends_in_a_bounded_error_and_its_ssh_is_killed(tmp_path, monkeypatch):
    script, switch, marker, pids = _fake_ssh(tmp_path, "upload-pack")
    d = _ssh_devices(tmp_path, script, monkeypatch)
    write(d["A"], "n.md", "one\n")
    switch.touch()
    with pytest.raises(SyncError, match="did not finish within 2s"):
        sync(d["A"], network_timeout=2)
    assert marker.exists()
    for pid in map(int, pids.read_text().split()):
        assert not _alive(pid)
    switch.unlink()
    assert sync(d["A"]).pushed                      # nothing was half-done: the next sync works


CHILD_PUSH = """
import sys
from pathlib import Path
sys.path[:0] = [{helpers!r}]
from sync_support import sync
sync(Path({ws!r}))
"""


def test_kill_9_mid_push_is_completed_by_the_next_sync(tmp_path, monkeypatch):
    script, switch, marker, pids = _fake_ssh(tmp_path, "receive-pack")
    d = _ssh_devices(tmp_path, script, monkeypatch)
    write(d["A"], "n.md", "one\n")
    switch.touch()
    child = subprocess.Popen([sys.executable, "-c", CHILD_PUSH.format(helpers=str(ROOT / "tests" / "helpers"),
                                                                       ws=str(d["A"]))],
                             env=dict(os.environ, PYTHONPATH=str(ROOT)), stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(marker, child)
    finally:
        child.kill()
        child.wait(timeout=30)
        for pid in map(int, pids.read_text().split()):     # the connection drops with it
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    switch.unlink()
    sync(d["B"])
    assert text(d["B"], "n.md") is None                     # nothing reached the remote
    assert json.loads(cli(d["A"], "sync", "status", "--json").stdout)["unpushed"] is True
    assert sync(d["A"]).pushed
    sync(d["B"])
    assert text(d["B"], "n.md") == "one\n"
