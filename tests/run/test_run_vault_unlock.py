"""An unattended run whose vault cannot be unlocked fails closed and says how to unlock."""

from assistant.secrets.vault import Vault

from e2e_support import cli_env, make_ws, run_cli, write_script


def test_wrong_passphrase_fails_closed_with_unlock_help(tmp_path):
    ws = make_ws(tmp_path)
    v = Vault.create(ws / "vault.enc", "the right passphrase", opslimit=1, memlimit=8 * 1024 * 1024)
    v.set("BANK_PIN", "0123-4567-8901-zz")
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "x.md", "content": "hello\n"}},
        {"reply": "done"},
    ])
    r = run_cli("-w", str(ws), "run", "--model", f"script:{script}", "note something",
                env=cli_env(ASSISTANT_VAULT_PASSPHRASE="not the passphrase"))
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert "ASSISTANT_VAULT_PASSPHRASE" in out          # the how-to-unlock help
    assert "not the passphrase" not in out and "0123-4567" not in out
    assert not (ws / "memory" / "x.md").exists()
