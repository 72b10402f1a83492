"""Test support for the acceptance tests written from the issues' words (no tests here): the CLI
driven in-process (`run_cli`, `cli`) or as the installed `assistant` command (`sub`), a vault with
one secret, a scripted model, the approval inbox. The workspace is the `vault_ws` fixture of
tests/conftest.py (the example, with a cheap vault KDF)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from assistant.cli import main

ASSISTANT = Path(sys.executable).with_name("assistant")
PASS = "correct horse battery staple"
SECRET = "hunter2-Zq8vLm3Xw9"  # a vault value (>= 8 chars)


def run_cli(args, ws=None, env=None, input=None):
    e = {"ASSISTANT_WORKSPACE": None, "ASSISTANT_VAULT_PASSPHRASE": None}
    if env:
        e.update(env)
    full = list(args)
    if ws is not None:
        full = ["-w", str(ws)] + full
    runner = CliRunner()
    try:
        return runner.invoke(main, full, env=e, input=input, catch_exceptions=False)
    except SystemExit as exc:  # pragma: no cover - click normally turns this into exit_code
        raise AssertionError(f"unexpected SystemExit {exc}")


def out(result) -> str:
    text = result.output or ""
    try:
        text += result.stderr or ""
    except (ValueError, AttributeError):
        pass
    return text


def _env(ws: Path, **extra) -> dict:
    env = {"ASSISTANT_WORKSPACE": str(ws), "ASSISTANT_VAULT_PASSPHRASE": PASS}
    env.update(extra)
    return env


def cli(ws: Path, *args, input=None, env=None, ok=True):
    runner = CliRunner()
    res = runner.invoke(main, list(args), input=input, env=_env(ws, **(env or {})),
                        catch_exceptions=False)
    if ok:
        assert res.exit_code == 0, (args, res.output)
    return res


def sub(ws: Path, *args, input=None, env=None, timeout=60):
    e = dict(os.environ)
    e.update(_env(ws, **(env or {})))
    return subprocess.run([str(ASSISTANT), *args], input=input, env=e, capture_output=True,
                          text=True, timeout=timeout)


def _set_config(ws: Path, table: str, key: str, value: str) -> None:
    """Replace `key = ...` inside `[table]` of config.toml (the example shows every key)."""
    cfg = ws / "config.toml"
    lines = cfg.read_text().splitlines()
    out, cur, done = [], None, False
    for line in lines:
        s = line.strip()
        if s.startswith("[") and not s.startswith("[["):
            cur = s.strip("[]")
        elif s.startswith("[["):
            cur = None
        if cur == table and not done and s.split("=")[0].strip() == key and not s.startswith("#"):
            out.append(f"{key} = {value}")
            done = True
            continue
        out.append(line)
    if not done:
        # append into the table
        idx = next(i for i, l in enumerate(out) if l.strip() == f"[{table}]")
        out.insert(idx + 1, f"{key} = {value}")
    cfg.write_text("\n".join(out) + "\n")


def with_vault(ws: Path, name="bank", value=SECRET) -> None:
    r = CliRunner().invoke(main, ["vault", "init"], input=f"{PASS}\n{PASS}\n", env=_env(ws),
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["vault", "set", name], input=value + "\n", env=_env(ws),
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output


def script(tmp_path: Path, steps: list, name="script.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(steps))
    return f"script:{p}"


def approvals_dir(ws: Path) -> Path:
    return ws / "state" / "approvals"


def pending_files(ws: Path) -> list:
    d = approvals_dir(ws)
    return [p for p in d.rglob("*") if p.is_file()] if d.exists() else []
