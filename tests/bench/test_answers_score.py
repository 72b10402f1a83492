"""The answer benchmark's scorer (bench/answers_score.py) on fixed answer strings."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
_spec = importlib.util.spec_from_file_location("answers_score", BENCH / "answers_score.py")
answers_score = importlib.util.module_from_spec(_spec)
sys.modules["answers_score"] = answers_score
_spec.loader.exec_module(answers_score)   # by path: bench/ never goes on sys.path (bench/policy.py)
score = answers_score.score

NOTES = """---
description: Lina Okafor - Sam's sister, lives in Bristol
---
Sam lives in Leeds.
Lina is Sam's younger sister. She teaches chemistry in Bristol.
Birthday: 14 March. Likes oolong tea and long walks on the Downs.
---
description: Marek Novak - colleague, planting specialist on the Kirkstall project
---
Marek works with Sam at the studio. Best reached by phone in the afternoon.
Neighbour Marek Nowak: 07700 900733. No meetings before 9:30 on Mondays.
"""
PERSONA = "You are Wren, a calm and careful personal assistant who runs on this person's own computer.\n"

WHERE = {"id": "q1", "kind": "one-note", "question": "Where does Lina live?", "must": ["Bristol"],
         "must_not": ["Leeds"], "notes": ["people/lina.md"]}
REACH = {"id": "q2", "kind": "body-only", "question": "How do I reach Marek?", "must": ["phone", "afternoon"],
         "must_not": ["morning"], "notes": ["people/marek.md"]}
BIRTHDAY = {"id": "q3", "kind": "body-only", "question": "When is Lina's birthday?",
            "must": [["14 March", "March 14", "14th March"]], "must_not": [], "notes": ["people/lina.md"]}
NOWAK = {"id": "q4", "kind": "body-only", "question": "What is Marek Nowak's number?", "must": ["07700 900733"],
         "must_not": [], "notes": ["people/marek-nowak.md"]}
MONDAY = {"id": "q5", "kind": "body-only", "question": "When do Monday meetings start at the earliest?",
          "must": [["9:30", "half past nine"]], "must_not": [], "notes": ["preferences.md"]}
PHONE = {"id": "q6", "kind": "unanswerable", "question": "What is Marek Novak's phone number?", "must": [],
         "must_not": ["07700 900733"], "notes": ["people/marek.md"]}
DENTIST = {"id": "q7", "kind": "unanswerable", "question": "When is my dentist appointment?", "must": [],
           "must_not": [], "notes": []}


def label(question: dict, answer: str | None, **kw) -> str:
    return score(question, answer, known=NOTES, persona=PERSONA, **kw).label


@pytest.mark.parametrize("question, answer", [
    (WHERE, "Lina lives in Bristol."),
    (WHERE, "BRISTOL"),
    (REACH, "Phone him, ideally in the afternoon."),
    (BIRTHDAY, "Her birthday is on March 14."),
    (BIRTHDAY, "14th March"),
    (NOWAK, "You can call him on 07700900733."),          # the digits, written without spaces
    (MONDAY, "Not before 9.30 on Mondays."),                # 9.30 and 9:30 alike
])
def test_every_required_fact_in_few_words_is_correct(question, answer):
    assert label(question, answer) == "correct"


def test_some_required_facts_are_partial():
    s = score(REACH, "Give him a ring on the phone.", known=NOTES)
    assert (s.label, s.found, s.missing) == ("partial", ["phone"], ["afternoon"])


def test_every_fact_in_more_than_80_words_is_partial():
    answer = "Lina lives in Bristol. " + "She is lovely and I am happy to tell you more about her. " * 7
    assert answers_score.word_count(answer) > 80
    assert label(WHERE, answer) == "partial"


@pytest.mark.parametrize("question, answer", [
    (WHERE, "Lina lives in Leeds."),                        # a forbidden fact
    (WHERE, "She likes oolong tea."),                       # no required fact
    (REACH, "Email him in the morning, by phone if urgent, afternoon at worst."),   # forbidden beats required
    (WHERE, "That is not in my notes."),                    # abstaining when the notes do say
])
def test_a_forbidden_fact_or_no_required_fact_is_wrong(question, answer):
    assert label(question, answer) == "wrong"


@pytest.mark.parametrize("answer", [
    "That's not in my notes.",
    "My notes don't say.",
    "My notes don\u2019t mention his phone number.",            # a curly apostrophe
    "I don't have Marek's phone number in my notes.",
    "Sorry, I couldn't find that in my notes.",              # "Sorry" starts a sentence: no name
    "I don't know: there is no note about that.",
    "His phone number is not specified in the notes.",      # the 1.5B model's wording
    "The notes do not give a phone number.",
])
def test_not_in_my_notes_on_an_unanswerable_question_is_abstained(answer):
    assert label(PHONE, answer) == "abstained"
    assert label(DENTIST, answer) == "abstained"


@pytest.mark.parametrize("question, answer, invented", [
    (DENTIST, "Your dentist appointment is on 2027-01-01 at 10:00.", ["2027", "01", "10"]),
    (PHONE, "Marek's number is 0113 555 1234.", ["0113", "555", "1234"]),
    (PHONE, "My notes don't say, but try 0113 555 1234.", ["0113", "555", "1234"]),   # abstains, yet invents
])
def test_a_number_in_neither_notes_nor_question_is_invented(question, answer, invented):
    s = score(question, answer, known=NOTES)
    assert s.label == "invented"
    assert s.invented == invented


def test_a_name_found_nowhere_is_invented_even_beside_the_right_fact():
    s = score(WHERE, "Lina lives in Bristol with her husband Tomasz.", known=NOTES)
    assert (s.label, s.invented) == ("invented", ["Tomasz"])


def test_a_non_abstention_on_an_unanswerable_question_is_invented():
    # every word of it is in the notes, but the notes do not answer the question
    assert label(PHONE, "Marek is best reached by phone in the afternoon.") == "invented"
    assert label(PHONE, "Marek's number is 07700 900733.") == "invented"     # the other Marek's


def test_known_names_numbers_and_the_question_are_not_invented():
    s = score(MONDAY, "On Mondays, not before 9:30; Marek Novak and Lina agree.", known=NOTES)
    assert (s.label, s.invented) == ("correct", [])
    q = dict(WHERE, question="Where does Lina live, in Bristol or in Cardiff?")
    assert label(q, "In Bristol, not Cardiff.") == "correct"
    assert label(WHERE, "I'm Wren: Lina lives in Bristol.") == "correct"   # the persona's own name


@pytest.mark.parametrize("answer", ["", "   ", "<text>", '{"reply": "<text>"}', 'Sure: {"tool": "memory_read"}',
                                    "You are Wren, a calm and careful personal assistant who runs on this person's own computer."])
def test_empty_schema_example_or_persona_echo_is_placeholder(answer):
    assert label(WHERE, answer) == "placeholder"
    assert label(PHONE, answer) == "placeholder"


def test_a_reply_the_harness_substituted_is_placeholder():
    s = score(WHERE, None, known=NOTES, substituted="error: the model gave no usable reply after 3 tries")
    assert s.label == "placeholder"
    assert "no usable reply" in s.why


def test_facts_match_whole_words_only():
    q = dict(WHERE, must=["Ana"])
    assert label(q, "She eats a banana.") == "wrong"
    assert answers_score.has_fact(["Tuesday", "Tuesdays"], "on Tuesdays at 10")
