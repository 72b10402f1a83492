"""Workspace layout, config loading and `assistant init`."""

import os
import re
import stat

import pytest
from click.testing import CliRunner

from assistant.cli import main
from assistant.workspace.layout import (
    WorkspaceError, init_workspace, load_config, open_workspace, select_workspace,
)
import json
from acceptance_support import out, run_cli
from pathlib import Path
from workspaces import assert_config_refused


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
    assert_config_refused(bad, "[memroy]\nmax_note_bytes = 1\n", "unknown setting memroy")
    assert_config_refused(bad, "[approvals]\ntimeout = 'soon'\n", "approvals.timeout")
    assert_config_refused(bad, "[approvals]\nchannel = 'email'\n", "channel")
    assert_config_refused(bad, "not = [toml", "not valid TOML")


def test_example_config_loads_every_setting():
    from assistant.workspace.layout import example_dir

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


def _grant_file(ws, grants):
    (ws / "grants.json").write_text(json.dumps({"version": 1, "grants": grants}))


G1 = {"kind": "memory", "target": "people/lina.md", "granted_at": "2026-01-01T00:00:00Z",
      "note": "acceptance"}


# acceptance (issue 2: workspace), written from the words
def test_init_creates_workspace(tmp_path):
    d = tmp_path / "new-ws"
    r = run_cli(["init", str(d)])
    assert r.exit_code == 0, out(r)
    assert out(r).strip(), "init says what it made"
    for name in ("PERSONA.md", "config.toml"):
        assert (d / name).is_file()
    for name in ("memory", "files", "state"):
        assert (d / name).is_dir()
    # issue 13 changed init: a clean workspace (one index note), the example only with --example
    assert [p.name for p in (d / "memory").rglob("*.md")] == ["index.md"]
    for name in ("memory", "state"):
        assert stat.S_IMODE((d / name).stat().st_mode) == 0o700


def test_init_cli_refuses_non_empty(tmp_path):
    d = tmp_path / "full"
    d.mkdir()
    (d / "mine.txt").write_text("keep me")
    r = run_cli(["init", str(d)])
    assert r.exit_code != 0
    assert (d / "mine.txt").read_text() == "keep me"
    assert sorted(os.listdir(d)) == ["mine.txt"]


def test_init_refuses_existing_workspace(vault_ws):
    persona = (vault_ws / "PERSONA.md").read_bytes()
    r = run_cli(["init", str(vault_ws)])
    assert r.exit_code != 0
    assert (vault_ws / "PERSONA.md").read_bytes() == persona


def test_example_workspace_is_realistic():
    ex = Path(__file__).resolve().parents[2] / "workspace.example"
    assert (ex / "PERSONA.md").is_file()
    assert (ex / "config.toml").is_file()
    notes = list((ex / "memory").rglob("*.md"))
    assert len(notes) >= 3
    assert any(n.read_text().startswith("---") for n in notes), "notes with frontmatter"
    assert [p for p in (ex / "files").rglob("*") if p.is_file()]
    import tomllib
    tomllib.loads((ex / "config.toml").read_text())


@pytest.mark.parametrize("where", ["group", "command", "long", "env"])
def test_workspace_selection(vault_ws, tmp_path, where):
    _grant_file(vault_ws, [G1])
    other = tmp_path / "other"
    run_cli(["init", str(other)])
    env = {}
    if where == "group":
        args = ["-w", str(vault_ws), "grants", "list", "--json"]
    elif where == "command":
        args = ["grants", "list", "--json", "-w", str(vault_ws)]
    elif where == "long":
        args = ["--workspace", str(vault_ws), "grants", "list", "--json"]
    else:
        args = ["grants", "list", "--json"]
        env = {"ASSISTANT_WORKSPACE": str(vault_ws)}
    r = run_cli(args, env=env)
    assert r.exit_code == 0, out(r)
    assert "people/lina.md" in r.output


def test_option_beats_env(vault_ws, tmp_path):
    _grant_file(vault_ws, [G1])
    other = tmp_path / "other"
    run_cli(["init", str(other)])
    r = run_cli(["-w", str(vault_ws), "grants", "list", "--json"],
                env={"ASSISTANT_WORKSPACE": str(other)})
    assert r.exit_code == 0, out(r)
    assert "people/lina.md" in r.output


def test_init_into_existing_empty_dir(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    r = run_cli(["init", str(d)])
    assert r.exit_code == 0, out(r)
    assert (d / "config.toml").is_file() and (d / "state").is_dir()


def test_missing_workspace_is_clear_error(tmp_path):
    for args in (["grants", "list"], ["approvals", "list"], ["vault", "list"]):
        r = run_cli(args, ws=tmp_path / "nowhere")
        assert r.exit_code != 0
        assert "init" in out(r) and "Traceback" not in out(r)
    assert not (tmp_path / "nowhere").exists()
