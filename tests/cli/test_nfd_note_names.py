"""Issue 23 item 15: a note whose name is stored in decomposed Unicode (NFD, as macOS or a sync
tool may write it) can be read and renamed; `doctor` names it; `memory rename OLD NEW` goes
through the gated writer (a write of NEW and a removal of OLD, both asked of the gate, both in
history), refuses an existing NEW, and leaves nothing half-done when it is refused."""

import json
import os
import unicodedata

import pytest
from click.testing import CliRunner

from assistant.cli import main
from assistant.notes.store import Denied, Memory, NoteError
from assistant.secrets.scanner import Scanner
from policy.gate import Decision

NFC = "josé.md"
NFD = unicodedata.normalize("NFD", NFC)
assert NFC != NFD


def run(ws, *args, input=None):
    return CliRunner().invoke(main, ["-w", str(ws), "memory", *args], input=input)


def _plant(ws, name=NFD, text="José plays the oud.\n"):
    path = ws / "memory" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _names(folder):
    return sorted(os.listdir(folder))


def test_a_note_named_in_nfd_can_be_read(ws):
    _plant(ws)
    for typed in (NFC, NFD, "josé", NFD[:-3]):
        r = run(ws, "cat", typed)
        assert r.exit_code == 0, (typed, r.stderr)
        assert r.stdout == "José plays the oud.\n"


def test_rename_gives_an_nfd_note_its_nfc_name_and_history_records_both(ws):
    _plant(ws)
    r = run(ws, "rename", NFC, NFC)
    assert r.exit_code == 0, r.stderr
    assert "renamed jose\\u0301.md to josé.md" in r.stdout
    names = _names(ws / "memory")
    assert NFC in names and NFD not in names
    assert (ws / "memory" / NFC).read_text() == "José plays the oud.\n"
    log = json.loads(run(ws, "log", "--json").stdout)
    new = [v for v in log if v["path"] == NFC]
    old = [v for v in log if v["path"] == NFD]
    assert new and new[0]["source"] == "person" and not new[0]["removed"]
    assert old and old[0]["removed"] and old[0]["source"] == "removal"
    r = run(ws, "write", NFC, "--force", input="José plays the oud and the saz.\n")
    assert r.exit_code == 0, r.stderr     # once renamed, the name takes writes again


def test_rename_out_of_an_nfd_folder_leaves_no_second_spelling(ws):
    _plant(ws, unicodedata.normalize("NFD", "zoë/café.md"), "Zoë's café list.\n")
    r = run(ws, "rename", "zoë/café", "zoë/café")
    assert r.exit_code == 0, r.stderr
    assert _names(ws / "memory" / "zoë") == ["café.md"]
    assert unicodedata.normalize("NFD", "zoë") not in _names(ws / "memory")


def test_rename_moves_an_ordinary_note_and_takes_names_without_md(ws):
    r = run(ws, "rename", "people/marek", "people/marek-k")
    assert r.exit_code == 0, r.stderr
    assert not (ws / "memory/people/marek.md").exists()
    assert (ws / "memory/people/marek-k.md").is_file()
    audit = [json.loads(line) for line in (ws / "state/audit.jsonl").read_text().splitlines()]
    moved = [e for e in audit if e.get("event") == "renamed"]
    assert moved and moved[-1]["from"] == "people/marek.md" and moved[-1]["target"] == "people/marek-k.md"


def test_rename_refuses_an_existing_new_and_changes_nothing(ws):
    before = {n: (ws / "memory/people" / n).read_bytes() for n in _names(ws / "memory/people")}
    r = run(ws, "rename", "people/marek.md", "people/lina.md")
    assert r.exit_code == 1
    assert "people/lina.md already exists; nothing was renamed" in r.stderr
    assert {n: (ws / "memory/people" / n).read_bytes() for n in _names(ws / "memory/people")} == before


class _DenyRemovalOf:
    """The session's gate, except that removing `path` is denied (as a policy could)."""

    def __init__(self, gate, path):
        self.gate, self.path = gate, path
        self.asked = []

    def authorize(self, kind, path, **kw):
        self.asked.append(path)
        if path == self.path and kw.get("content") == b"":
            return Decision(False, "deny", f"removing {path} is not allowed here", None)
        return self.gate.authorize(kind, path, **kw)

    def __getattr__(self, name):
        return getattr(self.gate, name)


def test_rename_is_gated_as_a_write_and_a_removal_and_a_refusal_leaves_nothing_half_done(ws, sessions):
    session = sessions(ws, "watched")
    mem = session.memory
    gate = _DenyRemovalOf(mem.gate, "people/marek.md")
    mem.gate = gate
    history_before = len(mem.history.versions())
    with pytest.raises(Denied, match="removing people/marek.md is not allowed here"):
        mem.rename("people/marek.md", "people/mk.md")
    assert gate.asked == ["people/mk.md", "people/marek.md"]
    assert (ws / "memory/people/marek.md").is_file() and not (ws / "memory/people/mk.md").exists()
    assert len(mem.history.versions()) == history_before
    assert not mem.history.intent_pending()


def test_doctor_names_a_note_in_nfd_with_the_rename_that_fixes_it(ws):
    _plant(ws)
    r = CliRunner().invoke(main, ["-w", str(ws), "doctor", "--json", "--no-notify"])
    found = [c for c in json.loads(r.stdout)["checks"] if not c["ok"] and "decomposed Unicode" in c["message"]]
    assert len(found) == 1
    assert "memory/jose\\u0301.md" in found[0]["message"]
    assert found[0]["fix"] == "assistant memory rename $'jose\\u0301.md' 'josé.md'"
    assert r.exit_code == 1
    assert run(ws, "rename", NFC, NFC).exit_code == 0
    r = CliRunner().invoke(main, ["-w", str(ws), "doctor", "--json", "--no-notify"])
    assert not [c for c in json.loads(r.stdout)["checks"] if "decomposed Unicode" in c["message"]]


def test_two_spellings_of_one_name_are_never_picked_between(ws):
    _plant(ws)
    (ws / "memory" / NFC).write_text("another José\n")
    r = run(ws, "cat", NFC)
    assert r.exit_code == 1 and "spelled with other Unicode code points" in r.stderr
    r = run(ws, "rename", NFC, "jose.md")
    assert r.exit_code == 1 and "spelled with other Unicode code points" in r.stderr
    assert sorted([NFC, NFD]) == sorted(n for n in _names(ws / "memory") if n.startswith("jos"))
