"""The audit chain is keyed with a key the vault holds (issue 23 item 3): whoever can write
state/ can no longer append, change or cut lines so that `audit verify` says intact. A
workspace with no vault keeps an unkeyed chain and verify says so; lines written before the key
verify as such; deleting the log and its head together is reported; a time running backwards
and lines appended after the saved head are failures."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import policy.audit as audit_module
from assistant.cli import main
from assistant.secrets.audit_key import ENTRY, audit_key, stored_audit_key
from assistant.secrets.vault import Vault
from policy.approvals import Inbox, sha256_hex
from policy.audit import HMAC, SHA256, AuditLog, read_head, verify
from policy.kinds import KINDS

PASS = "audit chain pass phrase"
KEY = bytes(range(32))


def cli(ws, *args, stdin=None, passphrase=PASS):
    env = {"ASSISTANT_VAULT_PASSPHRASE": passphrase}
    return CliRunner().invoke(main, ["-w", str(ws), *args], input=stdin, env=env)


def with_vault(ws: Path) -> Path:
    Vault.create(ws / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024)
    return ws


def forge_append(path: Path, record: dict) -> None:
    """What anyone who can write state/ could do before the key: append a line chained with an
    unkeyed sha256 of the last line, and save a matching head (the format today's code wrote)."""
    data = path.read_bytes()
    lines = data.split(b"\n")[:-1]
    body = json.dumps({"time": "2099-01-01T00:00:00.000Z", **record})
    line = f'{{"seq":{len(lines) + 1},"prev":"{hashlib.sha256(lines[-1]).hexdigest()}",{body[1:]}'.encode()
    with open(path, "ab") as f:
        f.write(line + b"\n")
    head = json.dumps({"lines": len(lines) + 1, "hash": hashlib.sha256(line).hexdigest(),
                       "bytes": len(data) + len(line) + 1, "start": 1}).encode()
    path.with_suffix(".head").write_bytes(head + b" " * (255 - len(head)) + b"\n")


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


# --- through the CLI, on a real workspace -------------------------------------------------------

def test_a_forged_line_fails_verify_and_a_later_genuine_line_does_not_absorb_it(vault_ws):
    ws = with_vault(vault_ws)
    assert cli(ws, "memory", "write", "a.md", stdin="hello\n").exit_code == 0
    log = ws / "state" / "audit.jsonl"
    r = cli(ws, "audit", "verify")
    assert r.exit_code == 0 and "keyed with the vault's audit key" in r.stdout, r.output
    forge_append(log, {"event": "approval", "by": "cli", "verdict": "approved", "target": "people/x.md"})
    r = cli(ws, "audit", "verify")
    assert r.exit_code == 1, r.output
    assert "line 3" in r.stderr and "not keyed" in r.stderr
    assert cli(ws, "memory", "write", "b.md", stdin="more\n").exit_code == 0   # a genuine append after it
    r = cli(ws, "audit", "verify", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["line"] == 3


def test_deleting_both_the_log_and_its_head_is_reported(vault_ws):
    ws = with_vault(vault_ws)
    assert cli(ws, "memory", "write", "a.md", stdin="hello\n").exit_code == 0
    (ws / "state" / "audit.jsonl").unlink()
    (ws / "state" / "audit.head").unlink()
    r = cli(ws, "audit", "verify")
    assert r.exit_code == 1 and "intact" not in r.stdout
    assert "both gone" in r.stderr and "vault records that a keyed log was started" in r.stderr


def test_a_workspace_without_a_vault_keeps_an_unkeyed_chain_and_verify_says_so(ws):
    assert cli(ws, "memory", "write", "a.md", stdin="hello\n").exit_code == 0
    r = cli(ws, "audit", "verify")
    assert r.exit_code == 0 and r.stdout.startswith("intact: 2 line(s), 2 of them hash-chained")
    assert "unkeyed: this workspace has no vault" in r.stdout
    assert "shows editing, not forging" in r.stderr
    assert [json.loads(ln)["chain"] for ln in lines_of(ws / "state" / "audit.jsonl")] == [SHA256, SHA256]
    assert json.loads(cli(ws, "audit", "verify", "--json").stdout)["vault"] is False


def test_lines_written_before_the_keyed_chain_verify_as_such(vault_ws):
    ws = vault_ws
    assert cli(ws, "memory", "write", "a.md", stdin="hello\n").exit_code == 0      # no vault yet
    with_vault(ws)
    assert cli(ws, "memory", "write", "b.md", stdin="again\n").exit_code == 0
    kinds = [json.loads(ln)["chain"] for ln in lines_of(ws / "state" / "audit.jsonl")]
    assert kinds == [SHA256, SHA256, HMAC, HMAC]
    r = cli(ws, "audit", "verify")
    assert r.exit_code == 0, r.output
    assert "intact: 4 line(s), 4 of them hash-chained, 2 keyed with the vault's audit key" in r.stdout
    assert "lines 1-2 were chained without a key, before the vault held the audit key" in r.stderr
    out = json.loads(cli(ws, "audit", "verify", "--json").stdout)
    assert out["keyed"] is True and out["keyed_from"] == 3
    # the key lives inside vault.enc: never listed as a secret, never among the values scanned for
    vault = Vault.open(ws / "vault.enc", PASS)
    assert vault.names() == [] and vault.secrets() == {} and vault.internal(ENTRY) is not None
    assert cli(ws, "vault", "list").stdout.strip() == "(no secrets)"


def _file_request(ws):
    inbox = Inbox(ws / "state" / "approvals")
    req, _ = inbox.create(run_id="20261201T000000Z-run-abcdef", kind="memory", target="people/lina.md",
                          summary="update people/lina.md", reason="ask", sha256=sha256_hex(b"Lina\n"),
                          content="Lina\n", current=None, content_exact=True,
                          offers=KINDS["memory"].offers("people/lina.md"), timeout=600)
    return req


def test_approvals_approve_keys_its_line_through_the_key_file_without_a_prompt(vault_ws):
    ws = with_vault(vault_ws)
    assert cli(ws, "memory", "write", "a.md", stdin="hello\n").exit_code == 0
    key_file = ws.parent / "vault.key"
    key_file.write_text(PASS + "\n")
    os.chmod(key_file, 0o600)
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace('key_file = ""', f'key_file = "{key_file}"'))
    req = _file_request(ws)
    r = CliRunner().invoke(main, ["-w", str(ws), "approvals", "approve", req.id],
                           env={"ASSISTANT_VAULT_PASSPHRASE": None})
    assert r.exit_code == 0, r.output
    assert "warning" not in r.stderr
    last = json.loads(lines_of(ws / "state" / "audit.jsonl")[-1])
    assert last["event"] == "approval" and last["chain"] == HMAC
    assert cli(ws, "audit", "verify").exit_code == 0


def test_approvals_deny_that_cannot_unlock_without_a_prompt_says_its_line_is_unkeyed(vault_ws):
    ws = with_vault(vault_ws)
    assert cli(ws, "memory", "write", "a.md", stdin="hello\n").exit_code == 0
    req = _file_request(ws)
    r = CliRunner().invoke(main, ["-w", str(ws), "approvals", "deny", req.id],
                           env={"ASSISTANT_VAULT_PASSPHRASE": None})
    assert r.exit_code == 0, r.output
    assert "written without the audit key" in r.stderr and "key_file" in r.stderr
    last = json.loads(lines_of(ws / "state" / "audit.jsonl")[-1])
    assert last["event"] == "approval" and last["chain"] == SHA256
    r = cli(ws, "audit", "verify")
    assert r.exit_code == 1 and "line 3 is not keyed" in r.stderr


# --- the chain itself -------------------------------------------------------------------------

def keyed_log(tmp_path: Path, n: int = 5) -> Path:
    p = tmp_path / "audit.jsonl"
    log = AuditLog(p, key=KEY)
    for i in range(n):
        log.append({"event": "ruling", "target": f"n{i}.md", "verdict": "allow"})
    return p


def test_a_keyed_looking_line_with_a_copied_prev_is_caught_even_after_a_genuine_append(tmp_path):
    p = keyed_log(tmp_path)
    lines = lines_of(p)
    # replace the last line, keeping its prev (visible in the file), before the next genuine append
    forged = lines[-1].replace(b'"n4.md"', b'"secret-plan.md"')
    p.write_bytes(b"\n".join(lines[:-1] + [forged]) + b"\n")
    assert not verify(p, key=KEY).intact
    AuditLog(p, key=KEY).append({"event": "ruling", "target": "n5.md"})
    v = verify(p, key=KEY)
    assert not v.intact and v.line == 6 and "chain head no longer matched" in v.problem


def test_cutting_lines_off_and_writing_an_unkeyed_head_is_caught(tmp_path):
    p = keyed_log(tmp_path)
    lines = lines_of(p)[:3]
    p.write_bytes(b"\n".join(lines) + b"\n")
    head = json.dumps({"lines": 3, "hash": hashlib.sha256(lines[-1]).hexdigest(), "bytes": p.stat().st_size,
                       "start": 1}).encode()
    p.with_suffix(".head").write_bytes(head + b" " * (255 - len(head)) + b"\n")
    v = verify(p, key=KEY)
    assert not v.intact and v.line == 3 and "head was replaced" in v.problem


def test_a_log_keyed_with_another_key_fails(tmp_path):
    p = keyed_log(tmp_path)
    assert not verify(p, key=b"another key of 32 bytes, not it!").intact


def test_lines_appended_after_the_saved_head_are_a_failure_not_a_note(tmp_path):
    p = keyed_log(tmp_path, 3)
    saved = p.with_suffix(".head").read_bytes()
    AuditLog(p, key=KEY).append({"event": "ruling", "target": "late.md"})
    p.with_suffix(".head").write_bytes(saved)      # the writer stopped between its line and its head
    v = verify(p, key=KEY)
    assert not v.intact and v.line == 4 and "appended after the chain head was last saved" in v.problem
    AuditLog(p, key=KEY).append({"event": "ruling", "target": "next.md"})
    v = verify(p, key=KEY)
    assert not v.intact and v.line == 5 and "lines had been appended after the chain head" in v.problem


def test_a_time_running_backwards_is_a_finding(tmp_path, monkeypatch):
    p = tmp_path / "audit.jsonl"
    times = iter(["2026-12-01T10:00:00.000Z", "2026-12-01T10:00:01.000Z", "2026-12-01T09:59:59.000Z"])
    monkeypatch.setattr(audit_module, "timestamp", lambda t=None: next(times))
    log = AuditLog(p, key=KEY)
    for i in range(3):
        log.append({"event": "ruling", "target": f"n{i}.md"})
    v = verify(p, key=KEY)
    assert not v.intact and v.line == 3 and "earlier than line 2's" in v.problem


def test_the_vault_creates_one_audit_key_on_first_use_and_verify_needs_it(tmp_path):
    vault = Vault.create(tmp_path / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024)
    assert stored_audit_key(vault) is None                     # nothing keyed yet: no key, no record
    p = tmp_path / "audit.jsonl"
    AuditLog(p, key=audit_key(vault)).append({"event": "ruling"})
    other = Vault.open(tmp_path / "vault.enc", PASS)
    key = stored_audit_key(other)
    assert key is not None and len(key) == 32
    AuditLog(p, key=audit_key(other)).append({"event": "ruling"})
    assert verify(p, key=key).intact
    v = verify(p)                                             # no key given: keyed lines cannot pass
    assert not v.intact and "no key to check them" in v.problem
    assert read_head(p.with_suffix(".head")).chain == HMAC


@pytest.mark.parametrize("n", [0, 2])
def test_a_key_given_for_a_log_with_no_keyed_line_fails(tmp_path, n):
    p = tmp_path / "audit.jsonl"
    for i in range(n):
        AuditLog(p).append({"event": "ruling"})
    v = verify(p, key=KEY)
    assert not v.intact


def test_a_keyed_looking_line_appended_with_the_heads_digest_as_prev_is_named(tmp_path):
    p = keyed_log(tmp_path, 3)
    head = json.loads(p.with_suffix(".head").read_bytes())
    forged = ('{"seq":4,"prev":"%s","chain":"hmac-sha256","time":"2099-01-01T00:00:00.000Z",'
              '"event":"approval","verdict":"approved"}' % head["hash"]).encode()
    with open(p, "ab") as f:
        f.write(forged + b"\n")
    v = verify(p, key=KEY)
    assert not v.intact and v.line == 4 and "without the key" in v.problem
    AuditLog(p, key=KEY).append({"event": "ruling", "target": "after.md"})   # a genuine line after it
    v = verify(p, key=KEY)
    assert not v.intact and "line 4 was written by someone without the key" in v.problem
