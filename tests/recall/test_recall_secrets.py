"""No vault value ever reaches the index: not its file, its WAL, its shm, nor anything else in state/.

Values are checked byte for byte (and in a few encodings); the tests never print them."""

from __future__ import annotations

import base64

from recall_support import PASS, add_vault, make_ws, scripted, session, state_bytes

VALUE = "hunter2-Zq9vXw7rTt4pLm8s"
LATER = "pa55-Kf3nWq8yRe2uVb6c"


def _forms(value: str) -> list[bytes]:
    raw = value.encode()
    return [raw, raw.lower(), base64.b64encode(raw), raw.hex().encode(), value[4:].encode()]


def _leaks(ws, value: str) -> list[str]:
    """Names of the files under state/ holding the value in any form (never the value itself)."""
    return [name for name, data in state_bytes(ws).items() if any(f in data for f in _forms(value))]


def test_a_vault_value_in_a_hand_edited_note_never_reaches_state(tmp_path, monkeypatch):
    ws = make_ws(tmp_path)
    add_vault(ws, {"bank_pin": VALUE}, monkeypatch)
    (ws / "memory/people/lina.md").write_text(
        f"Lina's router password is {VALUE} (she told me twice).\nLikes oolong.\n")
    (ws / "memory/bank.md").write_text(f"---\ndescription: bank login {VALUE}\n---\nPIN {VALUE}\n")
    with session(ws) as s:
        hits = s.recall.search("router password")
        assert [h.path for h in hits][:1] == ["people/lina.md"]
        assert all(VALUE not in h.snippet and VALUE not in h.description for h in hits)
        assert "[redacted:bank_pin]" in hits[0].snippet
        s.recall.search("bank login PIN")
        assert s.recall.search(VALUE) == [] or all(VALUE not in h.snippet for h in s.recall.search(VALUE))
        assert _leaks(ws, VALUE) == []
    assert _leaks(ws, VALUE) == []


def test_recall_and_the_transcript_of_a_turn_carry_no_value(tmp_path, monkeypatch):
    ws = make_ws(tmp_path)
    add_vault(ws, {"bank_pin": VALUE}, monkeypatch)
    (ws / "memory/people/lina.md").write_text(f"Lina's alarm code is {VALUE}.\n")
    model = scripted(tmp_path, [{"tool": "memory_search", "args": {"query": "Lina alarm"}}, {"reply": "done"}])
    with session(ws, kind="chat") as s:
        agent = s.new_agent(model)
        agent.turn("what is Lina's alarm code?")
        prompt = "\n".join(m["content"] for m in agent.conversation.messages())
        assert "alarm code" in prompt and VALUE not in prompt
    assert _leaks(ws, VALUE) == []


def test_when_the_vault_gains_a_secret_the_index_is_rebuilt_without_it(tmp_path, monkeypatch):
    ws = make_ws(tmp_path)
    add_vault(ws, {"bank_pin": VALUE}, monkeypatch)
    (ws / "memory/wifi.md").write_text(f"Guest wifi key: {LATER}\n")
    with session(ws) as s:
        hits = s.recall.search("guest wifi key")
        assert LATER in hits[0].snippet          # not a secret yet: indexed as written
    assert _leaks(ws, LATER) != []
    from assistant.secrets.vault import Vault

    Vault.open(ws / "vault.enc", PASS).set("wifi_key", LATER)
    with session(ws) as s:
        hits = s.recall.search("guest wifi key")
        assert "[redacted:wifi_key]" in hits[0].snippet and LATER not in hits[0].snippet
        assert any("secrets changed" in n for n in s.recall.notices), s.recall.notices
    assert _leaks(ws, LATER) == []


def test_the_index_stores_a_keyed_hash_of_the_secret_set_not_the_values(tmp_path, monkeypatch):
    import sqlite3

    ws = make_ws(tmp_path)
    add_vault(ws, {"bank_pin": VALUE}, monkeypatch)
    with session(ws) as s:
        s.recall.search("Lina")
    db = sqlite3.connect(ws / "state/index.sqlite3")
    meta = dict(db.execute("SELECT key, value FROM meta"))
    db.close()
    import hashlib

    assert len(meta["secrets"]) == 64
    assert meta["secrets"] != hashlib.sha256(VALUE.encode()).hexdigest()
    assert VALUE not in str(meta)
