"""`doctor` lists the sync changes kept aside without a secret in their names, whole or split
across folders, even from an aside.json written before names were redacted at the source
(hostile review, attack 2: doctor printed the vault value)."""

from __future__ import annotations

import json

from assistant.secrets.vault import Vault

from workspaces import cheap_kdf
from sync_support import cli, devices

PASSPHRASE = "correct horse battery staple"
SECRET = "tangerine-Dream-4412-xyzzy"


def test_doctor_never_shows_a_secret_in_a_kept_aside_name(tmp_path):
    d = devices(tmp_path, "A", "B")
    cheap_kdf(d["B"])
    Vault.create(d["B"] / "vault.enc", PASSPHRASE, opslimit=1, memlimit=8 << 20).set("wifi", SECRET)
    rows = [{"device": "A", "path": path, "reason": "refused", "commit": "0" * 40, "time": "t"}
            for path in (f"{SECRET}.md", f"{SECRET[:12]}/{SECRET[12:]}.md", "plain.md")]
    (d["B"] / "state" / "sync" / "aside.json").write_text(json.dumps(rows))
    out = cli(d["B"], "doctor", env={"ASSISTANT_VAULT_PASSPHRASE": PASSPHRASE})
    shown = out.stdout + out.stderr
    assert "3 incoming change(s) kept aside" in shown and "plain.md" in shown
    assert SECRET not in shown and SECRET[:12] not in shown and SECRET[12:] not in shown
