"""A question that names someone recalls only the notes that mention them: Lina's note, which
shares "birthday" (and holds her birthday, which the 1.5B model gave as his), is not recalled for
"When is Marek's birthday?"; her note ("Sam's sister, lives in Bristol") is not recalled
for "Where does my sister Ana live?". The person's own pinned note stays for a question in the
first person, and a question with no name, or names no recalled note mentions, recalls as before."""

from __future__ import annotations

import pytest
from recall_support import make_ws, scripted, session

from assistant.recall.index import Index
from assistant.recall.named import (
    about_the_names, in_first_person, mentions, name_groups, names_in, the_person_themself,
)
from assistant.recall.turn import OWN_NOTE, Recaller
from assistant.workspace.config import RecallConfig

EXAMPLE_NOTES = ("people/lina.md", "people/marek.md", "projects/kirkstall-park.md", "index.md", "preferences.md")


@pytest.fixture()
def example(tmp_path):
    """The example's notes (as `init --example` writes them) plus Ana's note as the 1.5B model saved it."""
    ws = make_ws(tmp_path)
    (ws / "memory" / "people" / "ana.md").write_text("Moved to Porto last month.\n")
    (tmp_path / "state").mkdir()
    index = Index(tmp_path / "state", ws / "memory")
    recaller = Recaller(index, RecallConfig(), own_notes=("index.md",))
    recaller.start()
    yield ws, index, recaller
    index.close()


def _paths(recaller, question):
    return [r.path for r in recaller(question)]


def test_a_named_person_s_question_leaves_out_notes_that_do_not_mention_them(example):
    ws, index, recaller = example
    # what the index alone ranks: Lina's note shares "birthday", Lina's "sister" and "live"
    assert "people/lina.md" in [h.path for h in index.search("When is Marek's birthday?", sources=("note",))]
    assert [h.path for h in index.search("Where does my sister Ana live?", sources=("note",))][0] == "people/lina.md"
    marek = _paths(recaller, "When is Marek's birthday?")
    assert "people/marek.md" in marek and "people/lina.md" not in marek
    ana = _paths(recaller, "Where does my sister Ana live?")
    assert ana[0] == "people/ana.md" and "people/lina.md" not in ana


def test_the_person_s_own_note_stays_for_a_first_person_question(example):
    _, _, recaller = example
    got = _paths(recaller, "What is the name of the studio where Marek and I work?")
    assert "people/marek.md" in got and "index.md" in got


def test_a_question_with_no_name_recalls_as_before(example):
    _, index, recaller = example
    question = "Which cities do my sister and I live in?"
    got = _paths(recaller, question)
    assert "people/lina.md" in got and "index.md" in got


def test_names_no_recalled_note_mentions_change_nothing():
    items = [("people/lina.md", "Lina teaches chemistry"), ("index.md", "Sam, a landscape architect")]
    text_of = " ".join
    assert about_the_names("Does Zoltan teach chemistry?", items, text_of) == items
    assert about_the_names("Does Lina teach chemistry?", items, text_of) == items[:1]
    # a pinned note of the person's own stays only when the question is in the first person
    own = lambda it: it[0] == "index.md"   # noqa: E731
    assert about_the_names("Does Lina teach what I teach?", items, text_of, own) == items
    assert about_the_names("Does Lina teach chemistry?", items, text_of, own) == items[:1]


def test_the_rendered_turn_holds_marek_s_note_and_not_lina_s_birthday(example, tmp_path):
    ws, _, _ = example
    model = scripted(tmp_path, [{"reply": "Not in my notes."}])
    with session(ws, kind="chat") as s:
        s.new_agent(model).turn("When is Marek's birthday?")
    last = model.calls[0][-1]["content"]
    context = last.split("[the person's message]\n", 1)[0]
    assert "--- people/marek.md" in context and "people/lina.md" not in context
    assert "14 March" not in context      # the date the 1.5B model answered with


def test_names_are_capitalised_words_inside_a_sentence():
    assert names_in("When is Marek's birthday?") == ["marek"]
    assert names_in("Where does my sister Ana live?") == ["ana"]
    assert names_in("What is the earliest I take meetings on a Monday?") == ["monday"]
    # a sentence's first word, and "I", name nobody
    assert names_in("Lina? Where does she live?") == []
    assert names_in("Which cities do my sister and I live in?") == []
    assert names_in("How much did Hale & Sons quote?") == ["hale", "sons"]
    assert names_in("When did \u201cKirkstall\u201d start?") == ["kirkstall"]
    # a line's first word starts a sentence too
    assert names_in("Dear Ana,\nWhere is Lina now?") == ["ana", "lina"]


def test_mentions_matches_the_start_of_a_word_in_any_case():
    assert mentions("Free on Mondays after ten", ["monday"])
    assert mentions("people/marek-nowak.md", ["nowak"])
    assert mentions("MAREK: call after lunch", ["marek"])
    assert not mentions("Shanaya lives in Leeds", ["ana"])
    assert in_first_person("Where do Marek and I work?") and not in_first_person("Where does Ana live?")


def test_a_session_keeps_the_pinned_note_for_a_first_person_question(example, tmp_path):
    ws, _, _ = example
    model = scripted(tmp_path, [{"reply": "Not in my notes."}])
    with session(ws, kind="chat") as s:
        s.new_agent(model).turn("What is the name of the studio where Marek and I work?")
    context = model.calls[0][-1]["content"].split("[the person's message]\n", 1)[0]
    assert "--- people/marek.md" in context and "--- index.md" in context


NEIGHBOUR = ("---\ndescription: Marek Nowak - neighbour at number 9, a plumber\ncategory: person\n---\n"
             "Marek Nowak lives next door. Phone 07700 900733. Waters the plants when we are away.\n")


def test_names_written_next_to_each_other_are_one_full_name():
    assert name_groups("What is Marek Novak's phone number?") == [["marek", "novak"]]
    assert name_groups("Does Marek Novak know Lina?") == [["marek", "novak"], ["lina"]]
    assert name_groups("Do Marek and Lina know each other?") == [["marek"], ["lina"]]
    assert name_groups("What is the address of The Kettle Deli?") == [["kettle", "deli"]]
    # a line break or a comma ends a name; names_in is the words of every group, each once
    assert name_groups("Ask Ana,\nand Lina Okafor") == [["ana"], ["lina", "okafor"]]
    assert names_in("Does Marek Novak know Marek?") == ["marek", "novak"]


def test_a_full_name_leaves_out_the_notes_that_share_only_part_of_it():
    novak = ("people/marek.md", "Marek Novak - colleague, planting specialist")
    nowak = ("people/marek-nowak.md", "Marek Nowak - neighbour. Phone 07700 900733")
    lina = ("people/lina.md", "Lina Okafor - Sam's sister")
    text_of = " ".join
    assert about_the_names("What is Marek Novak's phone number?", [nowak, novak], text_of) == [novak]
    assert about_the_names("What is Marek Nowak's phone number?", [nowak, novak], text_of) == [nowak]
    # no note has the whole name: the notes that share part of it are the best there is
    assert about_the_names("What is Marek Smith's phone number?", [nowak, novak, lina], text_of) == [nowak, novak]
    # each full name is looked up on its own: Lina's note stays for "Lina", Nowak's for a Marek
    # no note names in full
    assert about_the_names("Does Marek Smith know Lina?", [nowak, lina], text_of) == [nowak, lina]
    assert about_the_names("Does Marek Novak know Lina?", [nowak, novak, lina], text_of) == [novak, lina]


def test_asked_for_one_marek_s_number_the_turn_does_not_show_the_other_s(example, tmp_path):
    ws, index, _ = example
    (ws / "memory" / "people" / "marek-nowak.md").write_text(NEIGHBOUR)
    index.sync(conversations=False)
    # what the index alone ranks: the neighbour's note shares "Marek" and "phone"
    ranked = [h.path for h in index.search("What is Marek Novak's phone number?", sources=("note",))]
    assert "people/marek-nowak.md" in ranked[:3]
    model = scripted(tmp_path, [{"reply": "Not in my notes."}])
    with session(ws, kind="chat") as s:
        s.new_agent(model).turn("What is Marek Novak's phone number?")
    context = model.calls[0][-1]["content"].split("[the person's message]\n", 1)[0]
    assert "--- people/marek.md" in context and "marek-nowak" not in context
    assert "07700 900733" not in context
    # with no number in view, the turn says the number is not in the notes
    assert "If you were asked for a phone number: it is not in your notes" in context


def test_the_person_s_own_note_is_labelled_as_about_the_person(example, tmp_path):
    """Nothing else tells the model that "I" is the Sam of index.md: asked "Which cities do my sister
    and I live in?", the 1.5B model answered with Lina's city only."""
    ws, _, _ = example
    model = scripted(tmp_path, [{"reply": "Bristol and Leeds."}])
    with session(ws, kind="chat") as s:
        s.new_agent(model).turn("Which cities do my sister and I live in?")
    context = model.calls[0][-1]["content"].split("[the person's message]\n", 1)[0]
    assert f"--- index.md {OWN_NOTE}" in context and "Sam Okafor, a landscape architect in Leeds" in context
    # the sister's note is recalled under its path (and revision) alone
    assert "--- people/lina.md (revision " in context and context.count("about the person you are talking to") == 1


def test_a_workspace_without_pinned_notes_labels_no_note_as_the_person_s(example, tmp_path):
    ws, index, _ = example
    plain = Recaller(index, RecallConfig())
    got = plain("Which cities do my sister and I live in?")
    assert "index.md" in [r.path for r in got] and not any(r.own for r in got)
    assert all(OWN_NOTE not in r.label() for r in got)


def test_a_question_about_the_person_themself_recalls_their_own_note_first(example):
    """"What do I do for a living?" shares "live" with Lina's note, which ranks first; the 1.5B
    model answered from it ("Lina Okafor - Sam's sister, lives in Bristol.")."""
    _, index, recaller = example
    question = "What do I do for a living?"
    assert [h.path for h in index.search(question, sources=("note",))][:2] == ["people/lina.md", "index.md"]
    assert _paths(recaller, question)[0] == "index.md"
    assert _paths(recaller, "What do my sister and I each do for work?")[0] == "index.md"
    # "my sister" alone is about the sister: her note stays first
    assert _paths(recaller, "What does my sister do for work?")[0] == "people/lina.md"


def test_the_person_themself_is_i_me_or_myself_not_my():
    assert the_person_themself("What do I do for a living?")
    assert the_person_themself("Is Lina older or younger than me?")
    assert the_person_themself("Which cities do my sister and I live in?")
    assert not the_person_themself("What does my sister do for work?")
    assert not the_person_themself("i.e. where does Lina live?")
