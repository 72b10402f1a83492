"""A note written on one device appears on the others with its history and provenance, through
real git and a bare repository; the gate rules it "sync from NAME"; nothing else travels."""

from __future__ import annotations

import json

from assistant.cli.memory_history import _json, _json_list, _Shown
from assistant.session import open_session

from sync_support import audit, cli, devices, git, sync, text, versions, write


def test_a_note_written_on_a_appears_on_b_with_its_history_and_provenance(tmp_path):
    d = devices(tmp_path, "A", "B")
    write(d["A"], "people/lina.md", "Lina likes tea.\n")
    write(d["A"], "people/lina.md", "Lina likes green tea.\n")
    assert sync(d["A"]).pushed
    report = sync(d["B"])
    assert report.integrations[0].written == ["people/lina.md"]
    assert text(d["B"], "people/lina.md") == "Lina likes green tea.\n"

    mine = versions(d["B"], "people/lina.md")
    imported = [v for v in mine if v.imported]
    assert [v.source for v in imported] == ["person", "person"]          # the origin's source kept
    assert {v.device for v in imported} == {"A"}
    assert all(v.run for v in imported)                                   # and its run
    landed = [v for v in mine if not v.imported]
    assert [v.source for v in landed] == ["device:A"]
    assert landed[0].grant == "sync from A"
    # re-keyed: the revision is this workspace's own (B's key), not A's
    a_head = [v for v in versions(d["A"], "people/lina.md")][-1]
    assert a_head.sha256 == landed[0].sha256 and a_head.rev != landed[0].rev
    rulings = [e for e in audit(d["B"]) if e.get("event") == "ruling" and e.get("target") == "people/lina.md"]
    assert rulings and all(e["verdict"] == "allow" and e["reason"] == "sync from A" for e in rulings)


def test_memory_log_shows_the_other_devices_versions(tmp_path):
    d = devices(tmp_path, "A", "B")
    write(d["A"], "n.md", "one\n")
    sync(d["A"]); sync(d["B"])
    out = cli(d["B"], "memory", "log", "n.md")
    assert out.returncode == 0, out.stderr
    assert "device:A" in out.stdout and "on device A" in out.stdout
    logged = json.loads(cli(d["B"], "memory", "log", "n.md", "--json").stdout)
    assert {v.get("device") for v in logged if v.get("imported")} == {"A"}
    assert [v["source"] for v in logged if not v.get("imported")] == ["device:A"]
    # the hand-built JSON of `memory log --json` is json.dumps's, with the sync fields too
    with open_session(d["B"], "watched", kind="cli", transcript=False) as s:
        shown = _Shown(s.memory)
        mine = list(reversed(s.history.versions("n.md")))
        assert _json_list(shown, mine) == "[\n " + ",\n ".join(
            json.dumps(_json(shown, v), sort_keys=True, ensure_ascii=False, separators=(", ", ": ")) for v in mine) + "]"


def test_three_devices_converge_and_nothing_echoes_back(tmp_path):
    d = devices(tmp_path, "A", "B", "C")
    write(d["A"], "a.md", "from A\n")
    write(d["B"], "b.md", "from B\n")
    for name in ("A", "B", "C", "A", "B", "C"):
        sync(d[name])
    for ws in d.values():
        assert text(ws, "a.md") == "from A\n" and text(ws, "b.md") == "from B\n"
    # C took a.md from A and from B's branch: it lands once, and B never re-sends A's versions
    assert len([v for v in versions(d["C"], "a.md") if not v.imported]) == 1
    events = git("show", "devices/B:sync/events.jsonl", git_dir=tmp_path / "remote.git")
    assert "a.md" not in events
    # a sync with nothing new changes nothing and pushes nothing
    again = sync(d["C"])
    assert not again.pushed and again.exported.commit is None


def test_only_notes_and_history_travel_and_no_digest_of_their_bytes(tmp_path):
    d = devices(tmp_path, "A", "B")
    write(d["A"], "n.md", "hello\n")
    sync(d["A"])
    remote = tmp_path / "remote.git"
    files = git("ls-tree", "-r", "--name-only", "devices/A", git_dir=remote).splitlines()
    assert all(f.startswith(("notes/", "sync/")) for f in files)
    assert not any(name in f for f in files for name in ("vault", "grants", "config", "state"))
    events = [json.loads(line) for line in git("show", "devices/A:sync/events.jsonl", git_dir=remote).splitlines()]
    assert events and all("sha256" not in e and "rev" not in e for e in events)


def test_the_cli_round_trip(tmp_path):
    d = devices(tmp_path, "A", "B")
    write(d["A"], "x.md", "x\n")
    done = cli(d["A"], "sync")
    assert done.returncode == 0, done.stderr
    assert "pushed" in done.stdout
    done = cli(d["B"], "sync")
    assert done.returncode == 0, done.stderr
    assert "written x.md (from A)" in done.stdout
    status = json.loads(cli(d["B"], "sync", "status", "--json").stdout)
    assert status["name"] == "B" and status["conflicts"] == [] and status["aside"] == []
    assert status["devices"][0]["name"] == "A" and status["devices"][0]["integrated"]
