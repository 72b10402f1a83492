"""`assistant approvals deny ID --reason TEXT` unlocks the vault without asking (key_file) to key
its audit line, yet writes the person's reason scanned for credential shapes only: a vault value
typed into the reason lands raw in state/audit.jsonl (keyed with that same vault's key). The
approval page (`approvals serve`) answers through the same policy_files log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))

from web_approvals_support import file_request, make_ws  # noqa: E402

from assistant.secrets.vault import Vault

WIFI = "correct-horse-battery-93kd"
PASS = "deny reason pass"


def test_a_vault_value_in_a_deny_reason_never_reaches_the_audit_log(tmp_path):
    ws = make_ws(tmp_path)
    Vault.create(ws / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024).set("WIFI", WIFI)
    key = ws / "vault.key"
    key.write_text(PASS)
    key.chmod(0o600)
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace('key_file = ""', 'key_file = "vault.key"'))
    req = file_request(ws, "Ana likes tea.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    done = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "approvals", "deny", req.id,
                           "--reason", f"no; the wifi is {WIFI}"], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "without the audit key" not in done.stderr        # the door did unlock the vault
    audit = (ws / "state" / "audit.jsonl").read_text()
    assert '"approval"' in audit
    leaked = WIFI in audit               # (a bool, so a failure never prints the log itself)
    assert not leaked, "the vault value from the reason is in state/audit.jsonl"
