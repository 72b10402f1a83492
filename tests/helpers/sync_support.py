"""Helpers for tests/sync (no tests here): workspaces as devices on one bare remote, real git.

`devices(tmp_path, "A", "B")` makes a bare repository and one workspace per name (as `assistant
init` makes it), runs `sync init` on each and enrols every device on every other; `sync(ws)`
runs one sync in this process through a real session (the CLI's own wiring); `write`, `text`
and `versions` read and write notes through a session too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from assistant.notes.history import Version
from assistant.session import open_session
from assistant.sync.engine import SyncReport, Syncer, device_list, enrol, init_sync
from assistant.sync.files import file_mount

from workspaces import bare_ws

PY = sys.executable
ROOT = Path(__file__).resolve().parents[2]


def git(*args: str, cwd: Path | None = None, git_dir: Path | None = None) -> str:
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    if git_dir is not None:
        env["GIT_DIR"] = str(git_dir)
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True, timeout=60).stdout.strip()


def make_remote(tmp_path: Path, name: str = "remote.git") -> Path:
    remote = tmp_path / name
    git("init", "--bare", "-q", str(remote))
    return remote


def devices(tmp_path: Path, *names: str, remote: Path | None = None, enrol_all: bool = True) -> dict[str, Path]:
    remote = remote or make_remote(tmp_path)
    made = {}
    for name in names:
        ws = bare_ws(tmp_path, name.lower())
        init_sync(ws / "state", str(remote), name)
        made[name] = ws
    if enrol_all:
        for name, ws in made.items():
            for other, ows in made.items():
                if other != name:
                    enrol(ws / "state", other, public_key(ows))
    return made


def public_key(ws: Path) -> str:
    return str(device_list(ws / "state")[0]["key"])


def sync(ws: Path, **kw) -> SyncReport:
    """One sync as `assistant sync` wires it (files/ too when the workspace says `[sync] files = true`)."""
    with open_session(ws, "unattended", kind="sync", transcript=False) as s:
        files = file_mount(s.ws, s.files) if s.ws.config.sync.files else None
        return Syncer(ws / "state", memory=s.memory, history=s.history, gate=s.policy_gate,
                      audit=s.policy_gate.audit, scanner=s.scanner, on_changed=s.index.note_changes,
                      files=files, **kw).run()


def write(ws: Path, path: str, text: str) -> None:
    with open_session(ws, "watched", kind="cli", transcript=False) as s:
        s.memory.write(path, text, force=True)


def remove(ws: Path, path: str) -> None:
    with open_session(ws, "watched", kind="cli", transcript=False) as s:
        s.memory.remove(path)


def text(ws: Path, path: str) -> str | None:
    p = ws / "memory" / path
    return p.read_text() if p.exists() else None


def versions(ws: Path, path: str | None = None) -> list[Version]:
    with open_session(ws, "watched", kind="cli", transcript=False) as s:
        return s.history.versions(path)


def audit(ws: Path) -> list[dict]:
    p = ws / "state" / "audit.jsonl"
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()] if p.exists() else []


def cli(ws: Path, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    environ["PYTHONPATH"] = str(ROOT)
    environ.update(env or {})
    return subprocess.run([PY, "-m", "assistant", "-w", str(ws), *args], capture_output=True, text=True,
                          env=environ, timeout=timeout, stdin=subprocess.DEVNULL)


def enrol_key(ws: Path, name: str, key: str) -> None:
    enrol(ws / "state", name, key)


def files_on(ws: Path, on: bool = True) -> None:
    """Set the workspace's `[sync] files`."""
    cfg = ws / "config.toml"
    cfg.write_text(re.sub(r"(?m)^files = (true|false)$", f"files = {'true' if on else 'false'}", cfg.read_text()))


def put_file(ws: Path, rel: str, data: bytes | str) -> None:
    """A file of files/ as the person saves it (by hand, not through the file tools)."""
    p = ws / "files" / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data.encode() if isinstance(data, str) else data)


def get_file(ws: Path, rel: str) -> bytes | None:
    p = ws / "files" / rel
    return p.read_bytes() if p.exists() else None
