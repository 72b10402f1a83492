"""A tombstone is applied once: integrating the device's branch from its root again (the
device removed and enrolled anew) does not drop the versions made since (hostile review,
attack 5)."""

from __future__ import annotations

from assistant.sync.engine import enrol, unenrol

from sync_support import cli, devices, public_key, sync, versions, write


def test_a_replayed_tombstone_drops_nothing_made_since(tmp_path):
    d = devices(tmp_path, "A", "B")
    write(d["A"], "plan.md", "A's plan\n")
    sync(d["A"])
    sync(d["B"])
    assert cli(d["A"], "memory", "forget", "plan.md").returncode == 0
    sync(d["A"])
    report = sync(d["B"])
    assert report.integrations[0].forgotten == ["plan.md"]
    assert not [v for v in versions(d["B"], "plan.md") if v.device == "A"]   # dropped here too
    write(d["B"], "plan.md", "B's later plan\n")
    kept = {v.rev for v in versions(d["B"], "plan.md")}
    assert kept
    unenrol(d["B"] / "state", "A")
    enrol(d["B"] / "state", "A", public_key(d["A"]))
    report = sync(d["B"])
    assert report.integrations[0].forgotten == []
    assert kept <= {v.rev for v in versions(d["B"], "plan.md")}
