"""`memory forget` drops the note's versions on every device, whatever else the same sync
brings: the removal that travels with the tombstone does not record the note's text again
first (as a version of this device's, which its next sync would send back), and a version sent
before the tombstone but integrated with it is not logged after it."""

from __future__ import annotations

import hashlib

from sync_support import cli, devices, sync, text, versions, write

NOTE = "n.md"
V1 = "the old text, to be forgotten\n"
V2 = "the text kept\n"


def _sha(s: str) -> str:
    return hashlib.sha256(s.encode()).hexdigest()


def test_a_forgotten_and_removed_note_leaves_no_version_of_its_text_anywhere(tmp_path):
    d = devices(tmp_path, "A", "B")
    write(d["A"], NOTE, V1)
    for name in "ABA":
        sync(d[name])
    assert cli(d["A"], "memory", "rm", NOTE).returncode == 0
    assert cli(d["A"], "memory", "forget", NOTE).returncode == 0
    sync(d["A"])
    report = sync(d["B"])
    assert report.integrations[0].forgotten == [NOTE] and report.integrations[0].removed == [NOTE]
    assert [v for v in versions(d["B"], NOTE) if not v.removed] == []
    for name in "ABAB":
        sync(d[name])
    for ws in d.values():
        assert text(ws, NOTE) is None
        assert [v for v in versions(ws, NOTE) if v.sha256 == _sha(V1) and not v.removed] == []


def test_a_version_sent_before_the_tombstone_and_taken_with_it_is_dropped(tmp_path):
    d = devices(tmp_path, "A", "B")
    write(d["A"], NOTE, V1)
    sync(d["A"])                               # V1's version is on A's branch; B has not synced
    write(d["A"], NOTE, V2)
    assert cli(d["A"], "memory", "forget", NOTE).returncode == 0
    sync(d["A"])                               # the tombstone, and V2 recorded again after it
    assert [v.sha256 for v in versions(d["A"], NOTE)] == [_sha(V2)]
    report = sync(d["B"])                      # both of A's commits at once
    assert report.integrations[0].forgotten == [NOTE]
    assert text(d["B"], NOTE) == V2
    assert _sha(V1) not in {v.sha256 for v in versions(d["B"], NOTE)}
    for name in "ABAB":
        sync(d[name])
    for ws in d.values():
        assert _sha(V1) not in {v.sha256 for v in versions(ws, NOTE)}
