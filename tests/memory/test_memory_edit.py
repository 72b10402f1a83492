"""Issue 24 item 1: memory_edit. The edit computation on fixed texts (assistant.notes.edit), and the
model's tool driven by a scripted model in a real session: each op lands exactly, each refusal
(missing or repeated string, unknown or repeated heading, stale base, an edit touching a
redaction) writes nothing, a note holding a vault value is edited elsewhere and keeps it, and the
edit goes through the same gated writer (history, audit)."""

from __future__ import annotations

import json

import pytest

from assistant.agent.events import StepRefused, ToolFinished
from assistant.models.scripted import ScriptedModel
from assistant.notes.edit import Edit, EditRefused, EditTouchesSecret, apply, check_view, view_of
from assistant.secrets.scanner import Scanner

from e2e_support import make_ws

SECRET = "Xq7-vault-value-93kd-P2mz"
NOTE = ("---\ndescription: garden plans\n---\n# Garden\nThe shed code is " + SECRET + ".\n\n"
        "## Plans\n- plant tomatoes\n- fix the fence\n\n### Later\n- a pond\n\n## Done\n- dug the beds\n")
SCANNER = Scanner({"shed": SECRET})


def edited(edit: Edit, raw: str = NOTE) -> str:
    new, expected = apply(view_of(raw, SCANNER), edit, "garden.md")
    check_view(new, expected, SCANNER, "garden.md")
    return new


# --- the computation, on fixed texts ------------------------------------------------------------

def test_the_view_is_the_readers_redacted_text():
    assert view_of(NOTE, SCANNER).text == SCANNER.redact(NOTE)
    assert "[redacted:shed]" in view_of(NOTE, SCANNER).text


def test_append_adds_whole_lines_at_the_end():
    assert edited(Edit("append", "- water daily")) == NOTE + "- water daily\n"
    assert edited(Edit("append", "two"), raw="one") == "one\ntwo\n"


def test_replace_changes_the_one_occurrence_and_keeps_the_secret_bytes():
    new = edited(Edit("replace", "- fix the gate", old="- fix the fence"))
    assert new == NOTE.replace("- fix the fence", "- fix the gate") and SECRET in new


def test_insert_after_puts_the_text_right_under_the_heading():
    new = edited(Edit("insert_after", "- buy seeds", heading="## Plans"))
    assert new == NOTE.replace("## Plans\n", "## Plans\n- buy seeds\n")


def test_replace_section_ends_at_the_next_heading_of_the_same_or_a_higher_level():
    new = edited(Edit("replace_section", "- nothing planned", heading="## Plans"))
    # the subsection (###) was part of it; ## Done (same level) is not; the blank line before it stays
    assert new == NOTE.replace("- plant tomatoes\n- fix the fence\n\n### Later\n- a pond\n\n",
                               "- nothing planned\n\n")
    sub = edited(Edit("replace_section", "- a big pond\n", heading="### Later"))
    assert sub == NOTE.replace("- a pond\n", "- a big pond\n")
    last = edited(Edit("replace_section", "- everything", heading="## Done"))
    assert last.endswith("## Done\n- everything\n")


def test_a_text_repeating_the_heading_does_not_double_it():
    new = edited(Edit("replace_section", "### Later\n- a pond and fish\n", heading="### Later"))
    assert new.count("### Later") == 1 and "- a pond and fish\n" in new


def test_headings_in_frontmatter_and_code_blocks_do_not_count():
    raw = "---\n# not a heading: yaml comment\n---\n```\n## Plans\n```\n## Plans\n- x\n"
    new = edited(Edit("insert_after", "- y", heading="## Plans"), raw=raw)
    assert new == raw.replace("```\n## Plans\n- x\n", "```\n## Plans\n- y\n- x\n")
    with pytest.raises(EditRefused, match="no heading line '# not a heading"):
        edited(Edit("insert_after", "z", heading="# not a heading: yaml comment"), raw=raw)


@pytest.mark.parametrize("edit, words", [
    (Edit("replace", "x", old="- water the roses"), "does not occur in garden.md"),
    (Edit("replace", "x", old="- "), "occurs 4 times in garden.md (lines 8, 9, 12, 15)"),
    (Edit("insert_after", "x", heading="## Ideas"), "no heading line '## Ideas' in garden.md (its headings: '# Garden'"),
    (Edit("insert_after", "x", heading="Plans"), "one whole markdown heading line"),
    (Edit("replace", "- fix the fence", old="- fix the fence"), "leaves garden.md as it is"),
    (Edit("append", ""), "nothing to append"),
    (Edit("append", "x", old="y"), "old is only for op replace"),
    (Edit("replace", "x", heading="## Plans"), "heading is only for ops insert_after and replace_section"),
    (Edit("replace_section", "x"), "needs heading"),
    (Edit("rewrite", "x"), "op must be one of append, replace, insert_after, replace_section"),
])
def test_each_bad_edit_is_refused_with_its_reason(edit, words):
    with pytest.raises(EditRefused) as caught:
        edited(edit)
    assert words in str(caught.value) and "nothing was written" in str(caught.value)
    assert SECRET not in str(caught.value)


def test_a_repeated_heading_is_refused():
    raw = "## Log\n- a\n## Log\n- b\n"
    with pytest.raises(EditRefused, match=r"'## Log' occurs 2 times in garden.md \(lines 1, 3\)"):
        edited(Edit("insert_after", "x", heading="## Log"), raw=raw)


@pytest.mark.parametrize("edit", [
    Edit("replace", "code: [redacted:shed]", old="code is [redacted:shed]"),     # the marker itself
    Edit("replace", "s", old="[redacted:shed]."),                                # part of it
    Edit("replace", "code isX", old="code is "),                                  # the letter before it
    Edit("replace", "!", old="."),                                                # the one after it... once
    Edit("replace_section", "nothing", heading="# Garden"),                       # a section holding it
])
def test_an_edit_touching_the_redaction_is_refused(edit):
    with pytest.raises(EditTouchesSecret) as caught:
        edited(edit, raw=NOTE.replace("dug the beds", "dug the beds today"))
    assert "nothing was written" in str(caught.value) and SECRET not in str(caught.value)


def test_a_marker_is_never_written_as_text():
    with pytest.raises(EditTouchesSecret, match="never written as text"):
        edited(Edit("append", "the shed code is [redacted:shed]"))


def test_an_edit_next_to_a_secret_that_keeps_its_neighbours_is_allowed():
    new = edited(Edit("replace", "The gate code is ", old="The shed code is "))
    assert new == NOTE.replace("The shed code is ", "The gate code is ") and SECRET in new


def test_an_edit_that_would_unhide_a_credential_is_refused():
    # a token's shape may depend on what is around it: the view after the edit must be the view
    # before with the change, or a credential would be shown the next time the note is read
    raw = "keys:\naws AKIAQ3EGRTZPXK7N2M4B here\n"
    scanner = Scanner({})
    view = view_of(raw, scanner)
    assert "[redacted:" in view.text
    with pytest.raises(EditTouchesSecret):
        new, expected = apply(view, Edit("replace", "awsZ", old="aws "), "k.md")
        check_view(new, expected, scanner, "k.md")


# --- the model's tool, a scripted model in a real session ---------------------------------------

def _turn(session, tmp_path, steps, *, everything=False):
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    script.write_text(json.dumps(steps + [{"reply": "done"}]))
    events = []
    agent = session.new_agent(ScriptedModel(script), on_event=events.append)
    agent.turn("please update the garden note")
    return events if everything else [e for e in events if isinstance(e, ToolFinished)]


def _note(ws):
    return (ws / "memory" / "garden.md").read_text()


@pytest.fixture
def garden(tmp_path, sessions):
    ws = make_ws(tmp_path)
    (ws / "memory" / "garden.md").write_text(NOTE)
    session = sessions(ws, "watched", vault={"shed": SECRET})
    return ws, session


def _edit(session, ws, **args):
    rev = session.memory.revision((ws / "memory" / "garden.md").read_bytes())
    return {"tool": "memory_edit", "args": {"path": "garden.md", "base": rev, **args}}


@pytest.mark.parametrize("args, expected", [
    ({"op": "append", "text": "- water daily"}, NOTE + "- water daily\n"),
    ({"op": "replace", "old": "- fix the fence", "text": "- fix the gate"}, NOTE.replace("fence", "gate")),
    ({"op": "insert_after", "heading": "## Plans", "text": "- buy seeds"},
     NOTE.replace("## Plans\n", "## Plans\n- buy seeds\n")),
    ({"op": "replace_section", "heading": "## Done", "text": "- dug the beds\n- built the shed"},
     NOTE + "- built the shed\n"),
])
def test_the_model_edits_a_note_holding_a_vault_value_and_keeps_it(garden, tmp_path, args, expected):
    ws, session = garden
    [done] = _turn(session, tmp_path, [_edit(session, ws, **args)])
    assert done.ok, done.output
    assert "edited garden.md" in done.output and "its revision is now" in done.output
    assert _note(ws) == expected and SECRET in _note(ws)            # the secret's bytes kept exactly
    assert SECRET not in done.output


@pytest.mark.parametrize("args, words", [
    ({"op": "replace", "old": "- water the roses", "text": "x"}, "does not occur"),
    ({"op": "replace", "old": "- ", "text": "x"}, "occurs 4 times"),
    ({"op": "insert_after", "heading": "## Ideas", "text": "x"}, "no heading line '## Ideas'"),
    ({"op": "replace", "old": "code is [redacted:shed]", "text": "code is 1234"}, "touches a redacted secret"),
    ({"op": "replace", "old": "code is ", "text": "code isX"}, "touches a redacted secret"),
])
def test_the_models_bad_edits_are_refused_and_nothing_is_written(garden, tmp_path, args, words):
    ws, session = garden
    [done] = _turn(session, tmp_path, [_edit(session, ws, **args)])
    assert not done.ok and words in done.output and "nothing was written" in done.output
    assert _note(ws) == NOTE
    assert SECRET not in done.output


def test_a_stale_base_and_a_missing_base_are_refused(garden, tmp_path):
    ws, session = garden
    stale = _edit(session, ws, op="append", text="- one")
    stale["args"]["base"] = "0" * 12
    [done] = _turn(session, tmp_path, [stale])
    assert not done.ok and "changed since you read it" in done.output
    # without base the call does not fit the tool's schema: an invalid step, no call at all
    missing = {"tool": "memory_edit", "args": {"path": "garden.md", "op": "append", "text": "- two"}}
    events = _turn(session, tmp_path, [missing], everything=True)
    [refused] = [e for e in events if isinstance(e, StepRefused)]
    assert "base" in (refused.error or "")
    assert not [e for e in events if isinstance(e, ToolFinished)]
    assert _note(ws) == NOTE


def test_an_edit_copying_the_secret_in_is_refused(garden, tmp_path):
    # the model never saw the value; if it knows it anyway, a second copy is still a new secret
    ws, session = garden
    [done] = _turn(session, tmp_path, [_edit(session, ws, op="append", text=f"again: {SECRET}")])
    assert not done.ok and _note(ws) == NOTE


def test_an_edit_is_one_write_of_the_gated_writer_with_history_and_audit(garden, tmp_path):
    ws, session = garden
    [done] = _turn(session, tmp_path, [_edit(session, ws, op="append", text="- water daily")])
    assert done.ok, done.output
    written = [json.loads(line) for line in ws.joinpath("state", "audit.jsonl").read_text().splitlines()
               if '"written"' in line]
    assert written[-1]["target"] == "garden.md" and written[-1]["source"] == "assistant"
    [version] = [v for v in session.memory.history.versions("garden.md") if v.source == "assistant"]
    assert version.sha256 == written[-1]["sha256"]
