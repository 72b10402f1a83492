"""The derived index: fresh at the next search, never following links, rebuilt when unusable,
and any text is a valid query."""

from __future__ import annotations

import os
import sqlite3

import pytest
from recall_support import make_ws, session

from assistant.recall.index import INDEX_FILE, Index, IndexUnavailable, query_terms


def _paths(hits):
    return [h.path for h in hits]


def test_hand_edit_add_and_remove_are_found_at_the_next_search(tmp_path):
    ws = make_ws(tmp_path)
    with session(ws) as s:
        assert _paths(s.recall.search("Lina birthday"))[0] == "people/lina.md"
        # a hand edit in a text editor: no reindex, no watcher
        (ws / "memory/people/lina.md").write_text("Lina now keeps bees on an allotment in Totnes.\n")
        assert _paths(s.recall.search("who keeps bees?")) == ["people/lina.md"]
        assert s.recall.search("chemistry Bristol") == [] or "people/lina.md" not in _paths(
            s.recall.search("chemistry Bristol"))
        # a new note
        (ws / "memory/places").mkdir()
        (ws / "memory/places/totnes.md").write_text("---\ndescription: Totnes market on Fridays\n---\nGood cheese.\n")
        assert _paths(s.recall.search("where is the Friday market?"))[0] == "places/totnes.md"
        # a removed note is gone at once
        os.unlink(ws / "memory/places/totnes.md")
        assert "places/totnes.md" not in _paths(s.recall.search("Friday market cheese"))


def test_another_process_sees_the_same_edits(tmp_path):
    ws = make_ws(tmp_path)
    with session(ws) as a, session(ws) as b:
        assert a.recall.search("oolong")
        (ws / "memory/people/lina.md").write_text("Lina prefers rooibos now.\n")
        assert _paths(b.recall.search("rooibos")) == ["people/lina.md"]
        assert _paths(a.recall.search("rooibos")) == ["people/lina.md"]
        assert a.recall.search("oolong") == []


def test_symlinked_fifo_and_hard_linked_notes_are_not_indexed(tmp_path):
    ws = make_ws(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("zebra secret plans outside the memory folder\n")
    os.symlink(outside, ws / "memory/linked.md")
    os.mkfifo(ws / "memory/pipe.md")
    os.link(outside, ws / "memory/hard.md")
    (ws / "memory/people/zed.md").write_text("zebra crossing near Zed's house\n")
    with session(ws) as s:
        hits = s.recall.search("zebra")       # must not hang on the FIFO either
        assert _paths(hits) == ["people/zed.md"]
    assert b"secret plans" not in b"".join((ws / "state" / n).read_bytes()
                                           for n in os.listdir(ws / "state") if n.startswith(INDEX_FILE))


def test_a_symlinked_memory_subfolder_is_not_walked(tmp_path):
    ws = make_ws(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.md").write_text("quokka\n")
    os.symlink(elsewhere, ws / "memory/linkdir")
    with session(ws) as s:
        assert s.recall.search("quokka") == []


@pytest.mark.parametrize("junk", [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 5000])
def test_a_corrupt_index_is_rebuilt_with_a_notice(tmp_path, junk):
    ws = make_ws(tmp_path)
    with session(ws) as s:
        s.recall.search("Lina")
    (ws / "state" / INDEX_FILE).write_bytes(junk)
    for suffix in ("-wal", "-shm"):
        try:
            os.unlink(str(ws / "state" / INDEX_FILE) + suffix)
        except FileNotFoundError:
            pass
    with session(ws) as s:
        assert _paths(s.recall.search("Lina sister"))[0] == "people/lina.md"
        assert any("rebuilt" in n for n in s.recall.notices), s.recall.notices
    sqlite3.connect(ws / "state" / INDEX_FILE).execute("PRAGMA integrity_check").fetchone()


def test_an_index_from_an_older_schema_or_another_workspace_is_rebuilt(tmp_path):
    ws = make_ws(tmp_path)
    with session(ws) as s:
        s.recall.search("Lina")
    db = sqlite3.connect(ws / "state" / INDEX_FILE)
    db.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    db.execute("INSERT INTO docs(source, path, size, mtime_ns, ino, ctime_ns) VALUES ('note', 'ghost.md', 1, 1, 1, 1)")
    db.commit()
    db.close()
    with session(ws) as s:
        assert "ghost.md" not in _paths(s.recall.search("ghost"))
        assert s.index.count() == 5
        assert any("rebuilt" in n for n in s.recall.notices)
    # a copy of the whole workspace: the copied index belongs to the other one
    import shutil

    shutil.copytree(ws, tmp_path / "copy", symlinks=True)
    (tmp_path / "copy/memory/people/lina.md").write_text("Lina in the copy only\n")
    with session(tmp_path / "copy") as s:
        s.index.sync()
        assert any("another workspace" in n for n in s.recall.notices), s.recall.notices


def test_an_index_that_cannot_be_rebuilt_says_why(tmp_path):
    ws = make_ws(tmp_path)
    target = ws / "state" / INDEX_FILE
    target.mkdir(parents=True)            # a directory where the file should be
    with session(ws) as s:
        with pytest.raises(IndexUnavailable, match="not a regular file"):
            s.recall.search("Lina")
        # the catalog still works
        assert "people/lina.md" in s.memory.catalog()


@pytest.mark.parametrize("query", [
    '"', '""', "'", "*", "Lina*", "NEAR", "NEAR(lina tea, 2)", "lina NEAR tea", ":", "path:lina",
    "body:tea", "(", ")", "((lina", "AND", "OR", "NOT", "lina AND NOT tea", "lina OR", "^lina", "-lina",
    "+", "{lina tea}", "lina\x00tea", "lina\ntea", "\u202eanil", "x" * 100_000, "tea " * 10_000,
    "SELECT * FROM docs; --", "col:*:\"", "🐝🐝", "",
])
def test_any_text_is_a_valid_query(tmp_path, query):
    ws = make_ws(tmp_path)
    with session(ws) as s:
        hits = s.recall.search(query)
        assert isinstance(hits, list)
        if "lina" in query.lower() and "anil" not in query:
            assert "people/lina.md" in _paths(hits)


def test_syntax_words_are_searched_as_words(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory/near.md").write_text("The NEAR field communication tag and the AND gate.\n")
    with session(ws) as s:
        assert _paths(s.recall.search("NEAR"))[0] == "near.md"
        assert _paths(s.recall.search('"NEAR" AND'))[0] == "near.md"


def test_question_words_never_match_a_file_name(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory/how-i-work.md").write_text("Mornings are for deep work.\n")
    (ws / "memory/what-when-where.md").write_text("Nothing here.\n")
    with session(ws) as s:
        hits = s.recall.search("how do I remember when Lina's birthday is?")
        assert _paths(hits)[0] == "people/lina.md"
        assert "how-i-work.md" not in _paths(hits) and "what-when-where.md" not in _paths(hits)
        assert s.recall.search("how?") == []
        assert s.recall.search("what do you remember about it?") == []


def test_query_terms_stem_drop_stopwords_and_are_bounded():
    assert query_terms("When is my sister's birthday?")[:2] == ["sister", "birthday"]
    assert query_terms("what WHO how when where why") == []
    assert len(query_terms(" ".join(f"w{i}" for i in range(10_000)))) <= 24
    assert query_terms(None) == []  # type: ignore[arg-type]


def test_stemming_matches_other_forms(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory/walks.md").write_text("Walking the dogs on the beach every Sunday.\n")
    with session(ws) as s:
        assert _paths(s.recall.search("when do I walk the dog?"))[0] == "walks.md"


def test_fields_are_weighted_and_scores_are_higher_is_better(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory/a.md").write_text("---\ndescription: Kayak club on the river\n---\nMeets weekly.\n")
    (ws / "memory/b.md").write_text("Long list of things.\n" + "filler words here. " * 40 + "A kayak once.\n")
    with session(ws) as s:
        hits = s.recall.search("kayak")
        assert _paths(hits) == ["a.md", "b.md"]
        assert hits[0].score > hits[1].score > 0


def test_limit_and_offset_page_through_results(tmp_path):
    ws = make_ws(tmp_path)
    for i in range(12):
        (ws / f"memory/n{i:02d}.md").write_text(f"heron sighting number {i}\n" + "heron " * i)
    with session(ws) as s:
        first = _paths(s.recall.search("heron", limit=5))
        second = _paths(s.recall.search("heron", limit=5, offset=5))
        assert len(first) == 5 and len(second) == 5 and not set(first) & set(second)


def test_a_note_larger_than_the_bound_is_indexed_by_its_head(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory/big.md").write_text("capybara at the start\n" + "x " * 100_000 + "\nwombat at the end\n")
    with session(ws) as s:
        assert _paths(s.recall.search("capybara")) == ["big.md"]
        assert s.recall.search("wombat") == []


def test_watcher_refresh_reads_only_reported_notes(tmp_path):
    ws = make_ws(tmp_path)
    memory, state = ws / "memory", ws / "state"
    index = Index(state, memory)
    index.sync()
    index.note_changes([])                     # from now on a watcher feeds it
    (memory / "people/lina.md").write_text("Lina plays the oboe.\n")
    (memory / "people/marek.md").write_text("Marek plays the oboe too.\n")
    index.note_changes(["people/lina.md"])
    stats = index.refresh()
    assert stats.changed == 1
    assert _paths(index.search("oboe")) == ["people/lina.md"]
    assert index.sync().changed == 1           # a full sync still catches what the watcher missed
    assert sorted(_paths(index.search("oboe"))) == ["people/lina.md", "people/marek.md"]
    index.close()


def test_a_word_in_most_notes_does_not_drown_the_rare_one(tmp_path):
    ws = make_ws(tmp_path)
    for i in range(40):
        (ws / f"memory/n{i:02d}.md").write_text(f"meeting note {i} with the usual meeting words\n")
    (ws / "memory/zebra.md").write_text("meeting about the zebra enclosure\n")
    with session(ws) as s:
        assert _paths(s.recall.search("meeting zebra"))[0] == "zebra.md"
        assert len(s.recall.search("meeting", limit=50)) >= 41      # only common words: still searched
        (ws / "memory/zebra2.md").write_text("zebra crossing\n")
        assert set(_paths(s.recall.search("meeting zebra"))[:2]) == {"zebra.md", "zebra2.md"}


def test_conversations_follow_the_transcripts_folder_even_when_it_goes(tmp_path):
    import shutil

    ws = make_ws(tmp_path)
    with session(ws, kind="chat") as s:
        s.transcript.append("user", text="the walrus question")
    with session(ws, transcript=False) as s:
        assert [h.source for h in s.recall.search("walrus")] == ["conversation"]
    shutil.rmtree(ws / "state" / "transcripts")
    with session(ws, transcript=False) as s:
        assert s.recall.search("walrus") == [] and s.index.count("conversation") == 0
