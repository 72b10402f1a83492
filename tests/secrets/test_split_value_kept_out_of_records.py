"""The writer refuses a note path that spells a vault value across folder names
(`correct-horse-/battery-93kd.md` is the value once the separator is taken out: the writer
scans it that way, review 2026-12-01). The records of that very refusal keep the path as it was
sent: the audit line's secret_refused target and the transcript's tool call hold the value,
split by one "/", because their redaction does not look through the separator."""

from __future__ import annotations

import json

from assistant.models.scripted import ScriptedModel

WIFI = "correct-horse-battery-93kd"
SPLIT = "correct-horse-/battery-93kd"


def test_a_split_value_refused_by_the_writer_is_kept_out_of_audit_and_transcript(vault_ws, sessions, tmp_path):
    session = sessions(vault_ws, "watched", kind="chat", vault={"WIFI": WIFI})
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool": "memory_write", "args": {"path": f"{SPLIT}.md", "content": "x\n"}},
                                  {"reply": "done"}]))
    result = session.new_agent(ScriptedModel(script)).turn("save it")
    assert result.secret_refused                     # the writer knew it for the vault value
    session.transcript.close()
    audit = (vault_ws / "state" / "audit.jsonl").read_text()
    transcript = session.transcript.path.read_text()
    in_audit, in_transcript = SPLIT in audit, SPLIT in transcript     # bools: a failure prints no log
    assert not in_audit, "the split value is in the secret_refused audit line"
    assert not in_transcript, "the split value is in the transcript"
