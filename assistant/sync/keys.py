"""A device's own Ed25519 key, its OpenSSH public-key line, and the signature on a sync commit.

Guards that a pull integrates only what a device the person enrolled wrote: each sync commit's
message carries a signature over (device name, tree id, parent id) by the device's key, kept in
state/sync/device.key (0600; it never travels). The tree id covers every byte of the commit's
content, the parent id its place in the branch, the name the branch it may be on. A public key
is exchanged as an OpenSSH line (`ssh-ed25519 AAAA... comment`): the wire format is the string
"ssh-ed25519" and the string of the 32-byte key, each with a 4-byte big-endian length.

Own key rather than git's SSH signing: no ssh-keygen on the path of every commit and every
check (one process per commit), no allowed-signers file to keep in step with the enrolled list,
and the signed bytes are exactly the three values above rather than git's commit encoding.
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
import struct
from pathlib import Path

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from policy.fileio import LinkedFolder, open_folder, write_atomic


__all__ = ["DeviceKey", "KeyError_", "parse_public_line", "public_line", "signed_bytes", "verify",
           "KEY_FILE"]

KEY_FILE = "device.key"
_TYPE = b"ssh-ed25519"
_SIGNED = b"assistant-sync-commit-v1\0"


class KeyError_(ValueError):
    """A public key line that is not an ssh-ed25519 key, or a device key that cannot be kept."""


def public_line(raw: bytes, comment: str = "") -> str:
    """The OpenSSH public-key line of a 32-byte Ed25519 key."""
    blob = struct.pack(">I", len(_TYPE)) + _TYPE + struct.pack(">I", len(raw)) + raw
    line = "ssh-ed25519 " + base64.b64encode(blob).decode("ascii")
    return f"{line} {comment}" if comment else line


def parse_public_line(line: str) -> bytes:
    """The 32-byte key of an `ssh-ed25519 AAAA... [comment]` line, or KeyError_ saying why."""
    if not isinstance(line, str):
        raise KeyError_("KEY must be an OpenSSH public key line")
    parts = line.strip().split()
    if len(parts) < 2 or parts[0] != "ssh-ed25519":
        raise KeyError_("KEY must be an OpenSSH ed25519 public key line: ssh-ed25519 AAAA... "
                        "(as `assistant sync devices list` prints on the other device)")
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except (binascii.Error, ValueError):
        raise KeyError_("KEY's second field is not base64") from None
    try:
        (n,) = struct.unpack_from(">I", blob, 0)
        kind = blob[4:4 + n]
        (m,) = struct.unpack_from(">I", blob, 4 + n)
        raw = blob[8 + n:8 + n + m]
    except struct.error:
        raise KeyError_("KEY's key data is cut short") from None
    if kind != _TYPE or m != 32 or len(raw) != 32 or len(blob) != 8 + n + m:
        raise KeyError_("KEY's key data is not a 32-byte ssh-ed25519 key")
    return raw


def signed_bytes(device: str, tree: str, parent: str | None) -> bytes:
    return _SIGNED + f"{device}\0{tree}\0{parent or ''}".encode("ascii")


def verify(raw_key: bytes, device: str, tree: str, parent: str | None, signature: str) -> bool:
    """Does `signature` (base64) sign (device, tree, parent) under this public key?"""
    try:
        sig = base64.b64decode(signature, validate=True)
        VerifyKey(raw_key).verify(signed_bytes(device, tree, parent), sig)
        return True
    except (BadSignatureError, binascii.Error, ValueError, TypeError):
        return False


def _read(dfd: int, name: str) -> bytes | None:
    """The 32-byte seed on file, None if there is none or it is not a usable key file (not
    regular, not ours, readable by others, wrong size); a link is never followed."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            return None
        data = os.read(fd, 33)
    finally:
        os.close(fd)
    return data if len(data) == 32 else None


class DeviceKey:
    """This device's signing key (state/sync/device.key, 32 random bytes, created on first use)."""

    def __init__(self, seed: bytes) -> None:
        self._key = SigningKey(seed)

    @classmethod
    def load(cls, sync_dir: Path) -> "DeviceKey":
        try:
            dfd = open_folder(sync_dir.parent, sync_dir.name, create=True)
        except (LinkedFolder, OSError) as exc:
            raise KeyError_(f"state/sync cannot hold the device key: {exc}") from None
        try:
            seed = _read(dfd, KEY_FILE)
            if seed is None:
                try:
                    write_atomic(KEY_FILE, SigningKey.generate().encode(), dir_fd=dfd, mode=0o600, replace=False)
                except FileExistsError:
                    pass
                seed = _read(dfd, KEY_FILE)
            if seed is None:
                raise KeyError_(f"{sync_dir}/{KEY_FILE} is not a usable key file (mode 0600, yours, 32 bytes); "
                                "remove it to make a new key (then enrol the new key on the other devices)")
        finally:
            os.close(dfd)
        return cls(seed)

    @property
    def public(self) -> bytes:
        return bytes(self._key.verify_key)

    def sign(self, device: str, tree: str, parent: str | None) -> str:
        return base64.b64encode(self._key.sign(signed_bytes(device, tree, parent)).signature).decode("ascii")
