"""A device's commit may only hold regular files under notes/: a symbolic link (mode 120000)
or a submodule (160000) there, even signed by an enrolled device, is kept aside, neither read
as a note's text nor taken as the note's removal (hostile review, attack 7)."""

from __future__ import annotations

import os

from assistant.sync.keys import DeviceKey

from sync_support import devices, git, sync, text, write


def test_a_link_or_a_submodule_in_a_signed_commit_is_kept_aside(tmp_path):
    d = devices(tmp_path, "A", "B")
    remote = tmp_path / "remote.git"
    write(d["A"], "kept.md", "a note B must keep\n")
    sync(d["A"])
    sync(d["B"])
    work = tmp_path / "work"
    git("clone", "-q", "-b", "devices/A", str(remote), str(work))
    os.symlink("/etc/passwd", work / "notes" / "link.md")
    git("add", "notes/link.md", cwd=work)
    git("rm", "-q", "--cached", "notes/kept.md", cwd=work)
    git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},notes/kept.md", cwd=work)
    tree = git("write-tree", cwd=work)
    parent = git("rev-parse", "HEAD", cwd=work)
    sig = DeviceKey.load(d["A"] / "state" / "sync").sign("A", tree, parent)     # A itself signs it
    commit = git("commit-tree", tree, "-p", parent, "-m", f"sync from A\n\nSync-Device: A\nSync-Signature: {sig}\n",
                 cwd=work)
    git("push", "-q", str(remote), f"{commit}:refs/heads/devices/A", cwd=work)
    report = sync(d["B"])
    aside = dict(report.integrations[0].aside)
    assert "symbolic link or a submodule" in aside["link.md"]
    assert "symbolic link or a submodule" in aside["kept.md"]
    assert text(d["B"], "link.md") is None
    assert text(d["B"], "kept.md") == "a note B must keep\n"
    assert not report.integrations[0].removed
