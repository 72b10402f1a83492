"""Workspace layout, config loading and `assistant init`."""

import os
import re
import stat

import pytest
from click.testing import CliRunner

from assistant.cli import main
from assistant.workspace import (
    WorkspaceError,
    init_workspace,
    load_config,
    open_workspace,
    select_workspace,
)


def test_init_creates_private_layout(tmp_path):
    dest = tmp_path / "ws"
    made = init_workspace(dest)
    assert "memory/index.md" in made and "state/" in made
    for part in ("memory", "files", "state", "state/approvals", "config.toml", "grants.json"):
        mode = stat.S_IMODE(os.stat(dest / part).st_mode)
        assert mode & 0o077 == 0, part
    ws = open_workspace(dest)
    assert ws.memory_dir.is_dir() and ws.files_dir.is_dir()
    # the notes live beside the file mount, never inside it
    assert ws.memory_dir.parent == ws.files_dir.parent == ws.root
    # issue 13: a clean workspace is nobody's life: a persona template and one index note
    assert "Wren" not in ws.persona() and "Edit this file" in ws.persona()
    assert [p.relative_to(ws.memory_dir).as_posix() for p in ws.memory_dir.rglob("*") ] == ["index.md"]
    assert not any(ws.files_dir.iterdir())


def test_init_example_copies_the_shipped_example(tmp_path):
    """`init --example` gives today's example: Sam's notes, Lina and Marek, Wren the persona."""
    dest = tmp_path / "ex"
    r = CliRunner().invoke(main, ["init", "--example", str(dest)])
    assert r.exit_code == 0, r.output
    assert "memory/people/lina.md" in r.output
    assert (dest / "memory" / "people" / "lina.md").is_file()
    assert "Wren" in (dest / "PERSONA.md").read_text()
    assert stat.S_IMODE(os.stat(dest / "memory" / "people" / "lina.md").st_mode) == 0o600


def test_clean_workspace_notes_mention_no_example_person(tmp_path):
    """The model answers from the clean workspace's notes: none may name the example's people."""
    dest = tmp_path / "clean"
    init_workspace(dest)
    text = "".join(p.read_text() for p in dest.rglob("*") if p.is_file())
    for name in ("Sam", "Lina", "Marek", "Okafor", "Leeds"):
        assert not re.search(rf"\b{name}\b", text), name


def test_init_refuses_non_empty(tmp_path):
    dest = tmp_path / "ws"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    with pytest.raises(WorkspaceError, match="not empty"):
        init_workspace(dest)
    assert sorted(os.listdir(dest)) == ["keep.txt"]
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".ws")]


def test_init_into_empty_dir_and_cli_message(tmp_path):
    dest = tmp_path / "empty"
    dest.mkdir()
    r = CliRunner().invoke(main, ["init", str(dest)])
    assert r.exit_code == 0, r.output
    assert "created workspace" in r.output and "memory/index.md" in r.output
    assert "memory/people/lina.md" not in r.output
    r2 = CliRunner().invoke(main, ["init", str(dest)])
    assert r2.exit_code != 0 and "not empty" in r2.output


def test_workspace_selection_order(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSISTANT_WORKSPACE", str(tmp_path / "env"))
    assert select_workspace(str(tmp_path / "opt")) == tmp_path / "opt"
    assert select_workspace(None) == tmp_path / "env"
    monkeypatch.delenv("ASSISTANT_WORKSPACE")
    assert select_workspace(None).name == "workspace"


def test_open_missing_workspace_is_clear(tmp_path):
    with pytest.raises(WorkspaceError, match="assistant init"):
        open_workspace(tmp_path / "nope")


def test_config_defaults_and_errors(tmp_path):
    cfg = load_config(tmp_path / "missing.toml")
    assert cfg.memory.max_note_bytes == 262144
    bad = tmp_path / "c.toml"
    bad.write_text("[memroy]\nmax_note_bytes = 1\n")
    with pytest.raises(WorkspaceError, match="unknown setting memroy"):
        load_config(bad)
    bad.write_text("[approvals]\ntimeout = 'soon'\n")
    with pytest.raises(WorkspaceError, match="approvals.timeout"):
        load_config(bad)
    bad.write_text("[approvals]\nchannel = 'email'\n")
    with pytest.raises(WorkspaceError, match="channel"):
        load_config(bad)
    bad.write_text("not = [toml")
    with pytest.raises(WorkspaceError, match="not valid TOML"):
        load_config(bad)


def test_example_config_loads_every_setting():
    from assistant.workspace import example_dir

    cfg = load_config(example_dir() / "config.toml")
    assert cfg.approvals.channel == "inbox"
    assert cfg.schedule[0].name == "morning-review"


@pytest.mark.parametrize("text,seconds", [("30s", 30), ("15m", 900), ("2h", 7200), ("250ms", 0.25), (5, 5)])
def test_parse_duration(text, seconds):
    from policy.duration import parse_duration

    assert parse_duration(text) == seconds


def test_open_a_file_as_workspace_is_clear(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("x")
    with pytest.raises(WorkspaceError, match="is not a folder") as e:
        open_workspace(f)
    assert "assistant init" not in str(e.value)
