"""A device's branch that holds exactly what this device last sent of a note (it took the note
from here and changed nothing) is an echo of this device's own: whatever this device did since,
a removal or an edit, stands. The real cases still hold: a note the other device edited after
taking it keeps that edit against a removal here, a note it created itself arrives, a tombstone
travels.

Every scenario starts before this device (A) has ever integrated the other's branch (B): there
is no base for the note, which is what used to bring a removed note back from B's copy."""

from __future__ import annotations

from sync_support import cli, devices, git, remove, sync, text, versions, write

NOTE = "n.md"
V1 = "line one\nline two\nline three\n"
V2 = "line one\nline two (A's edit)\nline three\n"


def _b_took_it(tmp_path):
    """A sends the note; B takes it and pushes its own branch, which now carries a copy. A has
    never integrated B's branch (B had none when A synced)."""
    d = devices(tmp_path, "A", "B")
    write(d["A"], NOTE, V1)
    sync(d["A"])
    assert sync(d["B"]).integrations[0].written == [NOTE]
    assert git("show", f"devices/B:notes/{NOTE}", git_dir=tmp_path / "remote.git") + "\n" == V1
    return d


def _converged(d, expected):
    for name in ("B", "A", "B", "A"):
        sync(d[name])
    assert text(d["A"], NOTE) == expected and text(d["B"], NOTE) == expected
    for ws in d.values():
        assert not [v for v in versions(ws, NOTE) if v.conflict]


def test_a_removal_is_not_undone_by_the_other_devices_copy(tmp_path):
    d = _b_took_it(tmp_path)
    remove(d["A"], NOTE)
    report = sync(d["A"])
    assert text(d["A"], NOTE) is None                       # the person's removal stands
    assert report.integrations[0].written == [] and report.integrations[0].conflicts == []
    assert sync(d["B"]).integrations[0].removed == [NOTE]   # and travels
    _converged(d, None)


def test_a_note_deleted_by_hand_stays_deleted(tmp_path):
    d = _b_took_it(tmp_path)
    (d["A"] / "memory" / NOTE).unlink()
    sync(d["A"])
    assert text(d["A"], NOTE) is None
    sync(d["B"])
    assert text(d["B"], NOTE) is None
    _converged(d, None)


def test_a_forgotten_note_stays_gone_and_its_tombstone_travels(tmp_path):
    d = _b_took_it(tmp_path)
    assert cli(d["A"], "memory", "rm", NOTE).returncode == 0
    assert cli(d["A"], "memory", "forget", NOTE).returncode == 0
    sync(d["A"])
    assert text(d["A"], NOTE) is None
    assert versions(d["A"], NOTE) == []                     # nothing of it came back into history
    report = sync(d["B"])
    assert report.integrations[0].forgotten == [NOTE] and report.integrations[0].removed == [NOTE]
    assert text(d["B"], NOTE) is None
    assert not [v for v in versions(d["B"], NOTE) if v.imported]     # A's versions dropped there
    _converged(d, None)


def test_an_edit_is_not_met_by_the_other_devices_unchanged_copy(tmp_path):
    d = _b_took_it(tmp_path)
    write(d["A"], NOTE, V2)
    report = sync(d["A"])
    i = report.integrations[0]
    assert (i.written, i.merged, i.conflicts) == ([], [], [])
    assert text(d["A"], NOTE) == V2                          # not reverted
    assert not [v for v in versions(d["A"], NOTE) if v.conflict]   # and no conflict version
    assert sync(d["B"]).integrations[0].written == [NOTE]
    assert text(d["B"], NOTE) == V2
    _converged(d, V2)


def test_an_edit_on_the_other_device_beats_a_removal_here(tmp_path):
    d = _b_took_it(tmp_path)
    edited = V1 + "line four (B's)\n"
    write(d["B"], NOTE, edited)
    sync(d["B"])
    remove(d["A"], NOTE)
    assert sync(d["A"]).integrations[0].written == [NOTE]
    assert text(d["A"], NOTE) == edited                      # removal against edit keeps the edit
    _converged(d, edited)


def test_a_note_the_other_device_created_arrives_beside_an_echo(tmp_path):
    d = _b_took_it(tmp_path)
    write(d["B"], "b.md", "from B\n")
    sync(d["B"])
    remove(d["A"], NOTE)
    assert sync(d["A"]).integrations[0].written == ["b.md"]
    assert text(d["A"], "b.md") == "from B\n" and text(d["A"], NOTE) is None


def test_the_copy_arriving_after_the_removal_was_sent_is_still_an_echo(tmp_path):
    """B's push of its copy lands after A fetched: A sends the removal first, and only its next
    sync meets B's copy. It is still only A's own bytes coming back."""
    d = _b_took_it(tmp_path)
    remote = tmp_path / "remote.git"
    b_head = git("rev-parse", "refs/heads/devices/B", git_dir=remote)
    git("update-ref", "-d", "refs/heads/devices/B", git_dir=remote)      # not there yet for A
    remove(d["A"], NOTE)
    assert sync(d["A"]).pushed                                          # the removal is sent
    git("update-ref", "refs/heads/devices/B", b_head, git_dir=remote)    # B's push lands now
    sync(d["A"])
    assert text(d["A"], NOTE) is None
    _converged(d, None)


def test_the_same_bytes_written_on_the_other_device_are_no_echo(tmp_path):
    """B never took A's note; the person on B writes the very text A once sent (and removed
    since). B made that version itself: it arrives."""
    d = devices(tmp_path, "A", "B")
    write(d["A"], NOTE, V1)
    sync(d["A"])
    remove(d["A"], NOTE)
    sync(d["A"])
    write(d["B"], NOTE, V1)
    sync(d["B"])
    assert sync(d["A"]).integrations[0].written == [NOTE]
    assert text(d["A"], NOTE) == V1



def test_every_device_holding_a_copy_is_an_echo(tmp_path):
    """Three devices: B and C both took A's note (C from A's branch and B's copy); A removes it
    before taking either branch: neither copy brings it back, and the removal reaches both."""
    d = devices(tmp_path, "A", "B", "C")
    write(d["A"], NOTE, V1)
    for name in "ABC":
        sync(d[name])
    assert text(d["C"], NOTE) == V1
    remove(d["A"], NOTE)
    report = sync(d["A"])
    assert [i.written for i in report.integrations] == [[], []]
    for name in ("B", "C", "A", "B", "C", "A"):
        sync(d[name])
    assert {name: text(ws, NOTE) for name, ws in d.items()} == {"A": None, "B": None, "C": None}
