"""The remembered unlock: the vault passphrase kept in the operating system's keyring.

Guards where a remembered passphrase may live: only a real OS keyring (Secret Service on Linux,
the macOS Keychain, the Windows Credential Locker), chosen by name, never `keyring`'s automatic
choice, which can fall back to a plaintext file backend. No reachable keyring is a clear error
(under cron there is no session bus), never a silent fallback. One entry per workspace (service
SERVICE, user = the workspace's absolute path), so two workspaces never share a passphrase.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SERVICE = "assistant-vault"

NO_KEYRING_HELP = ("for unattended runs (cron has no session bus) set [vault] key_file in config.toml "
                   "to a file only you can read (chmod 600), or ASSISTANT_VAULT_PASSPHRASE")


class KeyringUnavailable(Exception):
    """No OS keyring can be reached from here; the message says why and what to use instead."""


def _backend():
    """This platform's OS keyring backend, or KeyringUnavailable. Never a plaintext backend."""
    try:
        if sys.platform == "darwin":
            from keyring.backends.macOS import Keyring as Backend
        elif sys.platform == "win32":
            from keyring.backends.Windows import WinVaultKeyring as Backend
        else:
            from keyring.backends.SecretService import Keyring as Backend
    except ImportError as exc:
        raise KeyringUnavailable(f"the keyring library is not installed ({exc}); {NO_KEYRING_HELP}") from None
    if sys.platform not in ("darwin", "win32") and not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        raise KeyringUnavailable("no OS keyring is reachable here: there is no D-Bus session bus "
                                 f"(DBUS_SESSION_BUS_ADDRESS is unset, as under cron); {NO_KEYRING_HELP}")
    try:
        Backend.priority   # raises where the backend cannot work (no Secret Service on the bus, ...)
    except Exception as exc:  # noqa: BLE001 - every failure here means "not reachable"
        raise KeyringUnavailable(f"no OS keyring is reachable here ({exc}); {NO_KEYRING_HELP}") from None
    return Backend()


def _user(ws_root: Path) -> str:
    return str(Path(ws_root).expanduser().absolute())


def recall(ws_root: Path) -> str | None:
    """The remembered passphrase for this workspace, None when none is remembered.
    KeyringUnavailable when the keyring cannot be reached or refuses (e.g. it is locked)."""
    backend = _backend()
    try:
        return backend.get_password(SERVICE, _user(ws_root))
    except Exception as exc:  # noqa: BLE001
        raise KeyringUnavailable(f"the OS keyring refused to give the passphrase ({type(exc).__name__}: "
                                 f"{exc}); {NO_KEYRING_HELP}") from None


def remember(ws_root: Path, passphrase: str) -> str:
    """Store the passphrase for this workspace; returns the keyring's name for messages."""
    backend = _backend()
    try:
        backend.set_password(SERVICE, _user(ws_root), passphrase)
    except Exception as exc:  # noqa: BLE001
        raise KeyringUnavailable(f"the OS keyring refused to store the passphrase ({type(exc).__name__}: "
                                 f"{exc})") from None
    return backend.name


def forget(ws_root: Path) -> bool:
    """Remove this workspace's entry; False when there was none."""
    backend = _backend()
    try:
        if backend.get_password(SERVICE, _user(ws_root)) is None:
            return False
        backend.delete_password(SERVICE, _user(ws_root))
    except Exception as exc:  # noqa: BLE001
        raise KeyringUnavailable(f"the OS keyring refused ({type(exc).__name__}: {exc})") from None
    return True


__all__ = ["KeyringUnavailable", "NO_KEYRING_HELP", "SERVICE", "forget", "recall", "remember"]
