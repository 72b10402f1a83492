"""Issue 24 item 1, the CLI twin: `assistant memory edit PATH` with --append, --replace,
--insert-after or --replace-section (and an optional --base) makes one change through the same
Memory.edit as the model's memory_edit; with no option it still opens $EDITOR. And memory_edit in
a watched chat with a scripted model: the edit is shown as a diff, the secret is kept."""

from __future__ import annotations

import json
import sys

import pytest

from secrets_support import cli, make_ws, transcript_events, vault_env, write_script

SECRET = "Xq7-vault-value-93kd-P2mz"
NOTE = ("---\ndescription: garden plans\n---\n# Garden\nThe shed code is " + SECRET + ".\n\n"
        "## Plans\n- plant tomatoes\n- fix the fence\n\n## Done\n- dug the beds\n")


@pytest.fixture
def ws(tmp_path):
    ws = make_ws(tmp_path, secrets={"shed": SECRET})
    (ws / "memory" / "garden.md").write_text(NOTE)
    return ws


def edit(ws, *args):
    return cli("-w", str(ws), "memory", "edit", "garden.md", *args, environ=vault_env())


def note(ws) -> str:
    return (ws / "memory" / "garden.md").read_text()


def revision(ws) -> str:
    r = cli("-w", str(ws), "memory", "cat", "--json", "garden.md", environ=vault_env())
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["revision"]


@pytest.mark.parametrize("args, expected", [
    (("--append", "- water daily"), NOTE + "- water daily\n"),
    (("--replace", "- fix the fence", "- fix the gate"), NOTE.replace("fence", "gate")),
    (("--insert-after", "## Plans", "- buy seeds"), NOTE.replace("## Plans\n", "## Plans\n- buy seeds\n")),
    (("--replace-section", "## Plans", "- nothing yet"),
     NOTE.replace("- plant tomatoes\n- fix the fence\n", "- nothing yet\n")),
])
def test_each_edit_option_changes_the_note_and_keeps_its_secret(ws, args, expected):
    r = edit(ws, *args)
    assert r.returncode == 0, r.stderr
    assert "edited garden.md" in r.stdout
    assert note(ws) == expected and SECRET not in r.stdout + r.stderr


def test_base_is_optional_for_the_person_and_a_stale_one_is_refused(ws):
    r = edit(ws, "--append", "- one", "--base", revision(ws))
    assert r.returncode == 0, r.stderr
    stale = edit(ws, "--append", "- two", "--base", "0" * 12)
    assert stale.returncode == 1 and "is not its current revision" in stale.stderr
    assert "--base 000000000000" in stale.stderr
    assert note(ws) == NOTE + "- one\n"


@pytest.mark.parametrize("args, words", [
    (("--replace", "- no such line", "x"), "does not occur in garden.md"),
    (("--replace", "- ", "x"), "occurs 3 times"),
    (("--insert-after", "## Ideas", "x"), "no heading line '## Ideas'"),
    (("--replace", "code is [redacted:shed]", "code is 1"), "touches a secret in garden.md"),
    (("--replace-section", "# Garden", "nothing"), "open the note with `assistant memory edit garden.md`"),
    (("--append", f"code again: {SECRET}"), "secret"),
    (("--append", "a", "--replace", "b", "c"), "give one of --append, --replace, --insert-after or --replace-section"),
    (("--base", "0" * 12), "--base goes with an edit option"),
])
def test_bad_edits_are_refused_and_nothing_is_written(ws, args, words):
    r = edit(ws, *args)
    assert r.returncode == 1 and words in r.stderr, r.stderr
    assert note(ws) == NOTE
    assert SECRET not in r.stdout + r.stderr


def test_without_an_option_the_editor_still_opens(ws, tmp_path):
    ed = tmp_path / "ed.py"
    ed.write_text("import sys\np = sys.argv[-1]\nopen(p, 'a').write('- from the editor\\n')\n")
    r = cli("-w", str(ws), "memory", "edit", "garden.md", environ=vault_env(EDITOR=f"{sys.executable} {ed}"))
    assert r.returncode == 0, r.stderr
    assert note(ws) == NOTE + "- from the editor\n"


def test_a_chat_edit_is_shown_as_a_diff_and_keeps_the_secret(ws, tmp_path):
    from assistant.memory import memory_read

    import os
    os.environ["ASSISTANT_VAULT_PASSPHRASE"] = vault_env()["ASSISTANT_VAULT_PASSPHRASE"]
    try:
        base = memory_read("garden.md", workspace=ws).revision
    finally:
        del os.environ["ASSISTANT_VAULT_PASSPHRASE"]
    script = write_script(tmp_path, [
        {"tool": "memory_edit", "args": {"path": "garden.md", "base": base, "op": "replace",
                                         "old": "- fix the fence", "text": "- fix the gate"}},
        {"reply": "Updated the plan."}])
    r = cli("-w", str(ws), "chat", "--model", f"script:{script}", input="the fence is fine, the gate is not\n",
            environ=vault_env())
    assert r.returncode == 0, r.stderr
    assert note(ws) == NOTE.replace("fence", "gate")
    assert "+- fix the gate" in r.stdout and "-- fix the fence" in r.stdout
    assert "changed on disk" not in r.stdout          # the assistant's own edit is not a hand edit
    [result] = [e for e in transcript_events(ws) if e["event"] == "tool_result"]
    assert result["ok"] and SECRET not in r.stdout + r.stderr
