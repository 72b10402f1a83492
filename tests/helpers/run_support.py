"""Helpers for tests/run (no tests here): a fresh workspace, a model script, the CLI in a child."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from assistant.workspace import init_workspace

PY = sys.executable
PASSPHRASE = "correct horse battery staple"


def make_ws(tmp_path: Path, *, extra_config: str = "") -> Path:
    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    cfg = ws / "config.toml"
    text = cfg.read_text().replace("opslimit = 3", "opslimit = 1").replace("memlimit_mib = 256", "memlimit_mib = 8")
    cfg.write_text(text + extra_config)
    return ws


def write_script(tmp_path: Path, items: list, name: str = "script.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(items))
    return p


def env(**extra: str) -> dict:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    out.update(extra)
    return out


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
