"""An incoming note whose *name* holds one of this device's vault values (whole, or split
across its folder names) is kept aside without the value ever being recorded or shown:
not in state/sync/aside.json, `sync`, `sync status` or `doctor` (hostile review, attacks 2-3)."""

from __future__ import annotations

from assistant.secrets.vault import Vault

from workspaces import cheap_kdf
from sync_support import cli, devices, sync, text, write

PASSPHRASE = "correct horse battery staple"
SECRET = "tangerine-Dream-4412-xyzzy"
HALVES = ("tangerine-Dr", "eam-4412-xyzzy")


def test_a_secret_in_an_incoming_name_is_never_recorded_or_shown(tmp_path, monkeypatch):
    d = devices(tmp_path, "A", "B")
    write(d["A"], f"{SECRET}.md", "named by B's value\n")            # A does not know it is secret
    write(d["A"], f"{HALVES[0]}/{HALVES[1]}.md", "split by a folder\n")
    write(d["A"], "fine.md", "fine\n")
    sync(d["A"])
    cheap_kdf(d["B"])
    Vault.create(d["B"] / "vault.enc", PASSPHRASE, opslimit=1, memlimit=8 << 20).set("wifi", SECRET)
    monkeypatch.setenv("ASSISTANT_VAULT_PASSPHRASE", PASSPHRASE)
    env = {"ASSISTANT_VAULT_PASSPHRASE": PASSPHRASE}
    out = cli(d["B"], "sync", env=env)
    assert out.returncode == 1 and "kept aside" in out.stderr
    assert text(d["B"], "fine.md") == "fine\n"
    shown = out.stdout + out.stderr
    for args in (("sync", "status"), ("sync", "status", "--json"), ("doctor",)):
        r = cli(d["B"], *args, env=env)
        shown += r.stdout + r.stderr
    assert "split across its folder names" in shown
    shown += (d["B"] / "state" / "sync" / "aside.json").read_text()
    assert SECRET not in shown
    assert HALVES[0] not in shown and HALVES[1] not in shown
