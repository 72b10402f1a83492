"""files/ and the echo rule (review issue 25, files-and-echo.md): a file this device removed stays
removed when the other device's unchanged copy arrives only after the removal went out (the
remote held it back, or both synced at once): `files_removed` in exported.json keeps what was
last sent of it. A file the other device changed itself (a revert to what this device sent
included) is no echo and is taken."""

from __future__ import annotations

import json

import pytest

from assistant.secrets.vault import Vault
from assistant.sync.engine import SyncError

from workspaces import cheap_kdf
from sync_support import devices, files_on, get_file as got, git, put_file as put, sync

PASSPHRASE = "correct horse battery staple"
SECRET = "tangerine-Dream-4412-xyzzy"


def _pair(tmp_path):
    d = devices(tmp_path, "A", "B")
    files_on(d["A"]); files_on(d["B"])
    return d


def _exported(ws):
    return json.loads((ws / "state" / "sync" / "exported.json").read_text())


def test_a_removed_file_stays_removed_when_the_remote_holds_the_other_copy_back(tmp_path):
    d = _pair(tmp_path)
    remote = tmp_path / "remote.git"
    put(d["A"], "f.txt", "hello\n")
    sync(d["A"])
    assert sync(d["B"]).files[0].written == ["f.txt"]          # B pushes its copy
    held = git("rev-parse", "refs/heads/devices/B", git_dir=remote)
    git("update-ref", "-d", "refs/heads/devices/B", git_dir=remote)       # the remote hides it
    (d["A"] / "files" / "f.txt").unlink()
    sync(d["A"])                                               # the removal goes out
    git("update-ref", "refs/heads/devices/B", held, git_dir=remote)        # and puts it back
    report = sync(d["A"])
    assert report.files[0].written == [] and report.files[0].conflicts == []
    assert got(d["A"], "f.txt") is None
    assert "f.txt" in _exported(d["A"])["files_removed"]
    assert sync(d["B"]).files[0].removed == ["f.txt"]
    for name in ("A", "B", "A", "B"):
        sync(d[name])
    assert got(d["A"], "f.txt") is None and got(d["B"], "f.txt") is None
    # sent again: no longer in files_removed
    put(d["A"], "f.txt", "back again\n")
    sync(d["A"])
    assert "f.txt" not in _exported(d["A"]).get("files_removed", {})
    sync(d["B"])
    assert got(d["B"], "f.txt") == b"back again\n"


def test_a_removed_file_stays_removed_when_both_devices_sync_at_once(tmp_path):
    """B's sync fetched A's branch just before A pushed the removal, and pushed its copy just
    after (the timing is made with the remote's refs)."""
    d = _pair(tmp_path)
    remote = tmp_path / "remote.git"
    put(d["A"], "f.txt", "hello\n")
    sync(d["A"])
    sent = git("rev-parse", "refs/heads/devices/A", git_dir=remote)
    (d["A"] / "files" / "f.txt").unlink()
    sync(d["A"])                                               # the removal goes out ...
    removal = git("rev-parse", "refs/heads/devices/A", git_dir=remote)
    git("update-ref", "refs/heads/devices/A", sent, git_dir=remote)        # ... after B fetched
    assert sync(d["B"]).files[0].written == ["f.txt"]          # B pushes its copy after it
    git("update-ref", "refs/heads/devices/A", removal, git_dir=remote)
    assert sync(d["A"]).files[0].written == []
    assert got(d["A"], "f.txt") is None
    for name in ("B", "A", "B", "A"):
        sync(d[name])
    assert got(d["A"], "f.txt") is None and got(d["B"], "f.txt") is None


def test_an_older_copy_taken_in_two_steps_is_still_an_echo(tmp_path):
    d = _pair(tmp_path)
    put(d["A"], "f.txt", "one\n")
    for name in ("A", "B", "A"):
        sync(d[name])
    put(d["A"], "f.txt", "two, longer\n")
    sync(d["A"])
    remote = tmp_path / "remote.git"
    sync(d["B"])                                               # B's copy goes one -> two
    held = git("rev-parse", "refs/heads/devices/B", git_dir=remote)
    git("update-ref", "-d", "refs/heads/devices/B", git_dir=remote)
    (d["A"] / "files" / "f.txt").unlink()
    sync(d["A"])
    git("update-ref", "refs/heads/devices/B", held, git_dir=remote)
    assert sync(d["A"]).files[0].written == []
    for name in ("B", "A", "B"):
        sync(d[name])
    assert got(d["A"], "f.txt") is None and got(d["B"], "f.txt") is None


def _vault(ws, monkeypatch):
    cheap_kdf(ws)
    v = Vault.create(ws / "vault.enc", PASSPHRASE, opslimit=1, memlimit=8 << 20)
    v.set("wifi", SECRET)
    monkeypatch.setenv("ASSISTANT_VAULT_PASSPHRASE", PASSPHRASE)


def test_a_revert_on_the_other_device_is_taken_while_this_devices_push_is_blocked(tmp_path, monkeypatch):
    d = _pair(tmp_path)
    X, Y = "version X\n", "version Y, longer\n"
    put(d["A"], "f.txt", X)
    for name in ("A", "B", "A"):
        sync(d[name])
    _vault(d["A"], monkeypatch)
    put(d["A"], "s.txt", f"the wifi is {SECRET}\n")            # every A sync now pushes nothing
    put(d["B"], "f.txt", Y)
    sync(d["B"])
    with pytest.raises(SyncError):
        sync(d["A"])
    assert got(d["A"], "f.txt") == Y.encode()
    put(d["B"], "f.txt", X)                                    # B's person reverts
    sync(d["B"])
    with pytest.raises(SyncError):
        sync(d["A"])
    assert got(d["A"], "f.txt") == X.encode()                  # taken, not swallowed as an echo
    (d["A"] / "files" / "s.txt").unlink()
    for name in ("A", "B", "A", "B"):
        sync(d[name])
    assert got(d["A"], "f.txt") == X.encode() and got(d["B"], "f.txt") == X.encode()


def test_a_file_replacing_a_folder_lands(tmp_path):
    import shutil

    d = _pair(tmp_path)
    put(d["A"], "d/in.txt", "inside\n")
    for name in ("A", "B", "A"):
        sync(d[name])
    shutil.rmtree(d["B"] / "files" / "d")
    put(d["B"], "d", "IMPORTANT\n")
    sync(d["B"])
    report = sync(d["A"])
    assert report.files[0].aside == []
    assert got(d["A"], "d") == b"IMPORTANT\n"


def test_a_same_size_edit_with_its_mtime_put_back_is_sent(tmp_path):
    import os

    d = _pair(tmp_path)
    put(d["A"], "f.txt", "AAAA\n")
    sync(d["A"])
    sync(d["B"])
    st = os.stat(d["A"] / "files" / "f.txt")
    put(d["A"], "f.txt", "BBBB\n")
    os.utime(d["A"] / "files" / "f.txt", ns=(st.st_atime_ns, st.st_mtime_ns))   # as `cp -p`, `tar x` do
    assert sync(d["A"]).exported.files == 1
    sync(d["B"])
    assert got(d["B"], "f.txt") == b"BBBB\n"


def test_a_name_not_in_nfc_is_named_as_not_sent(tmp_path):
    d = _pair(tmp_path)
    put(d["A"], "cafe\u0301.txt", "not NFC\n")
    put(d["A"], "ok.txt", "fine\n")
    report = sync(d["A"])
    [(path, why)] = report.exported.unsent
    assert path == "cafe\u0301.txt" and "NFC" in why
    names = git("ls-tree", "-r", "--name-only", "devices/A", git_dir=tmp_path / "remote.git").splitlines()
    assert "files/ok.txt" in names and not [n for n in names if "caf" in n]


def test_one_sync_takes_a_bounded_number_of_files_and_the_next_takes_the_rest(tmp_path, monkeypatch):
    from assistant.sync import files as sync_files

    d = _pair(tmp_path)
    for n in range(5):
        put(d["A"], f"f{n}.bin", bytes([n]) * 1000)
    sync(d["A"])
    monkeypatch.setattr(sync_files, "MAX_SYNC_FILES", 2)
    first = sync(d["B"]).files[0]
    assert len(first.written) == 2 and len(first.deferred) == 3
    monkeypatch.setattr(sync_files, "MAX_SYNC_FILES", 200)
    monkeypatch.setattr(sync_files, "MAX_SYNC_BYTES", 2500)
    second = sync(d["B"]).files[0]
    assert len(second.written) == 2 and len(second.deferred) == 1
    assert not set(second.written) & set(first.written)       # what landed is not taken (or scanned) again
    third = sync(d["B"]).files[0]
    assert len(third.written) == 1 and not third.deferred
    assert all(got(d["B"], f"f{n}.bin") == bytes([n]) * 1000 for n in range(5))
    assert sync(d["B"]).files[0].written == []


def test_a_file_taken_in_is_scanned_once_not_again_on_its_way_back(tmp_path, monkeypatch):
    from assistant.secrets.scanner import Scanner

    d = _pair(tmp_path)
    body = "a long file body that only this test writes\n" * 50
    put(d["A"], "f.txt", body)
    sync(d["A"])
    seen = []
    real = Scanner.find

    def counting(self, text, *a, **kw):
        if text == body:
            seen.append(1)
        return real(self, text, *a, **kw)

    monkeypatch.setattr(Scanner, "find", counting)
    report = sync(d["B"])
    assert report.files[0].written == ["f.txt"] and report.exported.files == 1    # its copy goes out
    assert len(seen) == 1


def test_assistant_sync_says_what_waits_for_the_next_sync(tmp_path, monkeypatch):
    from acceptance_support import out, run_cli

    from assistant.cli import sync as cli_sync
    from assistant.sync import files as sync_files

    d = _pair(tmp_path)
    for n in range(3):
        put(d["A"], f"f{n}.txt", f"file {n}\n")
    sync(d["A"])
    monkeypatch.setattr(sync_files, "MAX_SYNC_FILES", 1)
    monkeypatch.setattr(cli_sync, "MAX_SYNC_FILES", 1)
    res = run_cli(["sync"], ws=d["B"])
    assert res.exit_code == 0, out(res)
    assert "2 more file(s) of files/ from A wait for the next sync" in out(res)
