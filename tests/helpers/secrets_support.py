"""Helpers for tests/secrets (no tests here): a workspace with a cheap vault, the CLI in a child."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from e2e_support import make_ws as example_make_ws
from e2e_support import write_script  # noqa: F401  (re-exported for tests/secrets)
from workspaces import cheap_kdf

PY = sys.executable
PASSPHRASE = "correct horse battery staple"
WIFI = "tangerine-Dream-4412-xyzzy"          # a vault value (never printed by these tests)
ROOT = Path(__file__).resolve().parents[2]   # this tree, first on a child's PYTHONPATH
CLI_VAULT_PASSPHRASE = "pw-test-123"         # the vault of cli_vault_ws


def make_ws(tmp_path: Path, *, secrets: dict[str, str] | None = None, extra_config: str = "") -> Path:
    """The example workspace with a cheap vault KDF; with SECRETS, a vault holding them."""
    ws = cheap_kdf(example_make_ws(tmp_path, extra_config=extra_config))
    if secrets is not None:
        from assistant.secrets.vault import Vault

        v = Vault.create(ws / "vault.enc", PASSPHRASE, opslimit=1, memlimit=8 << 20)
        for name, value in secrets.items():
            v.set(name, value)
    return ws


def env(**extra: str) -> dict:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    out.update(extra)
    return out


def vault_env(**extra: str) -> dict:
    return env(ASSISTANT_VAULT_PASSPHRASE=PASSPHRASE, **extra)


def tree_env() -> dict:
    """The runner's environment with this tree first on PYTHONPATH and cli_vault_ws's vault unlocked."""
    return dict(os.environ, ASSISTANT_VAULT_PASSPHRASE=CLI_VAULT_PASSPHRASE, PYTHONPATH=str(ROOT))


def run_assistant(args: list[str], stdin: str | None = None, cwd: Path | None = None):
    """`python -m assistant ARGS` in a child (tree_env), in CWD."""
    return subprocess.run([PY, "-m", "assistant", *args], input=stdin, capture_output=True, text=True,
                          env=tree_env(), timeout=120, cwd=cwd)


def cli_vault_ws(tmp_path: Path, value: str, name: str = "bank") -> Path:
    """A workspace as `init` makes it (TMP_PATH/ws) whose vault (its own KDF cost) holds NAME =
    VALUE, made through the real CLI: `init`, `vault init`, `vault set`."""
    ws = tmp_path / "ws"
    assert run_assistant(["init", str(ws)]).returncode == 0
    assert run_assistant(["-w", str(ws), "vault", "init"]).returncode == 0
    assert run_assistant(["-w", str(ws), "vault", "set", name], stdin=value + "\n").returncode == 0
    return ws


def cli(*args: str, environ: dict | None = None, input: str | None = None, timeout: float = 60):
    return subprocess.run([PY, "-m", "assistant", *args], capture_output=True, text=True,
                          env=environ or env(), timeout=timeout, input=input)


def transcript_events(ws: Path) -> list[dict]:
    out: list[dict] = []
    for p in sorted((ws / "state" / "transcripts").glob("*.jsonl")):
        out.extend(json.loads(line) for line in p.read_text().splitlines() if line.strip())
    return out


def audit_events(ws: Path) -> list[dict]:
    p = ws / "state" / "audit.jsonl"
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()] if p.exists() else []


def vault_value_session(tmp_path: Path, name: str, value: str):
    """A watched session (inline answer "once") on the example workspace whose vault holds
    NAME=VALUE (cheap KDF); the caller closes it."""
    from assistant.session import open_session
    from assistant.workspace.layout import open_workspace

    ws = make_ws(tmp_path, secrets={name: value})
    os.environ["ASSISTANT_VAULT_PASSPHRASE"] = PASSPHRASE
    try:
        return open_session(open_workspace(ws), "watched", kind="test", inline_ask=lambda q: "once")
    finally:
        os.environ.pop("ASSISTANT_VAULT_PASSPHRASE", None)


def assert_refused_in_redacted_out(session, form: str, name: str) -> None:
    """FORM (a spelling of the vault value NAME) is refused in a note written through the
    session, and redacted when a hand-edited note holding it is read back."""
    from assistant.memory import SecretRefused
    import pytest

    text = f"the server said: {form}\nend\n"
    with pytest.raises(SecretRefused) as info:
        session.memory.write("reply.md", text)
    assert name in info.value.names
    assert not (session.ws.memory_dir / "reply.md").exists()

    (session.ws.memory_dir / "hand.md").write_text(text)         # a hand edit: the way out
    shown = session.memory.read("hand.md").content
    assert f"[redacted:{name}]" in shown and "the server said:" in shown and "end" in shown
    assert form not in shown
