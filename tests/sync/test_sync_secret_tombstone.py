"""The fix sync advises for a note whose name holds a secret (remove it, forget its versions)
leaves a tombstone naming the secret; one for a name that never travelled is dropped, not
sent, so sync goes on (hostile review, attack 10: every later sync stopped)."""

from __future__ import annotations

import pytest

from assistant.secrets.vault import Vault
from assistant.sync.engine import SyncError

from workspaces import cheap_kdf
from sync_support import cli, devices, git, sync, write

PASSPHRASE = "correct horse battery staple"
SECRET = "tangerine-Dream-4412-xyzzy"


def test_a_tombstone_for_a_secret_name_that_never_travelled_is_dropped(tmp_path, monkeypatch):
    d = devices(tmp_path, "A", "B")
    cheap_kdf(d["A"])
    Vault.create(d["A"] / "vault.enc", PASSPHRASE, opslimit=1, memlimit=8 << 20).set("wifi", SECRET)
    monkeypatch.setenv("ASSISTANT_VAULT_PASSPHRASE", PASSPHRASE)
    write(d["A"], "fine.md", "fine\n")
    folder = d["A"] / "memory" / SECRET[:12]
    folder.mkdir()
    (folder / f"{SECRET[12:]}.md").write_text("named by hand\n")
    with pytest.raises(SyncError, match="name"):
        sync(d["A"])
    (folder / f"{SECRET[12:]}.md").unlink()
    folder.rmdir()
    env = {"ASSISTANT_VAULT_PASSPHRASE": PASSPHRASE}
    assert cli(d["A"], "memory", "forget", f"{SECRET[:12]}/{SECRET[12:]}.md", env=env).returncode == 0
    report = sync(d["A"])
    assert report.pushed
    remote = tmp_path / "remote.git"
    pushed = git("log", "-p", "--all", git_dir=remote) + git("ls-tree", "-r", "devices/A", git_dir=remote)
    assert SECRET[:12] not in pushed and SECRET[12:] not in pushed
