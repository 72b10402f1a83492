"""Per-turn recall: matching notes go into the volatile tail (never the stable prefix), under the
byte budget, and each turn's transcript says which notes were recalled and how well they matched."""

from __future__ import annotations

import json

import pytest
from recall_support import chat_turns, make_ws, scripted, session

import assistant.recall.index as index_mod
from assistant.recall.index import INDEX_FILE


def _events(s, name):
    lines = s.transcript.path.read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == name]


def test_the_recalled_note_is_in_the_prompt_tail_and_the_transcript(tmp_path):
    ws = make_ws(tmp_path)
    model = scripted(tmp_path, [{"reply": "Lina's birthday is 14 March."}])
    with session(ws, kind="chat") as s:
        agent = s.new_agent(model)
        system_before = agent.conversation.system_prompt()
        agent.turn("What do you remember about Lina?")
        seen = model.calls[0]
        assert seen[0]["content"] == system_before              # the stable prefix is untouched
        last = seen[-1]["content"]
        # the recalled text comes first, the person's message last (next to where the answer starts)
        assert last.startswith("[context from the assistant program")
        assert last.endswith("[the person's message]\nWhat do you remember about Lina?")
        tail = last.split("[the person's message]", 1)[0]
        assert "people/lina.md" in tail and "Birthday: 14 March" in tail and "UNTRUSTED DATA" in tail
        assert "Answer from these notes" in tail
        recall = _events(s, "recall")
        assert len(recall) == 1
        notes = recall[0]["notes"]
        assert notes[0]["path"] == "people/lina.md" and notes[0]["score"] > 0
        assert set(notes[0]) >= {"path", "score"}


def test_every_turn_gets_a_recall_event_even_when_nothing_matches(tmp_path):
    ws = make_ws(tmp_path)
    model, events = chat_turns(ws, tmp_path, ["hi", "ok"], "Hi there!", "Tell me about the Kirkstall park project")
    recall = [e for e in events if e["event"] == "recall"]
    assert [len(r["notes"]) for r in recall][0] == 0
    assert recall[1]["notes"][0]["path"] == "projects/kirkstall-park.md"
    assert "Notes found by searching" not in model.calls[0][-1]["content"]
    assert "no note matched it" in model.calls[0][-1]["content"]     # never silent (a greeting tells)
    assert "No note matched" not in model.calls[1][-1]["content"]


def test_the_prompt_of_turn_two_extends_turn_one_byte_for_byte(tmp_path):
    ws = make_ws(tmp_path)
    model, _ = chat_turns(ws, tmp_path, ["one", "two"], "What do you remember about Lina?", "And Marek?")
    first, second = model.calls
    assert second[: len(first)] == first
    assert "people/marek.md" in second[-1]["content"] and "people/marek.md" not in second[0]["content"].split(
        "Memory catalog")[0]


def test_recall_stays_within_the_byte_budget_and_max_notes(tmp_path):
    ws = make_ws(tmp_path, "\n[recall]\nmax_notes = 2\nbudget_bytes = 400\n")
    for i in range(4):     # 4 of the 9 notes: "otters" still tells notes apart (at most half)
        (ws / f"memory/otter{i}.md").write_text(f"otter notes {i}\n" + "otters swim in the river. " * 200)
    model = scripted(tmp_path, [{"reply": "ok"}])
    with session(ws, kind="chat") as s:
        s.new_agent(model).turn("anything about otters?")
        recall = _events(s, "recall")[0]["notes"]
    assert len(recall) == 2
    tail = model.calls[0][-1]["content"].split("Notes found by searching", 1)[1]
    body = tail.split(">>>\n", 1)[1].split("\n<<<END", 1)[0]
    assert len(body.encode()) <= 400 + 2 * 64


def test_recall_can_be_turned_off_and_has_a_score_floor(tmp_path):
    ws = make_ws(tmp_path, "\n[recall]\nenabled = false\n")
    model = scripted(tmp_path, [{"reply": "ok"}])
    with session(ws, kind="chat") as s:
        s.new_agent(model).turn("What do you remember about Lina?")
        assert _events(s, "recall") == []
    assert "Notes found by searching" not in model.calls[0][-1]["content"]
    assert "No note matched" not in model.calls[0][-1]["content"] and "no note matched it" not in model.calls[0][-1]["content"]      # recall off: nothing is claimed
    # min_score is a share of the best match's score: 1.0 keeps only the best (Marek's note, not
    # the project note that also names him); the default keeps both
    for name, extra, want in (("b", "\n[recall]\nmin_score = 1.0\n", ["people/marek.md"]),
                              ("c", "", ["people/marek.md", "projects/kirkstall-park.md"])):
        ws2 = make_ws(tmp_path / name, extra)
        model = scripted(tmp_path, [{"reply": "ok"}], name=f"{name}.json")
        with session(ws2, kind="chat") as s:
            s.new_agent(model).turn("Who is Marek?")
            assert [n["path"] for n in _events(s, "recall")[0]["notes"]] == want


@pytest.mark.parametrize("bad", ["max_notes = 0", "budget_bytes = 'big'", "enabled = 1", "min_score = -1",
                                 "min_score = 1.5",
                                 "include_conversations = 'yes'", "embedding_model = 3"])
def test_a_bad_recall_setting_is_a_clear_session_error(tmp_path, bad):
    from assistant.session import SessionError

    ws = make_ws(tmp_path, f"\n[recall]\n{bad}\n")
    with pytest.raises(SessionError, match=r"recall\."):
        session(ws)


def test_conversations_are_recalled_only_when_configured(tmp_path):
    ws = make_ws(tmp_path)
    with session(ws, kind="chat") as s:
        s.new_agent(scripted(tmp_path, [{"reply": "Noted, the narwhal mug."}], name="a.json")).turn(
            "my favourite mug has a narwhal on it")
    model = scripted(tmp_path, [{"reply": "ok"}], name="b.json")
    with session(ws, kind="chat") as s:
        s.new_agent(model).turn("which mug do I like, the narwhal one?")
        assert all(n["source"] == "note" for n in _events(s, "recall")[0]["notes"])
        hits = s.recall.search("narwhal mug")
        assert hits and hits[0].source == "conversation" and "narwhal" in hits[0].snippet
    text = (ws / "config.toml").read_text()
    assert "include_conversations = false" in text
    (ws / "config.toml").write_text(text.replace("include_conversations = false", "include_conversations = true"))
    model = scripted(tmp_path, [{"reply": "ok"}], name="c.json")
    with session(ws, kind="chat") as s:
        s.new_agent(model).turn("which mug do I like, the narwhal one?")
        notes = _events(s, "recall")[0]["notes"]
        assert any(n["source"] == "conversation" for n in notes), notes


def test_memory_search_tool_returns_path_snippet_score_and_source(tmp_path):
    ws = make_ws(tmp_path)
    model = scripted(tmp_path, [{"tool": "memory_search", "args": {"query": "oolong tea", "limit": 3}},
                                {"tool": "memory_search", "args": {"query": "how?"}},
                                {"tool": "memory_search", "args": {"query": "xylophone"}},
                                {"reply": "done"}])
    with session(ws, kind="chat") as s:
        s.new_agent(model).turn("search please")
        results = [e["output"] for e in _events(s, "tool_result")]
    assert "people/lina.md [note, score" in results[0] and "oolong" in results[0]
    assert "No meaningful words" in results[1]
    assert "No notes or past conversations match 'xylophone'" in results[2]
    # it came back as untrusted data, like every tool output
    assert "UNTRUSTED DATA" in model.calls[1][-1]["content"]
    from assistant.tools.registry import all_tools

    tool = {t.name: t for t in all_tools()}["memory_search"]
    assert "memory_read" in tool.description and tool.kind is None


def test_a_watched_chat_adds_no_full_sync_to_a_turn(tmp_path, monkeypatch):
    ws = make_ws(tmp_path)
    walks = []
    real = index_mod.scan_notes
    monkeypatch.setattr(index_mod, "scan_notes", lambda d: walks.append(1) or real(d))
    model = scripted(tmp_path, [{"reply": "a"}, {"reply": "b"}])
    with session(ws, kind="chat") as s:
        agent = s.new_agent(model)
        assert len(walks) == 1                          # session start
        s.index.note_changes([])                        # the chat's watcher feeds the index
        agent.turn("What do you remember about Lina?")
        (ws / "memory/people/lina.md").write_text("Lina learns the harp.\n")
        s.index.note_changes(["people/lina.md"])        # what the watcher reported
        agent.turn("who plays the harp?")
        assert len(walks) == 1
        assert _events(s, "recall")[1]["notes"][0]["path"] == "people/lina.md"
        assert "Lina learns the harp" in model.calls[1][-1]["content"]


def test_an_unusable_index_is_one_notice_and_the_turn_goes_on(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "state").mkdir(exist_ok=True)
    (ws / "state" / INDEX_FILE).mkdir()
    model = scripted(tmp_path, [{"reply": "from the catalog"}, {"reply": "again"}])
    with session(ws, kind="chat") as s:
        agent = s.new_agent(model)
        r1 = agent.turn("What do you remember about Lina?")
        r2 = agent.turn("And Marek?")
        notices = [e["message"] for e in _events(s, "notice")]
    assert r1.outcome == r2.outcome == "reply"
    assert len([n for n in notices if "memory search" in n]) == 1, notices
    assert "people/lina.md" in model.calls[0][0]["content"]        # the catalog is still there


def test_a_run_task_gets_recall_through_the_cli(tmp_path):
    import subprocess
    import sys

    ws = make_ws(tmp_path)
    script = tmp_path / "run.json"
    script.write_text(json.dumps([{"reply": "done"}]))
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("ASSISTANT_")}
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "run", "--model", f"script:{script}",
                        "Check on the Kirkstall park project"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    events = [json.loads(x) for p in (ws / "state/transcripts").glob("*.jsonl") for x in p.read_text().splitlines()]
    recall = [e for e in events if e["event"] == "recall"]
    assert recall and recall[0]["notes"][0]["path"] == "projects/kirkstall-park.md"


def test_the_current_conversation_is_never_recalled_into_itself(tmp_path):
    ws = make_ws(tmp_path, "\n[recall]\ninclude_conversations = true\n")
    model = scripted(tmp_path, [{"reply": "ok"}, {"reply": "ok"}])
    with session(ws, kind="chat") as s:
        agent = s.new_agent(model)
        agent.turn("the lighthouse keeper's cat is called Mackerel")
        agent.turn("what is the lighthouse cat called?")
        notes = _events(s, "recall")[1]["notes"]
        assert all(n["source"] == "note" for n in notes), notes
        assert s.recall.search("lighthouse Mackerel") == []
