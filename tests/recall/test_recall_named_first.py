"""A note the question names by file name is recalled first, above a note that shares more of
the question's other words: "Where does my sister Ana live?" read Lina's note (her description
says "sister, lives in Bristol") before Ana's, and the 1.5B model answered "Bristol"."""

from __future__ import annotations

from assistant.recall.index import Hit, Index
from assistant.recall.turn import Recaller, named_first, naming_words
from assistant.workspace.config import RecallConfig


def _workspace(tmp_path):
    memory = tmp_path / "memory"
    (memory / "people").mkdir(parents=True)
    (tmp_path / "state").mkdir()
    (memory / "people" / "lina.md").write_text(
        "---\ndescription: Lina Okafor - Sam's sister, lives in Bristol\ncategory: person\n---\n"
        "Lina is Sam's younger sister. She lives in Bristol and teaches chemistry.\n")
    (memory / "people" / "ana.md").write_text("Ana moved to Porto last month.\n")
    (memory / "preferences.md").write_text("Short answers, metric units.\n")
    return Index(tmp_path / "state", memory)


def test_the_named_note_comes_first_though_another_scores_higher(tmp_path):
    index = _workspace(tmp_path)
    try:
        index.sync()
        question = "Where does my sister Ana live?"
        plain = index.search(question, sources=("note",))
        # the case this guards: BM25 alone ranks Lina's note above Ana's
        assert [h.path for h in plain][:2] == ["people/lina.md", "people/ana.md"]
        recaller = Recaller(index, RecallConfig())
        recaller.start()
        got = recaller(question)
        assert [r.path for r in got][0] == "people/ana.md"
        assert "Porto" in got[0].text
        # nothing is dropped: the other note is still there, after it
        assert "people/lina.md" in [r.path for r in got]
    finally:
        index.close()


def _hit(path: str, score: float, source: str = "note") -> Hit:
    return Hit(path=path, source=source, score=score, snippet="")


def test_named_first_keeps_order_within_each_group_and_leaves_unnamed_questions_alone():
    hits = [_hit("people/lina.md", 9.0), _hit("notes/porto-trip.md", 5.0), _hit("people/ana-lima.md", 3.0),
            _hit("ana.md", 2.0, source="conversation")]
    # "ana" names people/ana-lima.md by a word of its file name; a conversation is never "named"
    assert [h.path for h in named_first(hits, ["sister", "ana", "live"])] == [
        "people/ana-lima.md", "people/lina.md", "notes/porto-trip.md", "ana.md"]
    # two named notes keep their own order, ahead of the rest
    assert [h.path for h in named_first(hits, ["ana", "porto"])] == [
        "notes/porto-trip.md", "people/ana-lima.md", "people/lina.md", "ana.md"]
    # a folder's name is no file name; a question naming no note changes nothing
    assert named_first(hits, ["people", "sister"]) == hits
    assert named_first([], ["ana"]) == []


def test_naming_words_are_names_inside_a_sentence_not_possessives_or_common_nouns():
    assert naming_words("Where does my sister Ana live?") == ["ana"]
    # a possessive asks about someone else: Lina's partner has a note of his own
    assert naming_words("Who is Lina's partner?") == []
    assert naming_words("Who is Lina\u2019s partner?") == []
    # a sentence's first word is capitalised anyway; a common noun names no note
    assert naming_words("Ana moved. Where is the cafe I like?") == []
    assert naming_words("What is the address of the cafe where I get my oat flat white?") == []
    assert naming_words("Which colleague should I call about the Kirkstall planting plan?") == ["kirkstall"]
    assert naming_words("When did Roundhay Lakeside and Roundhay start?") == ["roundhay", "lakeside"]


def test_a_common_noun_in_a_file_name_does_not_reorder_recall(tmp_path):
    memory = tmp_path / "memory"
    (memory / "places").mkdir(parents=True)
    (memory / "work").mkdir()
    (tmp_path / "state").mkdir()
    (memory / "work" / "studio.md").write_text(
        "---\ndescription: the studio - where I get my oat flat white, the cafe on the corner\n---\n"
        "The cafe where I get my oat flat white is Grove Cafe.\n")
    (memory / "places" / "bramble-cafe.md").write_text("Bramble cafe, Chapel Allerton.\n")
    index = Index(tmp_path / "state", memory)
    try:
        recaller = Recaller(index, RecallConfig())
        recaller.start()
        got = recaller("What is the address of the cafe where I get my oat flat white?")
        assert [r.path for r in got][0] == "work/studio.md"
    finally:
        index.close()
