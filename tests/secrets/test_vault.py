"""vault.enc: format, tampering, truncation, KDF caps, unlock means, concurrency."""

from __future__ import annotations

import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assistant.secrets import vault as vmod
from assistant.secrets.vault import (
    ENV_PASSPHRASE, HEADER_SIZE, NONCE_SIZE, Vault, VaultError, VaultLocked, load_scanner, unlock,
)
from assistant.workspace.layout import init_workspace, open_workspace
from acceptance_support import PASS as acc_PASS
import threading
from assistant.secrets.scanner import Scanner
from bounded import bounded

FAST = {"opslimit": 1, "memlimit": 8 * 1024 * 1024}
PASS = "correct horse " + "battery staple"
VALUE = "s3cr3t-" + "VALUE-" + "0123456789"


@pytest.fixture(autouse=True)
def _no_env_passphrase(monkeypatch):
    monkeypatch.delenv(ENV_PASSPHRASE, raising=False)


@pytest.fixture
def vault_path(tmp_path) -> Path:
    return tmp_path / "vault.enc"


def _make(path: Path, **entries: str) -> Vault:
    v = Vault.create(path, PASS, **FAST)
    for k, val in entries.items():
        v.set(k, val)
    return v


# -- round trip and format ---------------------------------------------------------------

def test_round_trip(vault_path):
    v = _make(vault_path, github=VALUE, mail="another-value-42")
    again = Vault.open(vault_path, PASS)
    assert again.get("github") == VALUE
    assert again.secrets() == {"github": VALUE, "mail": "another-value-42"}
    names = again.names()
    assert [n for n, _ in names] == ["github", "mail"]
    assert all(t.endswith("Z") and t.startswith("20") for _, t in names)
    again.remove("mail")
    assert Vault.open(vault_path, PASS).secrets() == {"github": VALUE}
    with pytest.raises(VaultError, match="no secret named 'mail'"):
        again.remove("mail")
    with pytest.raises(VaultError, match="no secret named"):
        v.get("nope")


def test_file_layout_mode_and_no_plaintext(vault_path):
    _make(vault_path, github=VALUE)
    data = vault_path.read_bytes()
    assert data[:8] == b"ASTVAULT"
    magic, version, kdf, ops, mem, salt = struct.unpack(">8sBBIQ16s", data[:HEADER_SIZE])
    assert (version, kdf, ops, mem) == (1, 1, 1, 8 * 1024 * 1024)
    assert VALUE.encode() not in data and b"github" not in data
    assert stat.S_IMODE(vault_path.stat().st_mode) == 0o600
    leftovers = [p.name for p in vault_path.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_fresh_nonce_every_save(vault_path):
    v = _make(vault_path)
    nonces = set()
    for i in range(4):
        v.set("k", f"value-number-{i}")
        nonces.add(vault_path.read_bytes()[HEADER_SIZE:HEADER_SIZE + NONCE_SIZE])
    assert len(nonces) == 4


def test_defaults_are_moderate_argon2id(vault_path):
    v = Vault.create(vault_path, PASS)  # the real default cost, once
    v.set("k", VALUE)
    _, _, _, ops, mem, _ = struct.unpack(">8sBBIQ16s", vault_path.read_bytes()[:HEADER_SIZE])
    assert (ops, mem) == (3, 256 * 1024 * 1024)
    assert Vault.open(vault_path, PASS).get("k") == VALUE


def test_create_refuses_to_overwrite(vault_path):
    _make(vault_path, a=VALUE)
    before = vault_path.read_bytes()
    with pytest.raises(VaultError, match="already exists"):
        Vault.create(vault_path, PASS, **FAST)
    assert vault_path.read_bytes() == before


# -- failures leave the file untouched --------------------------------------------------

def _assert_refused(path: Path, match: str, passphrase: str = PASS):
    before = path.read_bytes()
    t = time.monotonic()
    with pytest.raises(VaultError, match=match) as info:
        Vault.open(path, passphrase)
    assert path.read_bytes() == before
    assert VALUE not in str(info.value) and passphrase not in str(info.value)
    return time.monotonic() - t


def test_wrong_passphrase(vault_path):
    _make(vault_path, github=VALUE)
    _assert_refused(vault_path, "wrong passphrase", passphrase="not the passphrase")


@pytest.mark.parametrize("offset,what", [
    (0, "bad magic"), (8, "format version"), (9, "key-derivation id"),
    (10, "wrong passphrase"),          # opslimit 1 -> 2 (within the cap): authenticated
    (14, "wrong passphrase"),          # memlimit 8 MiB -> 16 MiB (within the cap)
    (25, "wrong passphrase"),          # salt byte
    (HEADER_SIZE - 1, "wrong passphrase"),
    (HEADER_SIZE + 3, "wrong passphrase"),  # nonce
])
def test_tampered_header(vault_path, offset, what):
    _make(vault_path, github=VALUE)
    data = bytearray(vault_path.read_bytes())
    if offset == 10:
        data[10:14] = struct.pack(">I", 2)
    elif offset == 14:
        data[14:22] = struct.pack(">Q", 16 * 1024 * 1024)
    else:
        data[offset] ^= 0x01
    vault_path.write_bytes(bytes(data))
    _assert_refused(vault_path, what)


def test_tampered_ciphertext(vault_path):
    _make(vault_path, github=VALUE)
    data = bytearray(vault_path.read_bytes())
    for pos in (HEADER_SIZE + NONCE_SIZE, len(data) - 1, len(data) // 2 + 20):
        tampered = bytearray(data)
        tampered[pos] ^= 0x80
        vault_path.write_bytes(bytes(tampered))
        _assert_refused(vault_path, "wrong passphrase, or the file was modified")


def test_truncated(vault_path):
    _make(vault_path, github=VALUE)
    data = vault_path.read_bytes()
    for n in (0, 5, 8, HEADER_SIZE, HEADER_SIZE + NONCE_SIZE, len(data) - 1):
        vault_path.write_bytes(data[:n])
        _assert_refused(vault_path, "truncated|bad magic|wrong passphrase, or the file was modified")
    vault_path.write_bytes(data[: HEADER_SIZE + 10])
    _assert_refused(vault_path, "truncated")


@pytest.mark.parametrize("ops,mem", [(100, 8 * 1024 * 1024), (1, 64 * 1024 ** 3), (0, 8192)])
def test_kdf_params_beyond_cap_refused_without_running_the_kdf(vault_path, ops, mem):
    _make(vault_path, github=VALUE)
    data = bytearray(vault_path.read_bytes())
    data[10:22] = struct.pack(">IQ", ops, mem)
    vault_path.write_bytes(bytes(data))
    elapsed = _assert_refused(vault_path, "outside the accepted range")
    assert elapsed < 5  # a 64 GiB argon2id would not return at all on this machine


def test_create_refuses_params_beyond_cap(vault_path):
    with pytest.raises(VaultError, match="outside the accepted range"):
        Vault.create(vault_path, PASS, opslimit=1, memlimit=vmod.MAX_MEMLIMIT * 2)
    assert not vault_path.exists()


def test_failed_save_leaves_old_file(vault_path, monkeypatch):
    v = _make(vault_path, github=VALUE)
    before = vault_path.read_bytes()

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(vmod.os, "fsync", boom)
    with pytest.raises(OSError):
        v.set("other", "another-value-1")
    assert vault_path.read_bytes() == before
    assert [p.name for p in vault_path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_validation_messages(vault_path):
    v = _make(vault_path)
    with pytest.raises(VaultError, match="too short.*false alarms"):
        v.set("k", "1234567")
    with pytest.raises(VaultError, match="secret name"):
        v.set("bad name", VALUE)
    assert v.names() == []


def test_change_passphrase(vault_path):
    v = _make(vault_path, github=VALUE)
    v.change_passphrase("a new passphrase!", **FAST)
    with pytest.raises(VaultError, match="wrong passphrase"):
        Vault.open(vault_path, PASS)
    assert Vault.open(vault_path, "a new passphrase!").get("github") == VALUE


def test_stale_handle_after_passwd_elsewhere_refuses(vault_path):
    a = _make(vault_path, github=VALUE)
    b = Vault.open(vault_path, PASS)
    a.change_passphrase("rotated passphrase", **FAST)
    with pytest.raises(VaultError, match="unlock it again"):
        b.set("x", "some-other-value")
    assert Vault.open(vault_path, "rotated passphrase").secrets() == {"github": VALUE}


def test_repr_never_shows_values(vault_path):
    v = _make(vault_path, github=VALUE)
    assert VALUE not in repr(v) and PASS not in repr(v)


# -- concurrency: two processes, no lost secret ------------------------------------------

_WRITER = r"""
import contextlib, sys, time
from assistant.secrets.vault import Vault
path, tag, n, pw, start_at, unsafe = sys.argv[1:7]
v = Vault.open(path, pw)
if unsafe == "1":   # negative control: no lock, no re-read -> lost updates expected
    Vault._locked = lambda self: contextlib.nullcontext()
    Vault._reload = lambda self: None
while time.time() < float(start_at):
    time.sleep(0.005)
for i in range(int(n)):
    v.set(f"{tag}-{i}", f"value-of-{tag}-{i}-xxxxxxxx")
"""


def _race(vault_path, n: int, unsafe: bool) -> set[str]:
    start_at = time.time() + 1.0
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(vault_path), tag, str(n), PASS,
                          str(start_at), "1" if unsafe else "0"])
        for tag in ("left", "right")
    ]
    for p in procs:
        assert p.wait(timeout=120) == 0
    return {name for name, _ in Vault.open(vault_path, PASS).names()}


def test_concurrent_set_from_two_processes_loses_nothing(vault_path):
    _make(vault_path, seed=VALUE)
    n = 25
    expected = {"seed"} | {f"{t}-{i}" for t in ("left", "right") for i in range(n)}
    assert _race(vault_path, n, unsafe=False) == expected


def test_concurrency_check_would_catch_a_missing_lock(vault_path):
    """Negative control: the same race without lock + re-read does lose secrets."""
    _make(vault_path, seed=VALUE)
    n = 10
    names = _race(vault_path, n, unsafe=True)
    expected = {"seed"} | {f"{t}-{i}" for t in ("left", "right") for i in range(n)}
    assert names < expected


# -- unlocking within a workspace --------------------------------------------------------

@pytest.fixture
def ws(opened_ws):
    return opened_ws     # tests/conftest.py: the example workspace, opened


def _write_config(ws_obj, **vault_cfg) -> None:
    lines = [f'{k} = {v!r}' if isinstance(v, str) else f"{k} = {v}" for k, v in vault_cfg.items()]
    text = ws_obj.config_path.read_text()
    import re

    text = re.sub(r"(?ms)^\[vault\].*?(?=^\[)", "[vault]\n" + "\n".join(lines) + "\n\n", text)
    ws_obj.config_path.write_text(text)


def test_load_scanner_without_vault_is_shapes_only(ws):
    s = load_scanner(ws, interactive=False)
    assert s.secret_names == ()
    assert s.find("AKIA" + "Q3ZT7LBN2WXK5RPM")


def test_load_scanner_with_env_passphrase(ws, monkeypatch):
    _make(ws.vault_path, github=VALUE)
    monkeypatch.setenv(ENV_PASSPHRASE, PASS)
    s = load_scanner(ws, interactive=False)
    assert s.secret_names == ("github",)
    assert s.redact(f"x {VALUE} y") == "x [redacted:github] y"


def test_locked_vault_says_how_to_unlock(ws):
    _make(ws.vault_path, github=VALUE)
    with pytest.raises(VaultLocked) as info:
        load_scanner(ws, interactive=False)
    msg = str(info.value)
    assert ENV_PASSPHRASE in msg and "key_file" in msg and "config.toml" in msg


def test_wrong_env_passphrase_is_locked_too(ws, monkeypatch):
    _make(ws.vault_path, github=VALUE)
    monkeypatch.setenv(ENV_PASSPHRASE, "wrong-passphrase")
    with pytest.raises(VaultLocked, match="wrong passphrase.*" + ENV_PASSPHRASE) as info:
        load_scanner(ws, interactive=False)
    assert "wrong-passphrase" not in str(info.value)


def test_key_file_unlocks_when_private(ws):
    _make(ws.vault_path, github=VALUE)
    key = ws.root / "vault.key"
    key.write_text(PASS + "\n")
    key.chmod(0o600)
    _write_config(ws, key_file="vault.key", opslimit=1, memlimit_mib=8)
    ws2 = open_workspace(ws.root)
    assert unlock(ws2, interactive=False).get("github") == VALUE
    assert load_scanner(ws2, interactive=False).secret_names == ("github",)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o602])
def test_key_file_with_loose_permissions_refused(ws, mode):
    _make(ws.vault_path, github=VALUE)
    key = ws.root / "vault.key"
    key.write_text(PASS)
    key.chmod(mode)
    _write_config(ws, key_file="vault.key")
    ws2 = open_workspace(ws.root)
    with pytest.raises(VaultError, match="readable or writable by others.*chmod 600"):
        unlock(ws2, interactive=False)
    with pytest.raises(VaultLocked, match="chmod 600"):
        load_scanner(ws2, interactive=False)


def test_key_file_symlink_refused(ws, tmp_path):
    _make(ws.vault_path, github=VALUE)
    real = tmp_path / "real.key"
    real.write_text(PASS)
    real.chmod(0o600)
    (ws.root / "vault.key").symlink_to(real)
    _write_config(ws, key_file="vault.key")
    with pytest.raises(VaultError, match="cannot open"):
        unlock(open_workspace(ws.root), interactive=False)


def test_interactive_prompt_callback(ws):
    _make(ws.vault_path, github=VALUE)
    asked = []
    v = unlock(ws, interactive=True, prompt=lambda label: asked.append(label) or PASS)
    assert asked == ["Vault passphrase"] and v.get("github") == VALUE


def test_config_kdf_settings_validated(ws):
    _write_config(ws, opslimit=1, memlimit_mib=4096)
    with pytest.raises(VaultError, match="memlimit .* outside the accepted range"):
        vmod.kdf_settings(open_workspace(ws.root))
    _write_config(ws, opslimit=2, memlimit_mib=16)
    assert vmod.kdf_settings(open_workspace(ws.root)) == (2, 16 * 1024 * 1024)


SECRET = "s3cr3t-Value-Xq9Zk2Lm"


# acceptance (issue 4: vault), written from the words
def test_vault_python_round_trip(tmp_path):
    from assistant.secrets.vault import Vault, VaultError
    path = tmp_path / "vault.enc"
    v = Vault.create(path, acc_PASS, opslimit=1, memlimit=8 << 20)
    v.set("github", SECRET)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first = path.read_bytes()
    v.set("github", SECRET)
    assert path.read_bytes() != first          # fresh nonce on every save
    again = Vault.open(path, acc_PASS)
    assert again.get("github") == SECRET
    assert [n for n, _ in again.list()] == ["github"]
    assert SECRET not in repr(again)
    with pytest.raises(VaultError) as ei:
        Vault.open(path, "not the passphrase")
    assert SECRET not in str(ei.value)
    with pytest.raises(VaultError):
        again.set("short", "1234567")


def test_vault_every_flipped_bit_and_truncation_is_refused(tmp_path):
    from assistant.secrets.vault import Vault, VaultError
    path = tmp_path / "vault.enc"
    Vault.create(path, acc_PASS, opslimit=1, memlimit=8 << 20).set("k", SECRET)
    good = path.read_bytes()
    for i in range(len(good)):
        bad = bytearray(good)
        bad[i] ^= 0x01
        path.write_bytes(bytes(bad))
        with pytest.raises(VaultError) as ei:
            Vault.open(path, acc_PASS)
        assert SECRET not in str(ei.value)
    for n in range(0, len(good), 7):
        path.write_bytes(good[:n])
        with pytest.raises(VaultError):
            Vault.open(path, acc_PASS)


# review (secrets): 6. vault: a value that is mostly spaces or backslashes
@pytest.mark.parametrize("value", ["a b c d e f", "ab\\\\\\\\\\\\\\\\", "x\ty\tz\tw\tv", "\\\\\\\\\\\\\\\\\\\\"])
def test_vault_refuses_a_value_whose_scannable_part_is_too_short(value, tmp_path):
    from assistant.secrets.vault import Vault, VaultError
    assert len(value) >= 8
    v = Vault.create(tmp_path / "vault.enc", "pw-for-tests", opslimit=1, memlimit=8 * 1024)
    with pytest.raises(VaultError, match="too short to scan for") as info:
        v.set("weak", value)
    assert value not in str(info.value)
    assert "weak" not in v


def test_vault_accepts_a_value_split_by_spaces_with_enough_characters(tmp_path):
    from assistant.secrets.vault import Vault
    v = Vault.create(tmp_path / "vault.enc", "pw-for-tests", opslimit=1, memlimit=8 * 1024)
    v.set("phrase", "correct horse battery")
    assert Scanner(v.secrets()).redact("it is correct horse\nbattery!") == "it is [redacted:phrase]!"


# review (secrets): 8. vault: a FIFO at vault.enc or at the key file hung the open
def test_fifo_at_the_vault_path_is_a_clear_error_not_a_hang(tmp_path):
    import os

    from assistant.secrets.vault import Vault, VaultError
    fifo = tmp_path / "vault.enc"
    os.mkfifo(fifo)

    def attempt():
        with pytest.raises(VaultError, match="not a regular file"):
            Vault.open(fifo, "pw-for-tests")
        return True

    assert bounded(attempt, 5.0)


def test_fifo_as_key_file_is_a_clear_error_not_a_hang(tmp_path):
    import os

    from assistant.secrets.vault import VaultError, read_key_file
    from assistant.workspace.layout import init_workspace, open_workspace
    init_workspace(tmp_path / "ws", example=True)
    ws = open_workspace(tmp_path / "ws")
    os.mkfifo(tmp_path / "key", 0o600)
    ws.config = ws.config.updated({"vault": {"key_file": str(tmp_path / "key")}})

    def attempt():
        with pytest.raises(VaultError, match="not a regular file"):
            read_key_file(ws)
        return True

    assert bounded(attempt, 5.0)
