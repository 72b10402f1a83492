"""Recall brings nothing when nothing matches well, with one default on 5 notes and on 400:
a question whose only shared words are in most notes recalls nothing; a distinctive word still
recalls its note. And the prompt holds a recalled note's (redacted) text, not only its path."""

from __future__ import annotations

import re

import pytest
from recall_support import add_vault, make_ws, scripted, session

from assistant.recall.index import Index
from assistant.recall.turn import Recaller
from assistant.workspace.config import RecallConfig

VALUE = "Qx7-vault-Lm4pTz9wRk2s"


def _workspace(tmp_path, count: int):
    """`count` notes (four in five mention the weekend and the garden) and one about Zephyrine."""
    memory = tmp_path / f"ws{count}" / "memory"
    (memory / "misc").mkdir(parents=True)
    (tmp_path / f"ws{count}" / "state").mkdir()
    for i in range(count):
        common = "Spent the weekend in the garden again. " if i % 5 else ""
        (memory / "misc" / f"note{i:04d}.md").write_text(f"Note {i}\n{common}Item number {i} of the list.\n")
    (memory / "people").mkdir()
    (memory / "people" / "zephyrine.md").write_text("Zephyrine\nMy aunt Zephyrine keeps bees in Whitby.\n")
    return Index(tmp_path / f"ws{count}" / "state", memory)


@pytest.mark.parametrize("count", [5, 400])
def test_a_question_whose_only_shared_words_are_in_most_notes_recalls_nothing(tmp_path, count):
    index = _workspace(tmp_path, count)
    try:
        recaller = Recaller(index, RecallConfig())       # the one default, whatever the size
        recaller.start()
        # "weekend" and "garden" are in most notes: they match, but tell no note apart
        assert index.search("What did I do at the weekend in the garden?", sources=("note",)) != []
        assert recaller("What did I do at the weekend in the garden?") == []
        # a distinctive word still recalls its note, the common words alongside it no filler
        got = recaller("Where does Zephyrine keep her bees at the weekend?")
        assert [r.path for r in got] == ["people/zephyrine.md"]
        assert "keeps bees in Whitby" in got[0].text
    finally:
        index.close()


def test_the_prompt_holds_the_recalled_notes_redacted_text(tmp_path, monkeypatch):
    ws = make_ws(tmp_path)
    add_vault(ws, {"door_code": VALUE}, monkeypatch)
    (ws / "memory/people/lina.md").write_text(
        f"Lina Okafor, my sister.\nHer door code is {VALUE}; she grows tomatoes on the balcony.\n")
    model = scripted(tmp_path, [{"reply": "She grows tomatoes."}])
    with session(ws, kind="chat") as s:
        s.new_agent(model).turn("What does Lina grow?")
    last = model.calls[0][-1]["content"]
    context, message = last.split("[the person's message]\n", 1)
    assert message == "What does Lina grow?"
    assert re.search(r"^--- people/lina\.md \(revision [0-9a-f]{12}\)\n", context, re.M)
    assert "she grows tomatoes on the balcony" in context             # the text, not only the path
    assert "[redacted:door_code]" in context and VALUE not in last
    assert all(VALUE not in m["content"] for m in model.calls[0])
