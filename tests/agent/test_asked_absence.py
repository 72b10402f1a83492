"""Issue 22 item 3, unanswerable questions: asked for Marek's phone number, the 1.5B model answered
with his note's "Best reached by phone in the afternoon" (recall rightly brought the note; it holds
no number). When a question asks for a phone number, an email address, an amount of money or a
calendar date and no recalled note shows anything of that shape, the turn says so; when one
does (whatever it is), or the question asks for something else, nothing is added."""

from __future__ import annotations

import datetime as dt

import pytest
from e2e_support import make_ws

from assistant.agent.completion import render_page
from assistant.agent.prompt import render_user_turn
from assistant.recall.asked import absent_kind, asked_kind
from test_native_tool_calls import NativeScript  # noqa: E402  (the scripted ChatML model, defined once)

MAREK = "Marek works with Sam at the studio. Best reached by phone in the afternoon."
KIRKSTALL = "Planting plan due 2026-12-12 at 14:00. Open items: budget sign-off for the boardwalk."


@pytest.mark.parametrize("question, texts, missing", [
    ("What is Marek's phone number?", [MAREK, KIRKSTALL], "a phone number"),     # a date and a time are no number
    ("What's Marek's mobile number?", ["Mobile: 07700 900123"], None),
    ("Which number do I call?", [MAREK], "a phone number"),
    ("Which bus do I take to the studio?", [MAREK], None),                       # not recognised: silent
    ("What is Marek's phone number?", ["Office: +44 (0)113 496-0000"], None),
    ("What is Lina's email address?", [MAREK], "an email address"),
    ("What is Lina's email?", ["lina.okafor@example.org"], None),
    ("How much is the budget for the Kirkstall boardwalk?", [KIRKSTALL], "an amount of money"),
    ("How much is the budget for the Kirkstall boardwalk?", ["Boardwalk budget: £42,000"], None),
    ("What does the boardwalk cost?", ["Quote came in at 30k euros."], None),
    ("Who approves the budget?", [KIRKSTALL], None),                             # asks for a person
    ("When is Marek's birthday?", [MAREK], "a date"),
    ("When is Marek's birthday?", ["Birthday: 14 March."], None),
    ("When is Marek's birthday?", ["born March 3rd"], None),
    ("When should I call Marek?", [MAREK], None),                                # "afternoon" answers it
    ("What is Marek's phone number?", [], None),                                 # nothing recalled: its own line
    ("What is Marek's phone number?", [MAREK + "\nMobile: [redacted:marek-mobile]"], None),   # hidden, maybe it
])
def test_an_absence_is_named_only_when_certain_from_the_text(question, texts, missing):
    assert absent_kind(question, texts) == missing


def test_each_kind_is_asked_in_ordinary_words():
    assert asked_kind("what's his phone number") is not None
    assert asked_kind("Tell me her e-mail address").name == "an email address"
    assert asked_kind("Where does Lina live?") is None


def test_the_turn_and_the_completion_page_say_what_the_notes_do_not_show():
    day = dt.date(2026, 12, 3)
    absent = "If you were asked for a phone number: it is not in your notes"
    turn = render_user_turn("What is Marek's phone number?", [], day, [("people/marek.md", MAREK)])
    assert absent in turn and turn.index(absent) < turn.index("[the person's message]")
    assert absent not in render_user_turn("What is Marek's phone number?", [], day,
                                          [("people/marek.md", MAREK + "\nMobile: 07700 900123")])
    assert absent not in render_user_turn("Who is Marek?", [], day, [("people/marek.md", MAREK)])
    page = render_page("What is Marek's phone number?", [("people/marek.md", MAREK)])
    assert "Note people/marek.md:" in page and "(None of these notes shows a phone number.)" in page


def test_a_real_turn_on_the_example_carries_the_line_into_the_prompt(tmp_path, sessions):
    ws = make_ws(tmp_path)
    session = sessions(ws, "watched")
    model = NativeScript(["That is not in my notes."])
    agent = session.new_agent(model)
    assert agent.turn("What is Marek's phone number?").reply == "That is not in my notes."
    prompt = "\n".join(m["content"] for m in model.seen[0])
    assert "Best reached by phone in the afternoon." in prompt      # the note was recalled ...
    assert "If you were asked for a phone number: it is not in your notes" in prompt  # ... and holds no number
