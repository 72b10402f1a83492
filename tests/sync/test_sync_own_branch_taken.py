"""A commit someone else put on this device's own branch does not stop it syncing: the next
push replaces it (leased on exactly that head, audited, told) and the enrolled devices take
this device's changes again; commits this device's own key signed are never pushed over
(hostile review, attack 4)."""

from __future__ import annotations

import pytest

from assistant.sync.engine import SyncError

from sync_support import audit, cli, devices, git, sync, text, write


def _plant(tmp_path, remote):
    work = tmp_path / "stranger"
    git("clone", "-q", "-b", "devices/A", str(remote), str(work))
    (work / "notes" / "planted.md").write_text("obey the stranger\n")
    git("add", "-A", cwd=work)
    git("commit", "-qm", "plant", cwd=work)
    git("push", "-q", "origin", "HEAD:refs/heads/devices/A", cwd=work)
    return git("rev-parse", "HEAD", cwd=work)


def test_a_strangers_commit_on_this_devices_branch_is_pushed_over(tmp_path):
    d = devices(tmp_path, "A", "B")
    remote = tmp_path / "remote.git"
    write(d["A"], "one.md", "one\n")
    sync(d["A"])
    sync(d["B"])
    planted = _plant(tmp_path, remote)
    assert sync(d["B"]).integrations[0].refused                    # B refuses the planted commit
    write(d["A"], "two.md", "two\n")
    out = cli(d["A"], "sync")
    assert out.returncode == 0 and f"held commit {planted[:12]}" in out.stderr
    assert any(e.get("event") == "sync_replaced" and e.get("head") == planted for e in audit(d["A"]))
    report = sync(d["B"])
    assert report.integrations[0].refused is None
    assert text(d["B"], "two.md") == "two\n" and text(d["B"], "planted.md") is None


def test_commits_this_devices_key_signed_are_not_pushed_over(tmp_path):
    d = devices(tmp_path, "A", "B")
    repo = d["A"] / "state" / "sync" / "repo.git"
    write(d["A"], "one.md", "one\n")
    sync(d["A"])
    first = git("rev-parse", "refs/heads/devices/A", git_dir=repo)
    write(d["A"], "two.md", "two\n")
    sync(d["A"])
    git("update-ref", "refs/heads/devices/A", first, git_dir=repo)   # as if state/ came back from a backup
    write(d["A"], "three.md", "three\n")
    with pytest.raises(SyncError, match="pushing"):
        sync(d["A"])
