"""Both sides changed a note: a clean 3-way merge is a version; otherwise the local text stays and
the remote one is a conflict version in history, listed by `sync status` and `doctor` until the
person resolves it. A removal against an edit keeps the edit."""

from __future__ import annotations

import json

from sync_support import cli, devices, remove, sync, text, versions, write

BASE = "line one\nline two\nline three\nline four\nline five\n"


def _shared(tmp_path):
    d = devices(tmp_path, "A", "B")
    write(d["A"], "n.md", BASE)
    sync(d["A"]); sync(d["B"]); sync(d["A"])
    assert text(d["B"], "n.md") == BASE
    return d


def test_edits_of_different_lines_merge_cleanly_on_both(tmp_path):
    d = _shared(tmp_path)
    write(d["A"], "n.md", BASE.replace("line one", "line ONE"))
    write(d["B"], "n.md", BASE.replace("line five", "line FIVE"))
    sync(d["A"])
    report = sync(d["B"])
    assert report.integrations[0].merged == ["n.md"]
    sync(d["A"])
    merged = BASE.replace("line one", "line ONE").replace("line five", "line FIVE")
    assert text(d["A"], "n.md") == merged and text(d["B"], "n.md") == merged
    assert not [v for v in versions(d["B"]) if v.conflict]


def test_a_conflict_keeps_the_local_text_and_the_remote_as_a_conflict_version(tmp_path):
    d = _shared(tmp_path)
    write(d["A"], "n.md", BASE.replace("line three", "line three (A)"))
    write(d["B"], "n.md", BASE.replace("line three", "line three (B)"))
    sync(d["A"])
    report = sync(d["B"])
    assert report.integrations[0].conflicts == ["n.md"]
    assert text(d["B"], "n.md") == BASE.replace("line three", "line three (B)")      # local stays
    conflict = [v for v in versions(d["B"], "n.md") if v.conflict]
    assert len(conflict) == 1 and conflict[0].device == "A"

    log = cli(d["B"], "memory", "log", "n.md")
    assert "CONFLICT" in log.stdout
    shown = cli(d["B"], "memory", "show", "n.md", "--rev", conflict[0].rev)
    assert "line three (A)" in shown.stdout                    # nothing lost: A's text is in history
    status = json.loads(cli(d["B"], "sync", "status", "--json").stdout)
    assert [c["path"] for c in status["conflicts"]] == ["n.md"]
    doctor = json.loads(cli(d["B"], "doctor", "--json", "--no-notify").stdout)
    assert any(c["area"] == "sync" and not c["ok"] and "n.md" in c["message"] for c in doctor["checks"])

    # the person resolves it: the conflict is no longer listed, and A takes the resolution
    resolved = BASE.replace("line three", "line three (A and B)")
    write(d["B"], "n.md", resolved)
    status = json.loads(cli(d["B"], "sync", "status", "--json").stdout)
    assert status["conflicts"] == []
    sync(d["B"])
    sync(d["A"])          # B resolved against A's very text: A takes the resolution
    assert text(d["A"], "n.md") == resolved


def test_a_resolution_on_one_device_is_taken_by_the_other(tmp_path):
    d = _shared(tmp_path)
    write(d["A"], "n.md", BASE.replace("line three", "line three (A)"))
    write(d["B"], "n.md", BASE.replace("line three", "line three (B)"))
    sync(d["A"]); sync(d["B"]); sync(d["A"])
    # both sides hold their own text, each with the other's as a conflict version
    assert [v.device for v in versions(d["A"], "n.md") if v.conflict] == ["B"]
    resolved = BASE.replace("line three", "line three (A, then B)")
    write(d["A"], "n.md", resolved)
    sync(d["A"]); sync(d["B"])
    assert text(d["B"], "n.md") == resolved     # A resolved against B's very text: B takes it


def test_a_removal_against_an_edit_keeps_the_edit(tmp_path):
    d = _shared(tmp_path)
    remove(d["A"], "n.md")
    write(d["B"], "n.md", BASE + "line six\n")
    sync(d["A"]); sync(d["B"])
    assert text(d["B"], "n.md") == BASE + "line six\n"         # B's edit beats A's removal
    sync(d["A"])
    assert text(d["A"], "n.md") == BASE + "line six\n"         # and comes back on A


def test_a_removal_alone_travels(tmp_path):
    d = _shared(tmp_path)
    remove(d["A"], "n.md")
    sync(d["A"])
    assert sync(d["B"]).integrations[0].removed == ["n.md"]
    assert text(d["B"], "n.md") is None


def test_a_conflict_is_logged_once_when_an_integration_runs_again(tmp_path):
    """A's branch carries C's text (taken by sync, so no event of A's for it): the conflict
    version B logs has no origin time; re-running the integration (as after a crash before the
    integrated head moved) logs it no second time."""
    d = devices(tmp_path, "A", "B", "C")
    write(d["A"], "n.md", BASE)
    for name in "ABCA":
        sync(d[name])
    write(d["C"], "n.md", BASE.replace("line two", "line two (C)"))
    sync(d["C"]); sync(d["A"]); sync(d["A"])
    write(d["B"], "n.md", BASE.replace("line two", "line two (B)"))
    sync(d["B"])
    state = d["B"] / "state" / "sync" / "integrated.json"
    before = json.loads(state.read_text())
    for _ in range(2):                                   # the integration of A, again
        state.write_text(json.dumps({**before, "A": None}))
        sync(d["B"])
    from_a = [v for v in versions(d["B"], "n.md") if v.conflict and v.device == "A"]
    assert len(from_a) == 1
    assert text(d["B"], "n.md") == BASE.replace("line two", "line two (B)")
