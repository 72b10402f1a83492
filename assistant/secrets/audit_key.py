"""The audit chain's key: an HMAC-SHA256 key kept inside vault.enc, never under state/.

Guards that writing state/ is not enough to forge the audit log (issue 23 item 3). The key is
an internal record of the vault (`#audit`, not a secret: never listed, never scanned for, never
shown), created the first time a keyed AuditLog appends, and reached only through the vault's
own unlock (ASSISTANT_VAULT_PASSPHRASE, [vault] key_file, the OS keyring, or the passphrase typed
at a terminal). The record itself is the vault's note that a keyed log exists: `audit verify`
given a key therefore reports a log and head that are both gone instead of "intact: 0 lines".

policy/ never imports this: a door passes what it gets here to `AuditLog(path, key=...)` and
`policy.audit.verify(path, key=...)`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import nacl.utils

from assistant.secrets.vault import Vault, VaultError, unlock
from assistant.workspace.config import ConfigError

if TYPE_CHECKING:
    from assistant.workspace.layout import Workspace

ENTRY = "#audit"
KEY_BYTES = 32


def _decode(record: dict | None) -> bytes | None:
    if record is None:
        return None
    try:
        key = bytes.fromhex(record["value"])
    except (KeyError, TypeError, ValueError):
        raise VaultError("the vault's audit key record is damaged (not the hex this program writes)") from None
    if len(key) != KEY_BYTES:
        raise VaultError("the vault's audit key record is damaged (wrong length)")
    return key


def stored_audit_key(vault: Vault | None) -> bytes | None:
    """The audit key the vault holds, or None (no vault, or no keyed log was ever written).
    Re-reads the vault first, so a key another process created since the unlock is seen."""
    if vault is None:
        return None
    vault.refresh()
    return _decode(vault.internal(ENTRY))


class VaultAuditKey:
    """The vault's audit key for `AuditLog(path, key=...)` (a policy.audit.KeySource): called, it
    returns the key, creating the record at the first keyed append; `made_now()` says whether
    that call made it. A key that existed before means a keyed log was started, so a writer that
    finds the log empty or missing marks its line (`"head":"gone"`) and `audit verify` reports the
    deletion instead of a fresh one-line chain (review 23)."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault
        self._made = False

    def __call__(self) -> bytes:
        made = False
        record = self._vault.internal(ENTRY)
        if record is None:
            def make() -> dict:
                nonlocal made
                made = True
                return {"value": nacl.utils.random(KEY_BYTES).hex(),
                        "set_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "note": "HMAC-SHA256 key of state/audit.jsonl: a keyed audit log exists since set_at"}
            record = self._vault.ensure_internal(ENTRY, make)
        self._made = made
        key = _decode(record)
        assert key is not None
        return key

    def made_now(self) -> bool:
        return self._made

    def __repr__(self) -> str:   # never the key
        return "VaultAuditKey()"


def audit_key(vault: Vault | None) -> VaultAuditKey | None:
    """For `AuditLog(path, key=...)`: None without a vault (an unkeyed chain); else a provider
    that returns the vault's audit key, creating it on first use (the first keyed append), and
    says whether it did (VaultAuditKey.made_now)."""
    if vault is None:
        return None
    return VaultAuditKey(vault)


def unattended_unlock(ws: "Workspace") -> tuple[Vault | None, str | None]:
    """The vault for a door that answers approvals (`approvals approve|deny`, `approvals serve`),
    unlocked the way a scheduled run unlocks it: ASSISTANT_VAULT_PASSPHRASE, [vault] key_file
    or the OS keyring, never a prompt. (vault, None) when unlocked; (None, None) with no
    vault.enc; (None, why) when the vault exists but cannot be opened that way: the door then
    writes its audit lines unkeyed, as before the keyed chain, and says so. The door redacts
    the person's free text (a deny reason) with the vault's scanner when it has it."""
    if not (Path(ws.vault_path).exists() or Path(ws.vault_path).is_symlink()):
        return None, None
    try:
        return unlock(ws, interactive=False), None
    except (VaultError, ConfigError) as exc:    # a broken config.toml must not stop an answer either
        return None, (f"the vault cannot be unlocked without asking ({exc}), so the audit lines of answers "
                      "given here are written without the audit key, and `assistant audit verify` reports them "
                      "once the log is keyed; set [vault] key_file in config.toml or run `assistant vault "
                      "remember` so that answers are keyed too")


__all__ = ["ENTRY", "VaultAuditKey", "audit_key", "stored_audit_key", "unattended_unlock"]
