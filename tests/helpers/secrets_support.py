"""Helpers for tests/secrets (no tests here): a workspace with a cheap vault, the CLI in a child."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from assistant.workspace import init_workspace

PY = sys.executable
PASSPHRASE = "correct horse battery staple"
WIFI = "tangerine-Dream-4412-xyzzy"          # a vault value (never printed by these tests)


def make_ws(tmp_path: Path, *, secrets: dict[str, str] | None = None, extra_config: str = "") -> Path:
    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    cfg = ws / "config.toml"
    text = cfg.read_text().replace("opslimit = 3", "opslimit = 1").replace("memlimit_mib = 256", "memlimit_mib = 8")
    cfg.write_text(text + extra_config)
    if secrets is not None:
        from assistant.vault import Vault

        v = Vault.create(ws / "vault.enc", PASSPHRASE, opslimit=1, memlimit=8 << 20)
        for name, value in secrets.items():
            v.set(name, value)
    return ws


def write_script(tmp_path: Path, items: list, name: str = "script.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(items))
    return p


def env(**extra: str) -> dict:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    out.update(extra)
    return out


def vault_env(**extra: str) -> dict:
    return env(ASSISTANT_VAULT_PASSPHRASE=PASSPHRASE, **extra)


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
