"""Open a real session (`assistant.session.open_session`) on a test workspace (no tests here):
optionally with a vault filled first (cheap KDF) and unlocked through ASSISTANT_VAULT_PASSPHRASE
for the open only. The `sessions` fixture of tests/conftest.py closes what this opens."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

PASSPHRASE = "test pass phrase"


def open_test_session(ws_path: Path, mode: str = "watched", *, kind: str = "test",
                      inline_ask: Callable | None = None, vault: dict[str, str] | None = None,
                      hosts: list[str] | None = None):
    """`vault`: names and values to store in a new vault.enc before the open (each bound to
    `hosts` when given); the passphrase is in the environment only while the session opens."""
    from assistant.session import open_session
    from assistant.workspace.layout import open_workspace

    if vault is not None:
        from assistant.secrets.vault import Vault

        v = Vault.create(ws_path / "vault.enc", PASSPHRASE, opslimit=1, memlimit=8 * 1024 * 1024)
        for name, value in vault.items():
            v.set(name, value, hosts=hosts)
        os.environ["ASSISTANT_VAULT_PASSPHRASE"] = PASSPHRASE
    try:
        return open_session(open_workspace(ws_path), mode, kind=kind, interactive=False, inline_ask=inline_ask)
    finally:
        os.environ.pop("ASSISTANT_VAULT_PASSPHRASE", None)
