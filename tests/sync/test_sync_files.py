"""`[sync] files = true`: the regular files of files/ travel with the notes in the device's
signed commits and arrive, confined, on an enrolled device that also has it; links, hidden
and dot-leading names stay home (named when they cannot go). With files = false (the default)
nothing of files/ is sent and a device's files/ is not written here, and `sync status` says so."""

from __future__ import annotations

import json
import os

from sync_support import cli, devices, files_on, get_file as got, git, put_file as put, sync


def tree(tmp_path, device: str) -> list[str]:
    return git("ls-tree", "-r", "--name-only", f"devices/{device}", git_dir=tmp_path / "remote.git").splitlines()


def test_files_travel_between_devices_that_opt_in(tmp_path):
    d = devices(tmp_path, "A", "B")
    files_on(d["A"]); files_on(d["B"])
    put(d["A"], "docs/plan.txt", "the plan\n")
    put(d["A"], "photo.bin", bytes(range(256)) * 4)            # not text: travels as it is
    put(d["A"], "id.key", "a key the file tools never see\n")  # [files] hidden: stays home
    put(d["A"], ".draft.swp", "an editor's scratch\n")         # dot-leading: stays home
    os.symlink("/etc/passwd", d["A"] / "files" / "link.txt")   # a link: named, stays home
    report = sync(d["A"])
    assert report.pushed and report.exported.files == 2
    assert [p for p, _ in report.exported.unsent] == ["link.txt"]
    assert sorted(f for f in tree(tmp_path, "A") if f.startswith("files/")) == ["files/docs/plan.txt", "files/photo.bin"]

    report = sync(d["B"])
    assert report.files[0].written == ["docs/plan.txt", "photo.bin"]
    assert got(d["B"], "docs/plan.txt") == b"the plan\n"
    assert got(d["B"], "photo.bin") == bytes(range(256)) * 4
    assert got(d["B"], "id.key") is None and got(d["B"], "link.txt") is None and got(d["B"], ".draft.swp") is None
    rulings = [e for e in (json.loads(x) for x in (d["B"] / "state" / "audit.jsonl").read_text().splitlines())
               if e.get("event") == "ruling" and e.get("kind") == "file"]
    assert {(e["target"], e["verdict"], e["reason"]) for e in rulings} == {
        ("docs/plan.txt", "allow", "sync from A"), ("photo.bin", "allow", "sync from A")}

    # a change and a removal on A arrive too; a sync with nothing new sends nothing
    put(d["A"], "docs/plan.txt", "the new plan\n")
    (d["A"] / "files" / "photo.bin").unlink()
    sync(d["A"])
    report = sync(d["B"])
    assert report.files[0].written == ["docs/plan.txt"] and report.files[0].removed == ["photo.bin"]
    assert got(d["B"], "docs/plan.txt") == b"the new plan\n" and got(d["B"], "photo.bin") is None
    sync(d["A"])
    again = sync(d["A"])
    assert again.exported.commit is None and not again.pushed
    # the notes still travel beside them, and B's own branch carries what it holds
    assert "files/docs/plan.txt" in tree(tmp_path, "B")


def test_with_files_false_nothing_of_files_is_sent_or_taken_and_status_says_so(tmp_path):
    d = devices(tmp_path, "A", "B")
    files_on(d["A"])
    put(d["A"], "a.txt", "from A\n")
    put(d["B"], "b.txt", "B's own\n")
    sync(d["A"])
    report = sync(d["B"])
    assert report.files == [] and got(d["B"], "a.txt") is None
    assert not [f for f in tree(tmp_path, "B") if f.startswith("files/")]
    out = cli(d["B"], "sync", "status")
    assert out.returncode == 0, out.stderr
    assert "files/ does not travel" in out.stdout and "A's branch carries 1 file(s)" in out.stdout
    info = json.loads(cli(d["B"], "sync", "status", "--json").stdout)
    assert info["files"] == {"travel": False, "aside": [], "conflicts": [], "not_taken": [{"device": "A", "files": 1}]}
    done = cli(d["B"], "sync")
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr      # the old "not built yet" is gone

    # turned on later: what A sent before arrives then, and B's own files go out
    files_on(d["B"])
    report = sync(d["B"])
    assert report.files[0].written == ["a.txt"] and got(d["B"], "a.txt") == b"from A\n"
    assert "files/b.txt" in tree(tmp_path, "B")
    sync(d["A"])
    assert got(d["A"], "b.txt") == b"B's own\n"


def test_both_changed_keeps_this_devices_file_and_the_others_copy_aside(tmp_path):
    d = devices(tmp_path, "A", "B")
    files_on(d["A"]); files_on(d["B"])
    put(d["A"], "x.txt", "base\n")
    put(d["A"], "y.txt", "y base\n")
    for name in ("A", "B", "A"):
        sync(d[name])
    assert got(d["B"], "x.txt") == b"base\n"
    put(d["A"], "x.txt", "A's edit\n")
    put(d["B"], "x.txt", "B's edit\n")
    (d["A"] / "files" / "y.txt").unlink()                 # removed on A ...
    put(d["B"], "y.txt", "y edited on B\n")               # ... edited on B: the edit stays
    sync(d["A"])
    out = cli(d["B"], "sync")
    assert out.returncode == 1 and "conflict files/x.txt" in out.stderr, out.stderr
    assert got(d["B"], "x.txt") == b"B's edit\n" and got(d["B"], "y.txt") == b"y edited on B\n"
    info = json.loads(cli(d["B"], "sync", "status", "--json").stdout)
    [c] = info["files"]["conflicts"]
    assert c["device"] == "A" and c["path"] == "files/x.txt" and c["copy"].startswith("state/sync/conflicts/A-")
    assert (d["B"] / c["copy"]).read_bytes() == b"A's edit\n"
    assert "conflict files/x.txt" in cli(d["B"], "sync", "status").stdout
    doctor = cli(d["B"], "doctor")
    assert "1 file(s) of files/ changed on two devices: files/x.txt" in doctor.stdout + doctor.stderr
    # the person looked and removed the copy: no longer listed
    (d["B"] / c["copy"]).unlink()
    assert json.loads(cli(d["B"], "sync", "status", "--json").stdout)["files"]["conflicts"] == []
    # A, which removed y.txt, gets B's edit back (a removal against an edit keeps the edit)
    sync(d["A"])
    assert got(d["A"], "y.txt") == b"y edited on B\n" and got(d["A"], "x.txt") == b"A's edit\n"


def test_a_save_landing_while_a_file_arrives_wins_and_nothing_is_lost(tmp_path, monkeypatch):
    import contextlib
    import dataclasses

    import sync_support

    d = devices(tmp_path, "A", "B")
    files_on(d["A"]); files_on(d["B"])
    put(d["A"], "x.txt", "A's file\n")
    sync(d["A"])
    real = sync_support.file_mount

    def racing(ws, root):
        mount = real(ws, root)

        @contextlib.contextmanager
        def lock():
            put(d["B"], "x.txt", "B's save, made after sync looked\n")     # the person saves meanwhile
            with mount.lock():
                yield
        return dataclasses.replace(mount, lock=lock)

    monkeypatch.setattr(sync_support, "file_mount", racing)
    report = sync(d["B"])
    assert report.files[0].retry == ["x.txt"] and not report.files[0].written
    assert got(d["B"], "x.txt") == b"B's save, made after sync looked\n"
    assert not [n for n in os.listdir(d["B"] / "files") if n.startswith(".")]        # no temp file left
    monkeypatch.setattr(sync_support, "file_mount", real)
    report = sync(d["B"])                      # tried again: both have a file now, so both are kept
    [(path, copy)] = report.files[0].conflicts
    assert path == "x.txt" and (d["B"] / copy).read_bytes() == b"A's file\n"
    assert got(d["B"], "x.txt") == b"B's save, made after sync looked\n"
