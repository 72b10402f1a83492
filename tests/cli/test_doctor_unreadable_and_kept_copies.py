"""`assistant doctor` names what `memory ls` marks unreadable (a note too large to read, a name
the notes do not allow) and a copy `memory edit` kept in state/edits/ that holds a secret, each
with its fix, and never prints the secret (issue 23, item 20)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from assistant.secrets.vault import Vault

PASS = "doctor test pass phrase"
SECRET = "Vb8-doctor-secret-41Qm"
TOKEN = "ghp_" + "R7dK2pQ9xV4mL8sT1wZ6nB3cY5hJ0fGaE2uI"     # a GitHub token's shape, random body


def _doctor(ws) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env["ASSISTANT_VAULT_PASSPHRASE"] = PASS
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "doctor", "--no-notify", "--json"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert SECRET not in r.stdout + r.stderr and TOKEN not in r.stdout + r.stderr
    return json.loads(r.stdout)


def test_doctor_names_unreadable_notes_and_kept_copies_holding_a_secret(vault_ws):
    ws = vault_ws
    Vault.create(ws / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024).set("alarm", SECRET)
    big = ws / "memory" / "big.md"
    big.write_text("x" * (300 * 1024))                      # over the default 256 KiB
    (ws / "memory" / "bad\x07name.md").write_text("a bell in the name\n")
    kept = ws / "state" / "edits" / "edit-k3p"
    kept.mkdir(parents=True)
    (kept / "lina.md").write_text(f"Lina's alarm code is {SECRET}\n")
    other = ws / "state" / "edits" / "edit-q9z"
    other.mkdir()
    (other / "marek.md").write_text(f"token {TOKEN}\n")
    harmless = ws / "state" / "edits" / "edit-h1a"
    harmless.mkdir()
    (harmless / "plain.md").write_text("nothing secret here\n")

    report = _doctor(ws)
    problems = [c for c in report["checks"] if not c["ok"]]
    by_text = {c["message"]: c["fix"] for c in problems}

    [(big_msg, big_fix)] = [(m, f) for m, f in by_text.items() if "memory/big.md" in m]
    assert "too large to read" in big_msg and "max_note_bytes" in big_fix and "split" in big_fix
    [(bad_msg, bad_fix)] = [(m, f) for m, f in by_text.items() if "memory/bad" in m]
    assert "\x07" not in bad_msg and "name not allowed" in bad_msg and "rename it" in bad_fix

    kept_lines = [(m, f) for m, f in by_text.items() if "state/edits/" in m]
    assert sorted(m.split(",")[0] for m, _ in kept_lines) == ["state/edits/edit-k3p/lina.md",
                                                              "state/edits/edit-q9z/marek.md"]
    for message, fix in kept_lines:
        assert "holds a secret" in message and "rm -r" in fix
    assert not any("edit-h1a" in m for m in by_text)         # a copy without a secret is no problem
    assert report["ok"] is False
