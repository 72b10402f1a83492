"""Recall flags stale notes (issue 12 item 5): a recalled note whose `expires` or `review_after`
date has passed carries the catalog's flag in the recalled block, so the model can say the fact
may be old; a note with future dates carries none; nothing is dropped because of a date."""

from __future__ import annotations

import re


from recall_support import add_vault, chat_turns, make_ws, scripted, session

SECRET = "Qx7-ferry-Pw9!zLmN4#tRv2"


def _write(ws, rel: str, text: str) -> None:
    p = ws / "memory" / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def _tail(model) -> str:
    return model.calls[0][-1]["content"].split("[context from the assistant program", 1)[1]


def _block(tail: str, path: str) -> str:
    """The recalled block's header line for `path`, less the revision the model may edit it at
    (tests/agent/test_capture_protocol.py checks that one)."""
    line = next(line for line in tail.splitlines() if line.startswith(f"--- {path}"))
    return re.sub(r" \(revision [0-9a-f]{12}\)$", "", line)


def test_a_recalled_expired_or_due_note_is_flagged_and_a_fresh_one_is_not(tmp_path):
    ws = make_ws(tmp_path)
    _write(ws, "travel/zanzibar-ferry.md",
           "---\ndescription: Zanzibar ferry timetable\nexpires: 2001-02-03\n---\n"
           "The Zanzibar ferry leaves at 07:00 from the north pier.\n")
    _write(ws, "travel/zanzibar-hotel.md",
           "---\ndescription: Zanzibar hotel booking\nreview_after: 2002-03-04\n---\n"
           "The Zanzibar hotel is booked for two nights.\n")
    _write(ws, "travel/zanzibar-visa.md",
           "---\ndescription: Zanzibar visa rules\nreview_after: 2999-01-01\nexpires: 2999-06-01\n---\n"
           "The Zanzibar visa is issued on arrival.\n")
    model, events = chat_turns(ws, tmp_path, ["The ferry leaves at 07:00, but that note has expired."],
                               "When does the Zanzibar ferry leave, and what about the hotel and visa?")
    tail = _tail(model)
    assert _block(tail, "travel/zanzibar-ferry.md") == \
        "--- travel/zanzibar-ferry.md [expired 2001-02-03: may be out of date]"
    assert _block(tail, "travel/zanzibar-hotel.md") == \
        "--- travel/zanzibar-hotel.md [review due since 2002-03-04: may be out of date]"
    assert _block(tail, "travel/zanzibar-visa.md") == "--- travel/zanzibar-visa.md"
    assert "07:00 from the north pier" in tail          # flagged, never dropped
    [recall] = [e for e in events if e["event"] == "recall"]
    stale = {n["path"]: n.get("stale") for n in recall["notes"]}
    assert stale["travel/zanzibar-ferry.md"] == "[expired 2001-02-03: may be out of date]"
    assert stale["travel/zanzibar-visa.md"] is None


def test_the_recall_flag_is_the_catalogs_flag(tmp_path):
    ws = make_ws(tmp_path)
    _write(ws, "home/boiler-service.md",
           "---\ndescription: Boiler service contract\nreview_after: 2003-04-05\n---\n"
           "The boiler service is with Kettleworth Heating.\n")
    model = scripted(tmp_path, [{"reply": "ok"}])
    from assistant.notes.catalog import CatalogSettings, all_entries
    from assistant.workspace.layout import open_workspace

    with session(ws, kind="chat") as s:
        agent = s.new_agent(model)
        agent.turn("Who services the boiler? Kettleworth?")
        config = open_workspace(ws).config
        entry = next(e for e in all_entries(ws / "memory", CatalogSettings.from_config(config.memory), s.scanner)
                     if e.path == "home/boiler-service.md")
    line = _block(_tail(model), "home/boiler-service.md")
    assert entry.stale == "[review due since 2003-04-05: may be out of date]"
    assert line == f"--- home/boiler-service.md {entry.stale}"


def test_a_bad_date_holding_a_vault_value_never_shows_it(tmp_path, monkeypatch):
    ws = make_ws(tmp_path)
    add_vault(ws, {"FERRY_PIN": SECRET}, monkeypatch)
    _write(ws, "travel/quokka-ferry.md",
           f"---\ndescription: Quokka ferry pass\nexpires: soon {SECRET} maybe\n---\n"
           "The Quokka ferry pass is in the drawer.\n")
    model = scripted(tmp_path, [{"reply": "ok"}])
    with session(ws, kind="chat") as s:
        agent = s.new_agent(model)
        agent.turn("Where is the Quokka ferry pass?")
        transcript = s.transcript.path.read_text()
    tail = _tail(model)
    line = _block(tail, "travel/quokka-ferry.md")
    assert "is not a YYYY-MM-DD date" in line
    assert SECRET not in tail and SECRET[:12] not in tail
    assert SECRET not in transcript and SECRET[:12] not in transcript
