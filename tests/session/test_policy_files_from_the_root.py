"""Every policy object comes from the composition root: `Inbox`, `AuditLog` and `GrantStore`
are built only in assistant/session.py (`policy_files` for doors without a session), and the
audit lines of such doors are scanned for credential shapes, with no vault unlocked and with a
broken config.toml."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from click.testing import CliRunner

from policy.approvals import Inbox, sha256_hex
from policy.kinds import KINDS

from assistant.cli import main
from assistant.secrets.vault import Vault

ROOT = Path(__file__).resolve().parents[2] / "assistant"
POLICY_OBJECTS = {"Inbox", "AuditLog", "GrantStore"}
AWS_KEY = "AKIA" + "Q3ZX7PLM2KD8WTHR"     # an access-key shape (made up)


def builders() -> list[str]:
    """file:line of every call of Inbox(...), AuditLog(...) or GrantStore(...) in assistant/."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if name in POLICY_OBJECTS:
                    found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    return found


def test_policy_objects_are_built_only_in_the_composition_root():
    found = builders()
    assert found, "the walk found no builder at all (session.py has them)"
    assert [f for f in found if not f.startswith("assistant/session.py:")] == []


def file_request(ws: Path):
    content = "Lina likes tea.\n"
    req, _ = Inbox(ws / "state" / "approvals").create(
        run_id="run-7", kind="memory", target="people/lina.md", summary="update people/lina.md",
        reason="root policy for memory in an unattended run is ask", sha256=sha256_hex(content.encode()),
        content=content, current=None, content_exact=True, offers=KINDS["memory"].offers("people/lina.md"),
        timeout=600.0)
    return req


def test_a_cli_answer_is_scanned_and_needs_neither_config_nor_vault(vault_ws, monkeypatch):
    ws = vault_ws
    Vault.create(ws / "vault.enc", "test pass phrase", opslimit=1, memlimit=8 * 1024 * 1024).set("wifi", "hunter2-x")
    (ws / "state" / "approvals").mkdir(parents=True, exist_ok=True)
    req = file_request(ws)
    (ws / "config.toml").write_text((ws / "config.toml").read_text() + "\n[policy\nbroken = \n")
    monkeypatch.delenv("ASSISTANT_VAULT_PASSPHRASE", raising=False)
    listed = CliRunner().invoke(main, ["-w", str(ws), "approvals", "list"], input="")
    assert listed.exit_code == 0 and req.id in listed.output, listed.output
    denied = CliRunner().invoke(main, ["-w", str(ws), "approvals", "deny", req.id, "--reason",
                                       f"never: {AWS_KEY}"], input="")
    assert denied.exit_code == 0, denied.output
    assert "passphrase" not in denied.output.lower()
    text = (ws / "state" / "audit.jsonl").read_text()
    assert AWS_KEY not in text
    [line] = [json.loads(x) for x in text.splitlines() if '"approval"' in x]
    assert line["reason"] == "never: [redacted:aws-access-key]" and line["by"] == "cli"
