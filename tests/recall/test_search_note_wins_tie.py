"""At equal relevance a note ranks above a past conversation (issue 23, item 24): in the index's
own ordering, in `assistant memory search` and in the memory_search tool MCP clients call. The
equal score is built, not assumed: the note's body and the conversation's indexed text are the
same words ("you: ..." is how a conversation's line is indexed), the term is in no other field,
and the conversation is indexed first (so it has the lower row id, which ties fell back to)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from assistant.recall.index import Index
from assistant.session import open_session
from assistant.tools.memory import run_memory_search

from recall_support import make_ws

WORD = "quillbeetle"
NOTE = "aa.md"
TALK = "zz.jsonl"


def _plant_conversation(ws):
    talks = ws / "state" / "transcripts"
    talks.mkdir(parents=True, exist_ok=True)
    (talks / TALK).write_text(json.dumps({"event": "user", "text": f"{WORD} garden"}) + "\n")


def _plant_note(ws):
    # bm25 counts the whole row's length: path words (1), category (1, as "conversation" is for a
    # conversation) and body (3) are the same in both
    (ws / "memory" / NOTE).write_text(f"---\ncategory: diary\n---\nyou: {WORD} garden\n")


def test_the_index_puts_the_note_first_at_an_equal_score(tmp_path):
    ws = make_ws(tmp_path)
    _plant_conversation(ws)
    with Index(ws / "state", ws / "memory", ws / "state" / "transcripts") as index:
        index.sync_conversations()              # the conversation gets the lower row id
        _plant_note(ws)
        index.sync(conversations=False)
        hits = index.search(WORD)
    assert [(h.source, h.path) for h in hits] == [("note", NOTE), ("conversation", TALK)]
    assert hits[0].score == hits[1].score       # a tie, not a better note


def test_memory_search_cli_and_tool_put_the_note_first(tmp_path):
    ws = make_ws(tmp_path)
    _plant_conversation(ws)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}

    def cli_hits():
        r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "memory", "search", "--json", WORD],
                           capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 0, r.stderr
        return [(h["source"], h["path"]) for h in json.loads(r.stdout)]

    assert cli_hits() == [("conversation", TALK)]      # indexed first, alone
    _plant_note(ws)
    assert cli_hits() == [("note", NOTE), ("conversation", TALK)]
    with open_session(ws, "unattended", kind="mcp", transcript=False) as session:
        out = run_memory_search({"query": WORD}, session.ctx)   # what `mcp serve` runs for memory_search
    lines = [line for line in out.splitlines() if line.startswith("- ")]
    assert lines[0].startswith(f"- {NOTE} [note") and lines[1].startswith(f"- {TALK} [conversation")
