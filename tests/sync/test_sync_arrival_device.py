"""Every version that arrives by sync names the enrolled device it came from (`device`): the
imported versions (which keep the origin's source, run, approval and sources) and the version
the sync itself wrote or removed here (source `device:NAME`, or `removal`). `memory log` and
`memory log --json` show it, and a removal that arrived is not sent back out as this device's own."""

from __future__ import annotations

import json

from assistant.notes.history import Origin
from assistant.session import open_session

from sync_support import cli, devices, git, remove, sync, text, versions


def test_the_arrival_version_and_the_imported_ones_record_the_device(tmp_path):
    d = devices(tmp_path, "A", "B")
    with open_session(d["A"], "watched", kind="cli", transcript=False) as s:
        s.memory.write("n.md", "tea\n", force=True,
                       origin=Origin("assistant", model="m-1", sources=("web:example.org",)))
    sync(d["A"])
    sync(d["B"])
    mine = versions(d["B"], "n.md")
    imported = [v for v in mine if v.imported]
    assert [(v.source, v.device, v.model, v.sources) for v in imported] == [
        ("assistant", "A", "m-1", ("web:example.org",))]
    assert imported[0].run and imported[0].approval is None
    arrived = [v for v in mine if not v.imported]
    assert [(v.source, v.device, v.grant) for v in arrived] == [("device:A", "A", "sync from A")]
    lines = [json.loads(x) for x in (d["B"] / "history" / "log.jsonl").read_text().splitlines()]
    assert [x.get("device") for x in lines if x["path"] == "n.md" and x["source"] == "device:A"] == ["A"]


def test_a_removal_that_arrived_records_the_device_and_is_not_sent_back(tmp_path):
    d = devices(tmp_path, "A", "B")
    (d["A"] / "memory" / "n.md").write_text("old\n")
    with open_session(d["A"], "watched", kind="cli", transcript=False) as s:
        s.memory.notice()
    for name in ("A", "B", "A"):
        sync(d[name])
    remove(d["A"], "n.md")
    sync(d["A"])
    report = sync(d["B"])
    assert report.integrations[0].removed == ["n.md"] and text(d["B"], "n.md") is None
    gone = [v for v in versions(d["B"], "n.md") if v.removed]
    assert sorted((v.source, v.device, v.imported) for v in gone) == [("removal", "A", False), ("removal", "A", True)]
    # B's next commit does not send A's removal back as one of B's own versions
    events = git("show", "devices/B:sync/events.jsonl", git_dir=tmp_path / "remote.git")
    assert not [e for e in map(json.loads, events.splitlines())
                if e.get("op") == "version" and e.get("path") == "n.md" and e.get("removed")]

    out = cli(d["B"], "memory", "log", "n.md")
    assert out.returncode == 0, out.stderr
    assert "arrived by sync from device A" in out.stdout and "on device A" in out.stdout
    logged = json.loads(cli(d["B"], "memory", "log", "n.md", "--json").stdout)
    assert all(v.get("device") == "A" for v in logged)
    assert {v["source"] for v in logged if not v.get("imported")} == {"device:A", "removal"}
