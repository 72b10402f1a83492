"""`assistant memory search` and `assistant memory reindex`, run as a person runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from recall_support import make_ws


def cli(ws, *args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "memory", *args],
                          capture_output=True, text=True, env=e, timeout=60)


def test_search_json_is_a_list_best_first_with_the_contract_fields(tmp_path):
    ws = make_ws(tmp_path)
    r = cli(ws, "search", "--json", "when", "is", "Lina's", "birthday?")
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)
    assert isinstance(hits, list) and hits
    assert hits[0]["path"] == "people/lina.md" and hits[0]["source"] == "note"
    assert {"path", "score", "snippet", "source"} <= set(hits[0])
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert "14 March" in hits[0]["snippet"]


def test_search_limit_plain_output_and_no_match(tmp_path):
    ws = make_ws(tmp_path)
    for i in range(5):
        (ws / f"memory/g{i}.md").write_text(f"gooseberry jam batch {i}\n")
    r = cli(ws, "search", "--limit", "2", "gooseberry")
    assert r.returncode == 0, r.stderr
    assert len([line for line in r.stdout.splitlines() if line.strip().endswith(".md")]) == 2
    r = cli(ws, "search", "xylophone")
    assert r.returncode == 1 and "no notes or conversations match 'xylophone'" in r.stderr
    assert json.loads(cli(ws, "search", "--json", "xylophone").stdout) == []
    r = cli(ws, "search", "how?")
    assert r.returncode == 1 and "no words to search for" in r.stderr
    r = cli(ws, "search", "--limit", "0", "x")
    assert r.returncode == 2


def test_search_finds_a_hand_edit_without_reindex(tmp_path):
    ws = make_ws(tmp_path)
    cli(ws, "search", "Lina")
    (ws / "memory/people/lina.md").write_text("Lina took up the bassoon.\n")
    hits = json.loads(cli(ws, "search", "--json", "bassoon").stdout)
    assert [h["path"] for h in hits] == ["people/lina.md"]


def test_names_and_snippets_are_escaped_for_the_terminal(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory/esc.md").write_text("walrus \x1b[2J\x1b[31mred\x07 text \u202e reversed\n")
    r = cli(ws, "search", "walrus")
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout and "\u202e" not in r.stdout
    assert "\\x1b" in r.stdout


def test_fts_syntax_on_the_command_line_is_never_a_crash(tmp_path):
    ws = make_ws(tmp_path)
    for q in ['"unbalanced', "NEAR(a b", "a:b", "*", "(lina OR"]:
        r = cli(ws, "search", "--json", q)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (q, r.stderr)
        json.loads(r.stdout)


def test_reindex_rebuilds_from_scratch(tmp_path):
    ws = make_ws(tmp_path)
    r = cli(ws, "reindex")
    assert r.returncode == 0, r.stderr
    assert "reindexed 5 notes and 0 conversations" in r.stdout
    os.unlink(ws / "state/index.sqlite3")
    r = cli(ws, "search", "--json", "Marek")
    assert r.returncode == 0 and json.loads(r.stdout)
    r = cli(ws, "search", "--help")
    assert "question words" in " ".join(r.stdout.split())
    r = cli(ws, "reindex", "--help")
    assert "from scratch" in " ".join(r.stdout.split())


def test_a_locked_vault_fails_closed(tmp_path, monkeypatch):
    from recall_support import add_vault

    ws = make_ws(tmp_path)
    add_vault(ws, {"pin": "Zq9vXw7rTt4pLm8s-value"}, monkeypatch)
    r = cli(ws, "search", "Lina", env={"ASSISTANT_VAULT_PASSPHRASE": "wrong passphrase"})
    assert r.returncode != 0 and "error:" in r.stderr
    assert not (ws / "state/index.sqlite3").exists()
