"""vault.enc: the encrypted store of secrets the assistant must never show, write or leak.

Guards the values themselves. The file is a versioned header (magic, format version, KDF id
and parameters, salt), a nonce, and an XChaCha20-Poly1305 ciphertext whose associated data
is the header, so any edit to the header, the nonce or the ciphertext fails to decrypt. The
key comes from the passphrase through argon2id; parameters read from a file are capped so a
crafted header cannot make us allocate gigabytes. Every save uses a fresh nonce and is
atomic (temp + fsync + rename, mode 0o600), under an fcntl lock with a re-read, so two
processes setting secrets at once lose nothing. Values never appear in reprs, logs or
exceptions; errors name the file and the problem, never the content.

Unlock means, in order: $ASSISTANT_VAULT_PASSPHRASE, the key file named by config
[vault] key_file (refused unless only its owner can read it), a hidden prompt on a TTY.
"""

from __future__ import annotations

import contextlib
import errno
import getpass
import ipaddress
import json
import os
import re
import struct
import sys
import urllib.parse
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterable

import nacl.exceptions
import nacl.pwhash.argon2id as argon2id
import nacl.utils
from nacl import bindings

from policy.fileio import NotRegularFile, locked, open_regular, write_atomic

from assistant.secrets.remembered import KeyringUnavailable, recall
from assistant.secrets.scanner import Scanner

LOCK_TIMEOUT = 10.0   # seconds a vault change waits for another one to finish, then VaultError

if TYPE_CHECKING:
    from assistant.workspace.layout import Workspace

ENV_PASSPHRASE = "ASSISTANT_VAULT_PASSPHRASE"
ENV_NEW_PASSPHRASE = "ASSISTANT_VAULT_NEW_PASSPHRASE"   # `vault passwd`'s new passphrase

MAGIC = b"ASTVAULT"
FORMAT_VERSION = 1
KDF_ARGON2ID = 1
_HEADER = struct.Struct(">8sBBIQ16s")      # magic, version, kdf id, opslimit, memlimit, salt
HEADER_SIZE = _HEADER.size                 # 38
NONCE_SIZE = bindings.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES   # 24
TAG_SIZE = bindings.crypto_aead_xchacha20poly1305_ietf_ABYTES        # 16
KEY_SIZE = bindings.crypto_aead_xchacha20poly1305_ietf_KEYBYTES      # 32

# Defaults: libsodium's "moderate" argon2id cost (3 passes, 256 MiB), overridable in config.
DEFAULT_OPSLIMIT = argon2id.OPSLIMIT_MODERATE
DEFAULT_MEMLIMIT = argon2id.MEMLIMIT_MODERATE
# What we accept from a file (or config) before refusing: 1 GiB and 16 passes.
MAX_OPSLIMIT = 16
MAX_MEMLIMIT = 1 << 30
MIN_OPSLIMIT = argon2id.OPSLIMIT_MIN
MIN_MEMLIMIT = argon2id.MEMLIMIT_MIN

# Records the program keeps for itself inside vault.enc (the audit chain's key): names no secret
# can have (validate_name refuses '#'), never listed, never scanned for, never shown.
INTERNAL_PREFIX = "#"

MIN_VALUE_LEN = 8
MAX_VALUE_LEN = 64 * 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")

UNLOCK_HELP = (
    f"set {ENV_PASSPHRASE}, or set [vault] key_file in config.toml to a file only you can "
    "read (chmod 600), or remember it in the OS keyring (`assistant vault remember`); commands "
    "run at a terminal (chat, memory, vault) also ask for it (assistant run never asks)"
)


class VaultError(Exception):
    """A vault that cannot be read or written: the message says which file and what is wrong."""


class VaultLocked(VaultError):
    """vault.enc exists but this run has no means to unlock it."""


class CannotDecrypt(VaultError):
    """The passphrase is wrong, or the file was modified or damaged (AEAD cannot tell which)."""


class VaultMissing(VaultLocked):
    """This workspace has had a vault ([vault] required = true in config.toml) but vault.enc is
    gone. A session must not start: scanning with shapes only would let its values through."""


def missing_vault_message(ws: "Workspace") -> str:
    return (f"vault.enc is missing ({ws.vault_path}), but this workspace has a vault ([vault] "
            "required = true in config.toml), so its secrets cannot be kept out: restore vault.enc "
            "from a backup; if you removed it on purpose, run `assistant vault init` or set "
            "required = false under [vault]")


def record_required(ws: "Workspace") -> str | None:
    """Record `[vault] required = true` in config.toml (where deleting state/ does not erase
    it). Returns a warning instead of raising: the vault itself is fine either way."""
    # lazy: workspace.layout brings config and all of policy (~60 ms of CPU); a process that
    # only opens a vault (a script, the two writers of tests/secrets' race) never needs it
    from assistant.workspace.layout import WorkspaceError, record_setting

    try:
        record_setting(ws.config_path, "vault", "required", True)
    except WorkspaceError as exc:
        return str(exc)
    ws.config = ws.config.updated({"vault": {"required": True}})
    return None


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def validate_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise VaultError(
            "a secret name is 1-64 characters: letters, digits, '_', '.', '-', starting with a "
            "letter or digit"
        )
    return name


def validate_value(value: str) -> str:
    if not isinstance(value, str):
        raise VaultError("a secret value must be text")
    if len(value) < MIN_VALUE_LEN:
        raise VaultError(
            f"value too short ({len(value)} character{'' if len(value) == 1 else 's'}): at least {MIN_VALUE_LEN} are needed, "
            "a shorter value is too short to scan for without false alarms"
        )
    if len(value) > MAX_VALUE_LEN:
        raise VaultError(f"value too long ({len(value)} characters, at most {MAX_VALUE_LEN})")
    if not value.strip():
        raise VaultError("value is only whitespace")
    # The scanner ignores whitespace and backslashes (so values split across lines or
    # escaped are still found): what is left is what it looks for.
    significant = len("".join(value.split()).replace("\\", ""))
    if significant < MIN_VALUE_LEN:
        raise VaultError(
            f"value has only {significant} character{'' if significant == 1 else 's'} besides spaces and "
            f"backslashes: at least {MIN_VALUE_LEN} are needed, a shorter value is too short to scan for without "
            "false alarms"
        )
    return value


MAX_HOSTS = 32


def normalize_host(text: str) -> str:
    """A host a secret may be sent to by web_fetch: `api.example.com`, `127.0.0.1:8080`,
    `[::1]`. Lower-cased, trailing dot dropped, IDNA-encoded: the same form web_fetch gives
    the host of a URL, so a binding and a URL are compared as equals. No scheme, path,
    userinfo, wildcard or percent-escape."""
    if not isinstance(text, str) or not text.strip():
        raise VaultError("a host must be a name like api.example.com (optionally :PORT)")
    t = text.strip()
    bad = "a host is a bare name like api.example.com or 127.0.0.1:8080 (optionally :PORT), " \
          f"without scheme, path, user, wildcard or %-escapes; got {t[:80]!r}"
    if len(t) > 260 or any(ord(c) < 33 or ord(c) == 127 or c in "/?#@%\\*" for c in t):
        raise VaultError(bad)
    try:
        parts = urllib.parse.urlsplit("http://" + t)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise VaultError(bad) from None
    if not host or parts.path or parts.query or parts.fragment:
        raise VaultError(bad)
    host = host.rstrip(".").lower()
    if not host:
        raise VaultError(bad)
    try:
        if ":" in host:
            host = ipaddress.IPv6Address(host).compressed
        else:
            host = host.encode("idna").decode("ascii")
    except (UnicodeError, ValueError):
        raise VaultError(bad) from None
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"


def split_host(binding: str) -> tuple[str, int | None]:
    """(host, port or None) of a normalized binding."""
    if binding.startswith("["):
        end = binding.index("]")
        rest = binding[end + 1:]
        return binding[: end + 1], int(rest[1:]) if rest.startswith(":") else None
    host, _, port = binding.partition(":")
    return host, int(port) if port else None


def normalize_hosts(hosts: Iterable[object] | str) -> list[str]:
    if isinstance(hosts, str) or not all(isinstance(h, str) for h in hosts):
        raise VaultError("hosts must be a list of host names")
    out = sorted({normalize_host(h) for h in hosts})
    if len(out) > MAX_HOSTS:
        raise VaultError(f"at most {MAX_HOSTS} hosts per secret")
    return out


def check_kdf_params(opslimit: object, memlimit: object, *, where: str) -> tuple[int, int]:
    """Both limits as ints within [min, cap], or a VaultError saying which is out of range."""
    for label, v, lo, hi in (("opslimit", opslimit, MIN_OPSLIMIT, MAX_OPSLIMIT),
                             ("memlimit", memlimit, MIN_MEMLIMIT, MAX_MEMLIMIT)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise VaultError(f"{where}: KDF {label} must be an integer, got {type(v).__name__}")
        if not lo <= v <= hi:
            raise VaultError(f"{where}: KDF {label} {v} is outside the accepted range {lo}..{hi}")
    return opslimit, memlimit


def _derive(passphrase: str | bytes, salt: bytes, opslimit: int, memlimit: int) -> bytes:
    pw = passphrase.encode("utf-8") if isinstance(passphrase, str) else bytes(passphrase)
    if not pw:
        raise VaultError("the vault passphrase is empty")
    return argon2id.kdf(KEY_SIZE, pw, salt, opslimit=opslimit, memlimit=memlimit)


class _Header:
    __slots__ = ("opslimit", "memlimit", "salt", "raw")

    def __init__(self, opslimit: int, memlimit: int, salt: bytes):
        self.opslimit, self.memlimit, self.salt = opslimit, memlimit, salt
        self.raw = _HEADER.pack(MAGIC, FORMAT_VERSION, KDF_ARGON2ID, opslimit, memlimit, salt)

    @classmethod
    def parse(cls, data: bytes, where: str) -> "_Header":
        if len(data) < len(MAGIC) or data[: len(MAGIC)] != MAGIC:
            raise VaultError(f"{where}: not a vault file (bad magic)")
        if len(data) < HEADER_SIZE + NONCE_SIZE + TAG_SIZE:
            raise VaultError(f"{where}: truncated ({len(data)} bytes, shorter than any vault)")
        magic, version, kdf, ops, mem, salt = _HEADER.unpack_from(data)
        if version != FORMAT_VERSION:
            raise VaultError(f"{where}: unsupported vault format version {version} "
                             f"(this version reads {FORMAT_VERSION})")
        if kdf != KDF_ARGON2ID:
            raise VaultError(f"{where}: unknown key-derivation id {kdf}")
        check_kdf_params(ops, mem, where=where)
        h = cls(ops, mem, salt)
        if h.raw != data[:HEADER_SIZE]:  # pragma: no cover - pack/unpack round trip
            raise VaultError(f"{where}: malformed header")
        return h


class Vault:
    """An unlocked vault. Holds the derived key, never the passphrase."""

    def __init__(self, path: Path, key: bytes, header: _Header, entries: dict[str, dict]):
        self.path = Path(path)
        self._key = key
        self._header = header
        self._entries, self._internal = _split(entries)

    def __repr__(self) -> str:
        return f"Vault({str(self.path)!r}, {len(self._entries)} secrets)"

    # -- creation and opening -------------------------------------------------------

    @classmethod
    def create(cls, path: str | os.PathLike[str], passphrase: str | bytes, *,
               opslimit: int | None = None, memlimit: int | None = None) -> "Vault":
        """Write a new, empty vault at `path` (refused if one exists)."""
        path = Path(path)
        ops = DEFAULT_OPSLIMIT if opslimit is None else opslimit
        mem = DEFAULT_MEMLIMIT if memlimit is None else memlimit
        check_kdf_params(ops, mem, where="vault settings")
        if path.exists() or path.is_symlink():
            raise VaultError(f"{path}: a vault already exists here; refusing to overwrite it")
        salt = nacl.utils.random(argon2id.SALTBYTES)
        header = _Header(ops, mem, salt)
        key = _derive(passphrase, salt, ops, mem)
        vault = cls(path, key, header, {})
        with vault._locked():
            if path.exists() or path.is_symlink():
                raise VaultError(f"{path}: a vault already exists here; refusing to overwrite it")
            vault._save()
        return vault

    @classmethod
    def open(cls, path: str | os.PathLike[str], passphrase: str | bytes) -> "Vault":
        path = Path(path)
        data = _read(path)
        header = _Header.parse(data, str(path))
        key = _derive(passphrase, header.salt, header.opslimit, header.memlimit)
        entries = _decrypt(data, header, key, str(path))
        return cls(path, key, header, entries)

    # -- reading ---------------------------------------------------------------------

    def get(self, name: str) -> str:
        try:
            return self._entries[name]["value"]
        except KeyError:
            raise VaultError(f"no secret named {name!r} in the vault") from None

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def names(self) -> list[tuple[str, str]]:
        """[(name, set_at)] sorted by name. No values."""
        return sorted((n, e.get("set_at", "")) for n, e in self._entries.items())

    def list(self) -> list[tuple[str, str]]:
        """Same as names(): [(name, set_at)] sorted by name, no values (DESIGN's "list")."""
        return self.names()

    def refresh(self) -> None:
        """Re-read the entries from disk (a save is an atomic rename, so no lock is needed):
        a long session sees a secret removed or re-bound since it unlocked the vault. A vault
        re-keyed meanwhile raises VaultError (callers refuse)."""
        self._reload()

    def hosts(self, name: str) -> tuple[str, ...]:
        """The hosts web_fetch may send secret `name` to (empty: none; an entry written before
        bindings existed has none)."""
        try:
            entry = self._entries[name]
        except KeyError:
            raise VaultError(f"no secret named {name!r} in the vault") from None
        hosts = entry.get("hosts") or []
        return tuple(h for h in hosts if isinstance(h, str))

    def listing(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """[(name, set_at, hosts)] sorted by name. No values."""
        return [(n, t, self.hosts(n)) for n, t in self.names()]

    def secrets(self) -> dict[str, str]:
        return {n: e["value"] for n, e in self._entries.items()}

    def scanner(self) -> Scanner:
        return Scanner(self.secrets())

    # -- the program's own records (never secrets: not listed, not scanned for) ------------

    def internal(self, name: str) -> dict | None:
        """The internal record `name` (starting with INTERNAL_PREFIX) as last read, or None."""
        record = self._internal.get(name)
        return dict(record) if record is not None else None

    def ensure_internal(self, name: str, make: Callable[[], dict]) -> dict:
        """The internal record `name`, created from make() under the lock on a fresh re-read if
        the file has none (two processes creating it at once agree on one)."""
        if not name.startswith(INTERNAL_PREFIX):
            raise VaultError(f"an internal record's name starts with {INTERNAL_PREFIX!r}")
        with self._locked():
            self._reload()
            if name not in self._internal:
                record = make()
                if not isinstance(record.get("value"), str):
                    raise VaultError("an internal record carries its value as text")
                self._internal = {**self._internal, name: dict(record)}
                self._save()
            return dict(self._internal[name])

    # -- writing (each under the lock, on a fresh re-read) -----------------------------

    def set(self, name: str, value: str, hosts: Iterable[object] | str | None = None) -> None:
        """Store `value` under `name`. `hosts`: the hosts web_fetch may send it to (replacing
        any bound before); None keeps the hosts an existing entry already has."""
        validate_name(name)
        validate_value(value)
        bound = None if hosts is None else normalize_hosts(hosts)

        def change(entries: dict[str, dict]) -> None:
            keep = entries.get(name, {}).get("hosts") if bound is None else bound
            entries[name] = {"value": value, "set_at": _now()}
            if keep:
                entries[name]["hosts"] = list(keep)

        self._update(change)

    def set_hosts(self, name: str, hosts: Iterable[object] | str) -> None:
        """Bind `name` to exactly `hosts` (possibly none), keeping its value and set_at."""
        validate_name(name)
        bound = normalize_hosts(hosts)

        def change(entries: dict[str, dict]) -> None:
            if name not in entries:
                raise VaultError(f"no secret named {name} in the vault")
            entry = {k: v for k, v in entries[name].items() if k != "hosts"}
            if bound:
                entry["hosts"] = list(bound)
            entries[name] = entry

        self._update(change)

    def remove(self, name: str) -> None:
        validate_name(name)

        def change(entries: dict[str, dict]) -> None:
            if name not in entries:
                raise VaultError(f"no secret named {name!r} in the vault")
            del entries[name]

        self._update(change)

    def change_passphrase(self, new_passphrase: str | bytes, *, opslimit: int | None = None,
                          memlimit: int | None = None) -> None:
        """Re-encrypt under a new passphrase (new salt, new key, optionally new KDF cost)."""
        ops = self._header.opslimit if opslimit is None else opslimit
        mem = self._header.memlimit if memlimit is None else memlimit
        check_kdf_params(ops, mem, where="vault settings")
        salt = nacl.utils.random(argon2id.SALTBYTES)
        new_header = _Header(ops, mem, salt)
        new_key = _derive(new_passphrase, salt, ops, mem)
        with self._locked():
            self._reload()
            self._header, self._key = new_header, new_key
            self._save()

    def _update(self, change: Callable[[dict[str, dict]], None]) -> None:
        with self._locked():
            self._reload()
            entries = {n: dict(e) for n, e in self._entries.items()}
            change(entries)
            self._entries = entries
            self._save()

    def _reload(self) -> None:
        """Re-read the file (another process may have saved since we opened it)."""
        where = str(self.path)
        data = _read(self.path)
        header = _Header.parse(data, where)
        if header.raw != self._header.raw:
            raise VaultError(
                f"{where}: the vault's passphrase or settings changed since it was unlocked; "
                "unlock it again"
            )
        self._entries, self._internal = _split(_decrypt(data, header, self._key, where))

    def _save(self) -> None:
        payload = json.dumps({**self._entries, **self._internal}, sort_keys=True,
                             separators=(",", ":")).encode("utf-8")
        nonce = nacl.utils.random(NONCE_SIZE)
        ct = bindings.crypto_aead_xchacha20poly1305_ietf_encrypt(
            payload, self._header.raw, nonce, self._key
        )
        write_atomic(self.path, self._header.raw + nonce + ct)

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        """Exclusive lock of one read-modify-write; a bounded wait, then VaultError (never a hang)."""
        return locked(self.path.with_name("." + self.path.name + ".lock"), timeout=LOCK_TIMEOUT,
                      what="the vault", error=VaultError)


def _split(payload: dict[str, dict]) -> tuple[dict[str, dict], dict[str, dict]]:
    """(secrets, internal records) of a decrypted payload: the names starting with
    INTERNAL_PREFIX are the program's own."""
    secrets = {n: e for n, e in payload.items() if not n.startswith(INTERNAL_PREFIX)}
    return secrets, {n: e for n, e in payload.items() if n.startswith(INTERNAL_PREFIX)}


def _read(path: Path) -> bytes:
    f, st = _open_regular(path, missing=f"{path}: no vault here (create one with `assistant vault init`)",
                          what=f"{path}: cannot open the vault", not_regular=f"{path}: not a regular file")
    with f:
        if st.st_size > 16 * 1024 * 1024:
            raise VaultError(f"{path}: too large to be a vault ({st.st_size} bytes)")
        return f.read()


def _open_regular(path: Path, *, missing: str, what: str, not_regular: str) -> tuple[BinaryIO, os.stat_result]:
    """Open a regular file for reading, never through a symlink or a FIFO (policy.fileio);
    (file, fstat) or VaultError with the caller's words."""
    try:
        fd, st = open_regular(path)
    except FileNotFoundError:
        raise VaultError(missing) from None
    except NotRegularFile as exc:
        if exc.errno == errno.ELOOP:
            raise VaultError(f"{what}: it is a symbolic link, which is never followed") from None
        raise VaultError(not_regular) from None
    except OSError as exc:
        raise VaultError(f"{what}: {exc.strerror}") from None
    return os.fdopen(fd, "rb"), st


def _decrypt(data: bytes, header: _Header, key: bytes, where: str) -> dict[str, dict]:
    nonce = data[HEADER_SIZE:HEADER_SIZE + NONCE_SIZE]
    ct = data[HEADER_SIZE + NONCE_SIZE:]
    try:
        payload = bindings.crypto_aead_xchacha20poly1305_ietf_decrypt(ct, header.raw, nonce, key)
    except nacl.exceptions.CryptoError:
        raise CannotDecrypt(
            f"{where}: cannot decrypt: wrong passphrase, or the file was modified or damaged"
        ) from None
    try:
        entries = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise VaultError(f"{where}: decrypted contents are not a valid vault payload") from None
    if not isinstance(entries, dict) or not all(
        isinstance(n, str) and isinstance(e, dict) and isinstance(e.get("value"), str)
        and (e.get("hosts") is None or (isinstance(e["hosts"], list)
                                         and all(isinstance(h, str) for h in e["hosts"])))
        for n, e in entries.items()
    ):
        raise VaultError(f"{where}: decrypted contents are not a valid vault payload")
    return entries


# -- unlocking within a workspace ----------------------------------------------------------

def kdf_settings(ws: "Workspace") -> tuple[int, int]:
    """(opslimit, memlimit bytes) from config [vault], validated against the caps."""
    cfg = ws.config.vault
    return check_kdf_params(cfg.opslimit, cfg.memlimit_mib * 1024 * 1024, where="config.toml [vault]")


def read_key_file(ws: "Workspace") -> bytes | None:
    """The passphrase from config [vault] key_file, or None when none is configured.

    Refused unless the file is a regular file owned by us that nobody else can read or write.
    """
    name = ws.config.vault.key_file
    if not name:
        return None
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = Path(ws.root) / path
    f, st = _open_regular(path, missing=f"key file {path} (config [vault] key_file) does not exist",
                          what=f"key file {path}: cannot open", not_regular=f"key file {path}: not a regular file")
    with f:
        if st.st_mode & 0o077:
            raise VaultError(
                f"key file {path} is readable or writable by others (mode "
                f"{st.st_mode & 0o777:04o}); refusing it: run `chmod 600 {path}`"
            )
        if st.st_uid != os.geteuid():
            raise VaultError(f"key file {path} is not owned by you; refusing it")
        data = f.read(64 * 1024 + 1)
    if len(data) > 64 * 1024:
        raise VaultError(f"key file {path}: too large for a key file")
    data = data.rstrip(b"\r\n")
    if not data:
        raise VaultError(f"key file {path} is empty")
    return data


PASSPHRASE_TRIES = 3   # at a terminal a mistyped passphrase may be retried, this many times in all

NO_TERMINAL = ("the vault is locked and there is no terminal to ask for its passphrase on (standard "
               "input is not one, and piped input is data, never a passphrase)")


def ask_on_terminal(label: str) -> str:
    """A hidden prompt on the terminal: stdin if it is one, else the controlling terminal
    (/dev/tty, as ssh and gpg do, so `echo VALUE | assistant vault set NAME` asks for the
    passphrase there). Never reads a passphrase from a pipe: no terminal is VaultLocked."""
    stdin_tty = False
    try:
        stdin_tty = sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        pass
    if not stdin_tty:
        # The controlling terminal is used only when a person can see the prompt there (stderr
        # is that terminal): output captured by a script or a test never hangs on a hidden ask.
        try:
            seen = sys.stderr is not None and sys.stderr.isatty()
        except (AttributeError, ValueError):
            seen = False
        try:
            if not seen:
                raise OSError
            os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
        except OSError:
            raise VaultLocked(f"{NO_TERMINAL}: {UNLOCK_HELP}") from None
    # getpass reads /dev/tty first and falls back to stdin only where there is no /dev/tty,
    # which was ruled out above for a non-terminal stdin.
    return getpass.getpass(f"{label}: ")


def _unlock_setting(ws: "Workspace") -> str:
    return ws.config.vault.unlock


def _from_keyring(ws: "Workspace", *, interactive: bool) -> str | None:
    """The passphrase remembered in the OS keyring ([vault] unlock = "keyring"). At a terminal,
    a keyring that is unreachable or has no entry falls back to asking (with a note); otherwise
    it is VaultLocked saying why and what to use instead."""
    try:
        remembered = recall(Path(ws.root))
        why = None if remembered is not None else (
            "no passphrase is remembered for this workspace in the OS keyring "
            "(`assistant vault remember` at a terminal stores it)")
    except KeyringUnavailable as exc:
        remembered, why = None, str(exc)
    if remembered is not None:
        return remembered
    if interactive:
        print(f"note: [vault] unlock = \"keyring\", but {why}; asking instead", file=sys.stderr)
        return None
    raise VaultLocked(f"the vault at {ws.vault_path} is locked: [vault] unlock = \"keyring\", but {why}")


def fixed_passphrase(ws: "Workspace", *, interactive: bool = False) -> str | bytes | None:
    """The passphrase from the environment, the key file, or the OS keyring ([vault] unlock =
    "keyring"), in that order; None when none of them gives one."""
    env = os.environ.get(ENV_PASSPHRASE)
    if env:
        return env
    from_file = read_key_file(ws)
    if from_file is not None:
        return from_file
    if _unlock_setting(ws) == "keyring":
        return _from_keyring(ws, interactive=interactive)
    return None


def passphrase_for(ws: "Workspace", *, interactive: bool,
                   prompt: Callable[[str], str] | None = None) -> str | bytes:
    """The passphrase by the first available means: the env, the key file, else (interactive)
    the terminal; VaultLocked saying how to provide one when there is none."""
    fixed = fixed_passphrase(ws, interactive=interactive)
    if fixed is not None:
        return fixed
    if interactive:
        return (prompt or ask_on_terminal)("Vault passphrase")
    raise VaultLocked(f"the vault at {ws.vault_path} is locked: {UNLOCK_HELP}")


def unlock(ws: "Workspace", *, interactive: bool,
           prompt: Callable[[str], str] | None = None) -> Vault:
    """Open the workspace's vault.enc by the first available means. A passphrase typed at a
    terminal that does not decrypt may be typed again (PASSPHRASE_TRIES in all)."""
    path = Path(ws.vault_path)
    if not (path.exists() or path.is_symlink()):
        raise VaultError(f"{path}: no vault here (create one with `assistant vault init`)")
    fixed = fixed_passphrase(ws, interactive=interactive)
    if fixed is not None:
        try:
            return Vault.open(path, fixed)
        except CannotDecrypt as exc:
            if not os.environ.get(ENV_PASSPHRASE) and read_key_file(ws) is None:
                raise CannotDecrypt(f"{exc} (the passphrase remembered in the OS keyring no longer opens "
                                    "it: run `assistant vault remember` again)") from None
            raise
    if not interactive:
        return Vault.open(path, passphrase_for(ws, interactive=False, prompt=prompt))
    ask = prompt or ask_on_terminal
    for attempt in range(1, PASSPHRASE_TRIES + 1):
        try:
            return Vault.open(path, ask("Vault passphrase"))
        except CannotDecrypt:
            if attempt == PASSPHRASE_TRIES:
                raise
            print(f"wrong passphrase; try again ({PASSPHRASE_TRIES - attempt} left)", file=sys.stderr)
    raise AssertionError("unreachable")


def unlock_if_present(ws: "Workspace", *, interactive: bool) -> Vault | None:
    """The workspace's vault, unlocked; None when there is no vault.enc.

    A vault that exists but cannot be unlocked in this run (no means, wrong passphrase,
    damaged file, loose key file) raises VaultLocked, whose message says why and how to
    unlock: callers fail closed, since scanning without the values would let them through.
    A workspace that has had a vault ([vault] required = true, recorded by `vault init` and on
    the first open of an existing vault.enc) and has no vault.enc raises VaultMissing.
    """
    path = Path(ws.vault_path)
    required = ws.config.vault.required
    if not (path.exists() or path.is_symlink()):
        if required:
            raise VaultMissing(missing_vault_message(ws))
        return None
    if not required:
        # a workspace that had its vault before this was recorded: record it on first open
        # (best effort: a config.toml we cannot rewrite does not stop the session)
        record_required(ws)
    try:
        return unlock(ws, interactive=interactive)
    except VaultLocked:
        raise
    except VaultError as exc:
        raise VaultLocked(f"{exc}. To unlock the vault: {UNLOCK_HELP}") from None


def load_scanner(ws: "Workspace", *, interactive: bool) -> Scanner:
    """The scanner for a run: shapes only without a vault, else shapes plus every value."""
    vault = unlock_if_present(ws, interactive=interactive)
    return vault.scanner() if vault is not None else Scanner({})


__all__ = [
    "CannotDecrypt", "ENV_NEW_PASSPHRASE", "ENV_PASSPHRASE", "MAX_MEMLIMIT", "MAX_OPSLIMIT", "MIN_VALUE_LEN", "UNLOCK_HELP", "Vault",
    "VaultError", "VaultLocked", "VaultMissing", "check_kdf_params", "kdf_settings", "load_scanner",
    "missing_vault_message", "record_required",
    "ask_on_terminal", "fixed_passphrase", "normalize_host", "normalize_hosts", "passphrase_for", "read_key_file", "split_host", "unlock",
    "unlock_if_present",
    "validate_name", "validate_value",
]
