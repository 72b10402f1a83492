"""Test support: workspaces for tests (no tests here). The pytest fixtures built on these are in
tests/conftest.py; the plain functions are here so a test can also build a second workspace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assistant.workspace.layout import WorkspaceError, init_workspace, load_config


def cheap_kdf(root: Path) -> Path:
    """Lower the vault's argon2id cost in ROOT/config.toml ([vault] is configurable) to the minimum,
    so a test that creates or unlocks a vault takes milliseconds instead of a second."""
    cfg = root / "config.toml"
    text = cfg.read_text()
    text = re.sub(r"(?m)^opslimit = .*$", "opslimit = 1", text)
    text = re.sub(r"(?m)^memlimit_mib = .*$", "memlimit_mib = 8", text)
    cfg.write_text(text)
    return root


def example_ws(tmp_path: Path, name: str = "ws") -> Path:
    """A fresh workspace from the shipped example (persona, config, notes), at TMP_PATH/NAME."""
    root = tmp_path / name
    init_workspace(root, example=True)
    return root


def bare_ws(tmp_path: Path, name: str = "ws") -> Path:
    """A fresh workspace as `assistant init` makes it (no example notes), at TMP_PATH/NAME."""
    root = tmp_path / name
    init_workspace(root)
    return root


def notify_with(ws: Path, body: str) -> Path:
    """Set WS's [approvals] notify to a shell script (BODY after its #! line), called with the
    summary as $1; returns the script (beside WS, not in it)."""
    script = ws.parent / f"notify-{ws.name}.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o700)
    cfg = ws / "config.toml"
    text = cfg.read_text()
    assert "notify = []" in text
    cfg.write_text(text.replace("notify = []", f'notify = ["{script}", "{{summary}}"]'))
    return script


def assert_config_refused(path: Path, text: str, match: str) -> None:
    """TEXT written to PATH is refused by `load_config` with a WorkspaceError matching MATCH."""
    path.write_text(text)
    with pytest.raises(WorkspaceError, match=match):
        load_config(path)
