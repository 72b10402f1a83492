"""Vault passphrases at a real terminal (a pty): asked there even when stdin carries a value,
retried when mistyped, never read from a pipe (issue 13, items 2 and 3)."""

from __future__ import annotations

import os
import shlex
import sys

import pytest

from assistant.secrets.vault import ENV_PASSPHRASE, Vault
from workspaces import bare_ws, cheap_kdf

pexpect = pytest.importorskip("pexpect", reason="pexpect is not installed (pip install 'assistant[dev]')")

PASS = "terminal passphrase " + "for tests"
VALUE = "piped-" + "value-" + "Qx71Lm0p"


@pytest.fixture
def ws(tmp_path):
    """A workspace as `init` makes it (no example notes), with a cheap vault KDF."""
    return cheap_kdf(bare_ws(tmp_path))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in (ENV_PASSPHRASE, "ASSISTANT_VAULT_NEW_PASSPHRASE", "ASSISTANT_WORKSPACE")}
    env["NO_COLOR"] = "1"
    return env


def _shell(ws, command: str) -> pexpect.spawn:
    cli = f"{shlex.quote(sys.executable)} -m assistant -w {shlex.quote(str(ws))}"
    return pexpect.spawn("/bin/sh", ["-c", command.replace("CLI", cli)], env=_env(),
                         encoding="utf-8", timeout=30)


def _init(ws):
    child = _shell(ws, "CLI vault init")
    child.expect("New vault passphrase: ")
    child.sendline(PASS)
    child.expect(r"again\): ")
    child.sendline(PASS)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before


def test_piped_value_with_passphrase_asked_on_the_terminal(ws):
    """`echo VALUE | assistant vault set NAME`: the value comes from the pipe, the passphrase
    from the terminal (it used to read VALUE as the passphrase)."""
    _init(ws)
    child = _shell(ws, f"printf '%s\\n' {shlex.quote(VALUE)} | CLI vault set wifi")
    child.expect("Vault passphrase: ")
    child.sendline(PASS)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert "stored wifi" in child.before and VALUE not in child.before
    assert Vault.open(ws / "vault.enc", PASS).get("wifi") == VALUE


def test_wrong_passphrase_at_a_terminal_may_be_retried(ws):
    _init(ws)
    child = _shell(ws, "CLI vault list")
    child.expect("Vault passphrase: ")
    child.sendline("not the passphrase")
    child.expect("wrong passphrase; try again")
    child.expect("Vault passphrase: ")
    child.sendline(PASS)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert "not the passphrase" not in child.before


def test_three_wrong_passphrases_end_with_the_reason(ws):
    _init(ws)
    child = _shell(ws, "CLI vault list")
    for _ in range(3):
        child.expect("Vault passphrase: ")
        child.sendline("nope, not it")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert "wrong passphrase" in child.before


def test_init_confirmation_mismatch_at_the_terminal(ws):
    child = _shell(ws, "CLI vault init")
    child.expect("New vault passphrase: ")
    child.sendline("one passphrase here")
    child.expect(r"again\): ")
    child.sendline("another one here")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1 and "do not match" in child.before
    assert not (ws / "vault.enc").exists()
