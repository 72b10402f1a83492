"""Issue 23 item 12: every `memory` command that takes a note accepts its name without `.md`,
as `memory cat` does (`memory edit people/lina` is people/lina.md)."""

import json
import os
import sys
from pathlib import Path

from click.testing import CliRunner

from assistant.cli import main


def run(ws, *args, input=None, env=None):
    return CliRunner().invoke(main, ["-w", str(ws), "memory", *args], input=input, env=env or {})


def _versions(ws, name):
    r = run(ws, "log", name, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_log_show_diff_revert_take_a_name_without_md(ws):
    assert run(ws, "write", "people/lina.md", "--force", input="Lina moved to Leeds.\n").exit_code == 0
    versions = _versions(ws, "people/lina")
    assert versions and all(v["path"] == "people/lina.md" for v in versions)
    assert versions == _versions(ws, "people/lina.md")
    old = versions[-1]["rev"]

    r = run(ws, "show", "people/lina", "--rev", old)
    assert r.exit_code == 0, r.output
    assert r.stdout == run(ws, "show", "people/lina.md", "--rev", old).stdout

    r = run(ws, "diff", "people/lina")
    assert r.exit_code == 0, r.output
    assert "Lina moved to Leeds." in r.stdout

    r = run(ws, "revert", "people/lina", "--to", old)
    assert r.exit_code == 0, r.output
    assert "reverted people/lina.md" in r.stdout
    assert "Leeds" not in (ws / "memory/people/lina.md").read_text()


def test_rm_takes_a_name_without_md(ws):
    r = run(ws, "rm", "people/marek")
    assert r.exit_code == 0, r.output
    assert "removed people/marek.md" in r.stdout
    assert not (ws / "memory/people/marek.md").exists()


def test_edit_takes_a_name_without_md(ws, tmp_path):
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'a').write('Edited by hand.\\n')\n")
    r = run(ws, "edit", "people/lina", env={"EDITOR": f"{sys.executable} {editor}"})
    assert r.exit_code == 0, r.output
    assert "saved people/lina.md" in r.stdout
    assert (ws / "memory/people/lina.md").read_text().endswith("Edited by hand.\n")
    assert not (ws / "memory/people/lina").exists()


def test_a_name_without_md_that_is_no_note_says_the_md_name(ws):
    r = run(ws, "rm", "people/nobody")
    assert r.exit_code == 1
    assert "people/nobody.md" in r.stderr and "does not end in .md" not in r.stderr
    r = run(ws, "log", "people/nobody")
    assert r.exit_code == 0 and "no versions of people/nobody.md" in r.stdout
