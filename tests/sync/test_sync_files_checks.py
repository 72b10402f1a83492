"""files/ held to the notes' standards at both ends ([sync] files = true): a file holding a
vault value is named and nothing is pushed; an incoming file holding one of this device's
vault values, over the size cap, hidden here, or that is no regular file or has a name the
path grammar refuses (even in a commit the enrolled device signed) is kept aside, named by
`sync status`, and never written into files/."""

from __future__ import annotations

import json
import os

import pytest

from assistant.secrets.vault import Vault
from assistant.sync import files as sync_files
from assistant.sync.engine import SyncError
from assistant.sync.keys import DeviceKey

from workspaces import cheap_kdf
from sync_support import cli, devices, files_on, get_file as got, git, put_file as put, sync

PASSPHRASE = "correct horse battery staple"
SECRET = "tangerine-Dream-4412-xyzzy"


def _vault(ws, monkeypatch):
    cheap_kdf(ws)
    v = Vault.create(ws / "vault.enc", PASSPHRASE, opslimit=1, memlimit=8 << 20)
    v.set("wifi", SECRET)
    monkeypatch.setenv("ASSISTANT_VAULT_PASSPHRASE", PASSPHRASE)


def test_a_file_holding_a_vault_value_is_named_and_nothing_is_pushed(tmp_path, monkeypatch):
    d = devices(tmp_path, "A", "B")
    files_on(d["A"])
    _vault(d["A"], monkeypatch)
    put(d["A"], "ok.txt", "nothing secret\n")
    put(d["A"], "router/wifi.txt", f"the wifi password is {SECRET}\n")
    with pytest.raises(SyncError) as caught:
        sync(d["A"])
    assert "files/router/wifi.txt" in str(caught.value) and SECRET not in str(caught.value)
    assert "nothing was pushed" in str(caught.value)
    assert git("for-each-ref", git_dir=tmp_path / "remote.git") == ""
    out = cli(d["A"], "sync", env={"ASSISTANT_VAULT_PASSPHRASE": PASSPHRASE})
    assert out.returncode == 1 and "files/router/wifi.txt" in out.stderr
    assert SECRET not in out.stderr + out.stdout
    # with files = false the same file never goes anywhere, so nothing stops the notes
    files_on(d["A"], False)
    assert sync(d["A"]).pushed
    assert not [f for f in git("ls-tree", "-r", "--name-only", "devices/A", git_dir=tmp_path / "remote.git").splitlines()
                if f.startswith("files/")]


def test_an_incoming_file_failing_a_check_is_kept_aside_and_named(tmp_path, monkeypatch):
    d = devices(tmp_path, "A", "B")
    files_on(d["A"]); files_on(d["B"])
    put(d["A"], "fine.txt", "fine\n")
    put(d["A"], "leak.txt", f"B's wifi is {SECRET}\n")     # a value A does not know is secret
    put(d["A"], "big.bin", b"x" * 5000)
    sync(d["A"])
    _vault(d["B"], monkeypatch)
    monkeypatch.setattr(sync_files, "MAX_FILE_BYTES", 1024)
    report = sync(d["B"])
    aside = dict(report.files[0].aside)
    assert sorted(aside) == ["files/big.bin", "files/leak.txt"]
    assert "larger than 1024 bytes" in aside["files/big.bin"] and "secret" in aside["files/leak.txt"]
    assert report.files[0].written == ["fine.txt"]
    assert got(d["B"], "leak.txt") is None and got(d["B"], "big.bin") is None
    status = cli(d["B"], "sync", "status", "--json", env={"ASSISTANT_VAULT_PASSPHRASE": PASSPHRASE})
    info = json.loads(status.stdout)
    assert sorted(a["path"] for a in info["files"]["aside"]) == ["files/big.bin", "files/leak.txt"]
    assert SECRET not in status.stdout
    shown = cli(d["B"], "sync", "status", env={"ASSISTANT_VAULT_PASSPHRASE": PASSPHRASE}).stdout
    assert "kept aside files/leak.txt from A" in shown


def test_links_submodules_and_refused_names_in_a_signed_commit_are_kept_aside(tmp_path):
    d = devices(tmp_path, "A", "B")
    files_on(d["A"]); files_on(d["B"])
    put(d["A"], "kept.txt", "a file B must keep\n")
    sync(d["A"])
    sync(d["B"])
    remote = tmp_path / "remote.git"
    work = tmp_path / "work"
    git("clone", "-q", "-b", "devices/A", str(remote), str(work))
    os.symlink("/etc/passwd", work / "files" / "link.txt")
    (work / "files" / ".profile").write_text("planted\n")
    (work / "files" / "cafe\u0301.txt").write_text("not NFC\n")
    (work / "files" / "secret.key").write_text("hidden on B\n")
    git("add", "-A", "files", cwd=work)
    git("rm", "-q", "--cached", "files/kept.txt", cwd=work)
    git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},files/kept.txt", cwd=work)
    tree = git("write-tree", cwd=work)
    parent = git("rev-parse", "HEAD", cwd=work)
    sig = DeviceKey.load(d["A"] / "state" / "sync").sign("A", tree, parent)     # A itself signs it
    commit = git("commit-tree", tree, "-p", parent, "-m", f"sync from A\n\nSync-Device: A\nSync-Signature: {sig}\n",
                 cwd=work)
    git("push", "-q", str(remote), f"{commit}:refs/heads/devices/A", cwd=work)
    report = sync(d["B"])
    assert report.integrations[0].refused is None
    aside = dict(report.files[0].aside)
    assert sorted(aside) == sorted(["files/link.txt", "files/kept.txt", "files/.profile", "files/cafe\u0301.txt",
                                    "files/secret.key"])
    assert "symbolic link or a submodule" in aside["files/link.txt"]
    assert "symbolic link or a submodule" in aside["files/kept.txt"]
    assert "path refused" in aside["files/.profile"]
    assert "NFC" in aside["files/cafe\u0301.txt"] and "hidden" in aside["files/secret.key"]
    assert not report.files[0].written and not report.files[0].removed
    assert sorted(os.listdir(d["B"] / "files")) == ["kept.txt"]
    assert got(d["B"], "kept.txt") == b"a file B must keep\n"


def test_a_file_whose_name_holds_a_vault_value_is_never_pushed(tmp_path, monkeypatch):
    d = devices(tmp_path, "A", "B")
    files_on(d["A"])
    _vault(d["A"], monkeypatch)
    put(d["A"], f"{SECRET[:12]}/{SECRET[12:]}.txt", "harmless text\n")     # split by a folder
    with pytest.raises(SyncError) as caught:
        sync(d["A"])
    assert "name" in str(caught.value) and "nothing was pushed" in str(caught.value)
    assert SECRET[:12] not in str(caught.value) and SECRET[12:] not in str(caught.value)
    assert git("for-each-ref", git_dir=tmp_path / "remote.git") == ""
