"""A keyed audit log that was deleted or emptied does not verify as a fresh log once the
program appends to it again (review 23, attack 3a): the vault's audit key records that a keyed
log was started, so the first line written to a missing or empty log is marked
`"head":"gone"` unless that very append made the key, and `audit verify` names the deletion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assistant.cli import main
from assistant.secrets.audit_key import audit_key
from assistant.secrets.vault import Vault
from policy.audit import AuditLog, verify

PASS = "audit deletion pass phrase"


def cli(ws, *args, stdin=None):
    return CliRunner().invoke(main, ["-w", str(ws), *args], input=stdin,
                              env={"ASSISTANT_VAULT_PASSPHRASE": PASS})


def with_vault(ws: Path) -> Path:
    Vault.create(ws / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024)
    return ws


@pytest.mark.parametrize("how", ["delete both files", "delete the log", "empty the log"])
def test_a_deleted_keyed_log_appended_to_again_fails_verify(vault_ws, how):
    ws = with_vault(vault_ws)
    assert cli(ws, "memory", "write", "a.md", stdin="hello\n").exit_code == 0
    log, head = ws / "state" / "audit.jsonl", ws / "state" / "audit.head"
    assert cli(ws, "audit", "verify").exit_code == 0
    if how == "empty the log":
        log.write_bytes(b"")
    else:
        log.unlink()
        if how == "delete both files":
            head.unlink()
    assert cli(ws, "memory", "write", "b.md", stdin="after\n").exit_code == 0    # the program goes on
    r = cli(ws, "audit", "verify")
    assert r.exit_code == 1 and "intact" not in r.stdout, r.output
    assert "line 1 was written to a missing or empty log" in r.stderr and "deleted or emptied" in r.stderr
    first = json.loads(log.read_bytes().split(b"\n")[0])
    assert first["seq"] == 1 and first["head"] == "gone"


def test_the_append_that_makes_the_key_starts_the_keyed_log_unmarked(tmp_path):
    vault = Vault.create(tmp_path / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024)
    p = tmp_path / "audit.jsonl"
    log = AuditLog(p, key=audit_key(vault))
    log.append({"event": "ruling"})
    log.append({"event": "ruling"})
    key = audit_key(vault)()
    assert verify(p, key=key).intact
    assert "head" not in json.loads(p.read_bytes().split(b"\n")[0])
    # the same writer, after its log was deleted mid-session: marked
    p.unlink()
    log.append({"event": "ruling"})
    v = verify(p, key=key)
    assert not v.intact and v.line == 1 and "deleted or emptied" in v.problem


def test_a_second_writer_of_an_existing_key_marks_a_missing_log(tmp_path):
    vault = Vault.create(tmp_path / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024)
    p = tmp_path / "audit.jsonl"
    AuditLog(p, key=audit_key(vault)).append({"event": "ruling"})
    p.unlink()
    p.with_suffix(".head").unlink()
    other = Vault.open(tmp_path / "vault.enc", PASS)
    AuditLog(p, key=audit_key(other)).append({"event": "ruling"})
    v = verify(p, key=audit_key(other)())
    assert not v.intact and v.line == 1 and "keyed log was started before it" in v.problem
