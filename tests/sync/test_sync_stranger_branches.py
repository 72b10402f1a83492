"""A branch nobody enrolled is never fetched, and a branch git cannot take fails alone: a
stranger who pushes an object git's fsck rejects stops nobody (hostile review, attack 1)."""

from __future__ import annotations

import subprocess

from sync_support import devices, git, sync, text, write


def _bad_commit(tmp_path, remote, ref):
    """Push to REF a commit git's fsck rejects (its author line has no email)."""
    work = tmp_path / "stranger.git"
    git("init", "-q", "--bare", str(work))
    tree = git("mktree", git_dir=work)
    body = f"tree {tree}\nauthor nobody 0 +0000\ncommitter nobody 0 +0000\n\nx\n"
    bad = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin", "--literally"],
                         input=body, capture_output=True, text=True, check=True,
                         env={"GIT_DIR": str(work), "PATH": "/usr/bin:/bin"}).stdout.strip()
    git("push", "-q", str(remote), f"{bad}:{ref}", git_dir=work)


def test_a_strangers_unreadable_branch_does_not_stop_the_enrolled_devices(tmp_path):
    d = devices(tmp_path, "A", "B")
    write(d["A"], "one.md", "from A\n")
    sync(d["A"])
    _bad_commit(tmp_path, tmp_path / "remote.git", "refs/heads/devices/evil")
    report = sync(d["B"])
    assert [i.refused for i in report.integrations] == [None]
    assert text(d["B"], "one.md") == "from A\n"
    assert git("for-each-ref", "--format=%(refname)", "refs/remotes/sync/devices/evil",
               git_dir=d["B"] / "state" / "sync" / "repo.git") == ""           # never fetched


def test_an_enrolled_branch_git_cannot_take_is_refused_alone(tmp_path):
    d = devices(tmp_path, "A", "B", "C")
    write(d["C"], "c.md", "from C\n")
    sync(d["C"])
    _bad_commit(tmp_path, tmp_path / "remote.git", "refs/heads/devices/A")
    report = sync(d["B"])
    by = {i.device: i for i in report.integrations}
    assert by["A"].refused and "could not be fetched" in by["A"].refused
    assert by["C"].refused is None and text(d["B"], "c.md") == "from C\n"
