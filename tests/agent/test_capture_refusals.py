"""Issue 22 item 4, three findings of the capture bench on the 1.5B model made into rules:

- told the Kirkstall survey date, it appended a line the note already had (its "Open items"
  line) instead of the new fact: an append that adds no new line is refused, and the refusal says
  to append what the person told;
- told of a dentist, it memory_write'd one line to preferences.md with no base: the refusal
  names the way to add a line (memory_edit, op append, the revision beside the recalled path);
- on either refusal it said the person's message back: the correction of a telling turn quotes
  the person's words as what a saved line may say.
"""

from __future__ import annotations

import json

import pytest
from e2e_support import make_ws

from assistant.agent.usable import QUOTE_CHARS, correction
from assistant.tools.memory import adds_nothing
from test_native_tool_calls import NativeScript  # noqa: E402  (the scripted ChatML model, defined once)

SURVEY = "The Kirkstall drainage survey results arrive on 2026-12-18."


def call(name: str, arguments: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


@pytest.mark.parametrize("text, nothing", [
    ("Open items: drainage survey results, budget sign-off for the boardwalk.", True),   # not the last line
    ("\n  Client: Leeds City Council. Sam leads; Marek does the planting plan.  \n", True),
    ("Survey results arrive on 2026-12-18.", False),
    ("Open items: drainage survey results, budget sign-off for the boardwalk.\nSurvey: 2026-12-18.", False),
    ("drainage", False),            # a word of a line is no line of the note
    ("   \n", False),
])
def test_an_append_adds_nothing_only_when_every_line_is_already_a_line_of_the_note(tmp_path, text, nothing):
    note = (make_ws(tmp_path) / "memory" / "projects" / "kirkstall-park.md").read_text()
    assert adds_nothing(note, text) is nothing


def _turn(session, steps, message):
    model = NativeScript(steps)
    agent = session.new_agent(model)
    result = agent.turn(message)
    return result, [m["content"] for m in agent.conversation.messages()]


def test_a_copied_line_is_refused_and_the_fact_the_person_told_is_then_saved(tmp_path, sessions):
    ws = make_ws(tmp_path)
    session = sessions(ws, "watched")
    path = "projects/kirkstall-park.md"
    rev = session.memory.read(path).revision       # as shown beside the recalled path
    copied = call("memory_edit", {"path": path, "base": rev, "op": "append",
                                  "text": "\nOpen items: drainage survey results, budget sign-off for the boardwalk."})
    fact = call("memory_edit", {"path": path, "base": rev, "op": "append", "text": "Survey results: 2026-12-18."})
    result, told = _turn(session, [copied, SURVEY, fact, "Saved the survey date."], SURVEY)
    refused = [c for c in result.calls if not c.ok]
    assert len(refused) == 1 and "already holds every line of this text" in refused[0].message
    assert "append that instead" in refused[0].message
    note = (ws / "memory" / path).read_text()
    assert note.count("Open items:") == 1 and note.rstrip().endswith("Survey results: 2026-12-18.")
    # the parrot between the two calls was refused with the person's words quoted as the line to save
    assert any("the reply only repeated the person's message" in t and json.dumps(SURVEY) in t for t in told)
    assert result.outcome == "reply" and result.reply == "Saved the survey date."


def test_a_write_over_an_existing_note_without_base_names_the_way_to_add_a_line(tmp_path, sessions):
    dentist = "My dentist is Dr Patel at the Headingley practice."
    ws = make_ws(tmp_path)
    session = sessions(ws, "watched")
    before = (ws / "memory" / "preferences.md").read_text()
    write = call("memory_write", {"path": "preferences.md", "content": "\n- Dentist: Dr Patel."})
    result, _ = _turn(session, [write, "Noted."], dentist)
    assert (ws / "memory" / "preferences.md").read_text() == before          # nothing written
    [refused] = result.calls
    assert not refused.ok and "preferences.md already exists; nothing was written" in refused.message
    assert 'memory_edit with op "append"' in refused.message and "revision shown beside its path" in refused.message


def test_the_telling_correction_quotes_the_person_only_when_short():
    said = "Marek is on holiday until 2026-12-20."
    assert json.dumps(said) in correction("the reply only repeated the person's message", native=True,
                                          telling=True, message=said)
    long = "x " * QUOTE_CHARS
    assert long.strip() not in correction("why", native=True, telling=True, message=long)
    # a question's correction never quotes: it is asked to answer, not to save
    assert said not in correction("why", native=True, telling=False, message=said)


CORRECTION = "Correction: Lina teaches physics now, not chemistry."


def test_a_replace_without_old_names_the_line_it_most_likely_meant_and_the_retry_lands(tmp_path, sessions):
    """Pointed at memory_write for the whole note, the 1.5B model wrote the correction of Lina's
    note as two lines and lost her birthday: the refusal now names the line to change."""
    ws = make_ws(tmp_path)
    session = sessions(ws, "watched")
    path = "people/lina.md"
    rev = session.memory.read(path).revision
    whole = call("memory_edit", {"path": path, "base": rev, "op": "replace",
                                 "text": "Lina is Sam's younger sister. She teaches physics now."})
    line = "Lina is Sam's younger sister. She teaches chemistry in Bristol."
    retry = call("memory_edit", {"path": path, "base": rev, "op": "replace", "old": line,
                                 "text": "Lina is Sam's younger sister. She teaches physics in Bristol."})
    result, _ = _turn(session, [whole, retry, "Lina teaches physics now: noted."], CORRECTION)
    refused, landed = result.calls
    assert not refused.ok and "op replace needs old" in refused.message
    assert f"nearest your text is {json.dumps(line)}" in refused.message
    assert "memory_write" not in refused.message          # no pointer at a whole-note rewrite
    assert landed.ok
    note = (ws / "memory" / path).read_text()
    assert "teaches physics in Bristol" in note and "chemistry" not in note and "Birthday: 14 March" in note


def test_the_nearest_line_is_never_a_frontmatter_line_a_secret_marker_or_a_line_the_text_keeps():
    from assistant.notes.edit import nearest_line
    note = ("---\ndescription: Lina Okafor - Sam's sister, lives in Bristol\n---\n"
            "Lina is Sam's younger sister. She teaches chemistry in Bristol.\n"
            "Door code for Lina's flat: [redacted:lina-door]\n")
    assert nearest_line(note, "Lina is Sam's younger sister, lives in Bristol.") == (
        "Lina is Sam's younger sister. She teaches chemistry in Bristol.")
    assert nearest_line(note, "Door code for Lina's flat: 4711") is None                # holds a marker
    assert nearest_line(note, "Lina is Sam's younger sister. She teaches chemistry in Bristol.\nBirthday: 14 March."
                        ) is None                                                       # kept as it is
    assert nearest_line(note, "Marek is on holiday") is None                            # nothing near


def test_a_refusal_after_a_landed_save_is_no_reply_and_the_person_sees_the_next_one(tmp_path, sessions):
    """The 1.5B model answered each fact it had just saved with "I'm sorry, but I can't assist
    with that.": the person would read that nothing was done."""
    ws = make_ws(tmp_path)
    session = sessions(ws, "watched")
    path = "projects/kirkstall-park.md"
    rev = session.memory.read(path).revision
    save = call("memory_edit", {"path": path, "base": rev, "op": "append", "text": "Survey results: 2026-12-18."})
    model = NativeScript([save, "I'm sorry, but I can't assist with that.", "Saved: the survey results arrive on 2026-12-18."])
    agent = session.new_agent(model)
    result = agent.turn(SURVEY)
    assert result.outcome == "reply" and result.reply == "Saved: the survey results arrive on 2026-12-18."
    told = [m["content"] for m in agent.conversation.messages()]
    assert any("the reply refused to help, but your tool call had already saved it" in t
               and "The save landed" in t for t in told)


@pytest.mark.parametrize("reply, refusal", [
    ("I'm sorry, but I can't assist with that.", True),
    ("Sorry, I cannot help with that.", True),
    ("I am unable to help with that request.", True),
    ("I can help with that: it is saved in people/ana.md.", False),
    ("Saved: Ana lives in Porto now.", False),
])
def test_only_a_refusal_after_a_save_is_unusable(reply, refusal):
    from assistant.agent.usable import unusable_reply
    assert (unusable_reply(reply, saved=True) is not None) is refusal
    assert unusable_reply(reply, saved=False) is None       # before any save a refusal is the model's to give
