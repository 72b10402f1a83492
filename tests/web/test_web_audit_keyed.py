"""`assistant approvals serve` keys its audit lines with the vault's audit key, got the way a
scheduled run unlocks the vault (here the [vault] key_file), never by a prompt (issue 23 item 3):
the answer's line and a refusal's line are keyed, and `audit verify` says the chain is intact."""

from __future__ import annotations

import os
import subprocess

from assistant.secrets.vault import Vault
from web_approvals_support import PY, Serve, audit_events, env, file_request, forms, make_ws

PASS = "approval page pass phrase"


def test_the_approval_page_writes_keyed_lines_through_the_key_file(tmp_path):
    ws = make_ws(tmp_path)
    Vault.create(ws / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024)
    key_file = tmp_path / "vault.key"
    key_file.write_text(PASS + "\n")
    os.chmod(key_file, 0o600)
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace('key_file = ""', f'key_file = "{key_file}"'))
    req = file_request(ws, "Ana likes tea.\n")
    with Serve(ws) as server:
        with server.client() as c:
            assert c.get("/login", params={"token": "not-the-token"}).status_code in (401, 403)
            assert c.get("/login", params={"token": server.token}).status_code == 303
            action, fields = forms(c.get(f"/r/{req.id}").text)["approve"]
            r = c.post(action, data={**fields, "remember": "once"})
            assert r.status_code == 200 and "Approved" in r.text, r.text
    events = audit_events(ws)
    refused = [e for e in events if e.get("event") == "web" and e.get("verdict") == "refused"]
    [answer] = [e for e in events if e.get("event") == "approval"]
    assert refused and all(e["chain"] == "hmac-sha256" for e in refused)
    assert answer["chain"] == "hmac-sha256" and answer["by"] == "web"
    shown = subprocess.run([PY, "-m", "assistant", "-w", str(ws), "audit", "verify"], capture_output=True,
                           text=True, env=env(), timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "keyed with the vault's audit key" in shown.stdout
