"""Shared set-up of the MCP review tests: a workspace with one vault secret (cheap KDF), made
through the real CLI, and the environment that unlocks it for `assistant mcp serve`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.stdio import StdioServerParameters

from assistant.workspace.layout import init_workspace


def vault_env(passphrase: str) -> dict[str, str]:
    """This process's environment without ASSISTANT_* settings, unlocking with `passphrase`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env["ASSISTANT_VAULT_PASSPHRASE"] = passphrase
    return env


def vault_workspace(tmp_path: Path, passphrase: str, name: str, value: str) -> Path:
    """A fresh workspace whose vault (cheap KDF) holds `name` = `value`."""
    root = tmp_path / "ws"
    init_workspace(root)
    cfg = (root / "config.toml").read_text().replace("opslimit = 3", "opslimit = 1").replace(
        "memlimit_mib = 256", "memlimit_mib = 8")
    (root / "config.toml").write_text(cfg)
    for args, stdin in ((("vault", "init"), None), (("vault", "set", name), value + "\n")):
        r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(root), *args], input=stdin,
                           capture_output=True, text=True, env=vault_env(passphrase), timeout=90,
                           start_new_session=True)
        assert r.returncode == 0, r.stderr
    return root


PASS = "review-mcp-pass"
NAME, VALUE = "bank_pin", "Tr0ub4dor-zeta-9931"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace whose vault holds NAME = VALUE (import this fixture into a test module)."""
    return vault_workspace(tmp_path, PASS, NAME, VALUE)


def server_params(ws: Path) -> StdioServerParameters:
    """How the SDK's stdio_client starts `assistant mcp serve` on `ws`, unlocked by the env."""
    return StdioServerParameters(command=sys.executable, args=["-m", "assistant", "-w", str(ws), "mcp", "serve"],
                                 env=vault_env(PASS))
