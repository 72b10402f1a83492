"""Secrets and checks at both ends: a note holding a vault value is never pushed (sync names it
and stops before pushing anything); an incoming note holding one of this device's vault values,
or failing the path or size rules, is kept aside, named by `sync status`, and never placed in
memory/ or history/."""

from __future__ import annotations

import json
import re

import pytest

from assistant.secrets.vault import Vault
from assistant.session import open_session
from assistant.sync.engine import SyncError

from workspaces import cheap_kdf
from sync_support import cli, devices, git, sync, text, versions, write

PASSPHRASE = "correct horse battery staple"
SECRET = "tangerine-Dream-4412-xyzzy"


def _vault(ws, monkeypatch):
    cheap_kdf(ws)
    v = Vault.create(ws / "vault.enc", PASSPHRASE, opslimit=1, memlimit=8 << 20)
    v.set("wifi", SECRET)
    monkeypatch.setenv("ASSISTANT_VAULT_PASSPHRASE", PASSPHRASE)


def test_a_note_holding_a_vault_value_is_never_pushed(tmp_path, monkeypatch):
    d = devices(tmp_path, "A", "B")
    _vault(d["A"], monkeypatch)
    write(d["A"], "ok.md", "nothing secret\n")
    (d["A"] / "memory" / "wifi.md").write_text(f"the wifi password is {SECRET}\n")   # by hand
    with pytest.raises(SyncError) as caught:
        sync(d["A"])
    assert "wifi.md" in str(caught.value) and SECRET not in str(caught.value)
    assert "nothing was pushed" in str(caught.value)
    assert git("for-each-ref", git_dir=tmp_path / "remote.git") == ""          # nothing at all
    out = cli(d["A"], "sync", env={"ASSISTANT_VAULT_PASSPHRASE": PASSPHRASE})
    assert out.returncode == 1 and "wifi.md" in out.stderr and SECRET not in out.stderr + out.stdout


def test_an_older_version_holding_a_value_stops_the_push_too(tmp_path, monkeypatch):
    d = devices(tmp_path, "A", "B")
    _vault(d["A"], monkeypatch)
    (d["A"] / "memory" / "wifi.md").write_text(f"password {SECRET}\n")
    with open_session(d["A"], "watched", kind="cli", transcript=False) as s:
        s.memory.notice()                                    # history records the hand edit
    (d["A"] / "memory" / "wifi.md").write_text("password removed\n")
    with pytest.raises(SyncError, match="wifi.md"):
        sync(d["A"])
    assert git("for-each-ref", git_dir=tmp_path / "remote.git") == ""


def test_an_incoming_note_holding_this_devices_vault_value_is_kept_aside(tmp_path, monkeypatch):
    d = devices(tmp_path, "A", "B")
    write(d["A"], "fine.md", "fine\n")
    write(d["A"], "leak.md", f"B's wifi is {SECRET}\n")     # a value A does not know is secret
    sync(d["A"])
    _vault(d["B"], monkeypatch)
    report = sync(d["B"])
    assert [p for p, _ in report.integrations[0].aside] == ["leak.md"]
    assert text(d["B"], "fine.md") == "fine\n"
    assert text(d["B"], "leak.md") is None
    assert not [v for v in versions(d["B"]) if v.path == "leak.md"]
    status = cli(d["B"], "sync", "status", "--json", env={"ASSISTANT_VAULT_PASSPHRASE": PASSPHRASE})
    info = json.loads(status.stdout)
    assert [a["path"] for a in info["aside"]] == ["leak.md"] and SECRET not in status.stdout


def test_an_incoming_note_over_the_size_cap_or_with_a_bad_name_is_kept_aside(tmp_path):
    d = devices(tmp_path, "A", "B")
    write(d["A"], "fine.md", "fine\n")
    sync(d["A"])
    cfg = d["B"] / "config.toml"
    cfg.write_text(re.sub(r"(?m)^max_note_bytes = .*$", "max_note_bytes = 1024", cfg.read_text()))
    write(d["A"], "big.md", "x" * 5000 + "\n")
    sync(d["A"])
    report = sync(d["B"])
    assert [p for p, _ in report.integrations[0].aside] == ["big.md"]
    assert "max_note_bytes" in report.integrations[0].aside[0][1]
    assert text(d["B"], "big.md") is None and text(d["B"], "fine.md") == "fine\n"


def test_a_signed_commit_with_names_the_writer_refuses_is_kept_aside(tmp_path):
    """An enrolled device is not trusted with names either: a tree holding a name the path
    grammar or memory's `.md` rule refuses (made and signed with A's own key) lands nothing."""
    from assistant.sync.keys import DeviceKey

    d = devices(tmp_path, "A", "B")
    write(d["A"], "fine.md", "fine\n")
    sync(d["A"])
    remote = tmp_path / "remote.git"
    work = tmp_path / "work"
    git("clone", "-q", "-b", "devices/A", str(remote), str(work))
    for name in ("evil.txt", ".hidden.md", "we\u202eird.md"):
        (work / "notes" / name).write_text("planted\n")
    git("add", "-A", cwd=work)
    tree = git("write-tree", cwd=work)
    parent = git("rev-parse", "HEAD", cwd=work)
    signature = DeviceKey.load(d["A"] / "state" / "sync").sign("A", tree, parent)
    message = f"sync from A\n\nSync-Device: A\nSync-Signature: {signature}\n"
    commit = git("commit-tree", tree, "-p", parent, "-m", message, cwd=work)
    git("push", "-q", str(remote), f"{commit}:refs/heads/devices/A", cwd=work)
    report = sync(d["B"])
    assert report.integrations[0].refused is None
    assert sorted(p for p, _ in report.integrations[0].aside) == sorted(["evil.txt", ".hidden.md", "we\u202eird.md"])
    assert text(d["B"], "fine.md") == "fine\n"
    assert sorted(p.name for p in (d["B"] / "memory").iterdir() if not p.name.startswith(".")) == ["fine.md", "index.md"]
    assert not (d["B"] / "memory" / ".hidden.md").exists()


def test_a_version_whose_provenance_holds_a_vault_value_is_kept_aside(tmp_path, monkeypatch):
    from assistant.notes.history import Origin

    d = devices(tmp_path, "A", "B")
    with open_session(d["A"], "watched", kind="cli", transcript=False) as s:
        s.memory.write("m.md", "plain text\n", force=True, origin=Origin("assistant", model=f"model-{SECRET}"))
    sync(d["A"])
    _vault(d["B"], monkeypatch)
    report = sync(d["B"])
    assert report.integrations[0].aside == [("m.md", "a version's provenance carries a secret")]
    assert text(d["B"], "m.md") is None
    assert not any(SECRET in line for line in (d["B"] / "history" / "log.jsonl").read_text().splitlines())


def test_a_note_whose_name_holds_a_vault_value_is_never_pushed(tmp_path, monkeypatch):
    d = devices(tmp_path, "A", "B")
    _vault(d["A"], monkeypatch)
    (d["A"] / "memory" / SECRET[:12]).mkdir()
    (d["A"] / "memory" / SECRET[:12] / f"{SECRET[12:]}.md").write_text("harmless text\n")   # split by a folder
    with pytest.raises(SyncError) as caught:
        sync(d["A"])
    assert "name" in str(caught.value)
    assert SECRET[:12] not in str(caught.value) and SECRET[12:] not in str(caught.value)
    assert git("for-each-ref", git_dir=tmp_path / "remote.git") == ""
