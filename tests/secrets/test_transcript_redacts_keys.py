"""A transcript redacts the names of fields (dict keys) as well as their values: a caller's
arguments are its input in both places. Real Transcript file on disk, real Scanner."""

from __future__ import annotations

import json

from assistant.secrets.scanner import Scanner
from assistant.records.transcript import Transcript, redact_value

NAME, VALUE = "bank_pin", "Tr0ub4dor-zeta-9931"


def test_a_vault_value_as_a_key_at_any_depth_is_redacted_on_disk(tmp_path):
    scanner = Scanner({NAME: VALUE})
    with Transcript(tmp_path / "t", "s1", scanner) as t:
        t.append("tool_call", tool="memory_list", args={"offset": {VALUE: 1, "k": [{f"x{VALUE}y": VALUE}]}})
    raw = (tmp_path / "t" / "s1.jsonl").read_bytes()
    assert VALUE.encode() not in raw
    args = json.loads(raw)["args"]
    assert args["offset"] == {f"[redacted:{NAME}]": 1, "k": [{f"x[redacted:{NAME}]y": f"[redacted:{NAME}]"}]}


def test_two_keys_redacted_alike_are_both_kept():
    scanner = Scanner({NAME: VALUE})
    out = redact_value({f"[redacted:{NAME}]": 1, VALUE: 2, "plain": 3}, scanner)
    assert sorted(out.values()) == [1, 2, 3]       # the key already spelled like the marker is not overwritten
    assert out["plain"] == 3
    assert all(VALUE not in k for k in out)
