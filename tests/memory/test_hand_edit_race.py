"""Issue 23 item 2: a hand edit saved while the writer is writing is never lost.

An editor thread saves the note the way editors do (its text into a temp file beside the note,
then that file swapped over the note in one atomic step) thousands of times, while the gated
writer writes the same note through Memory. At the end every save the editor made is either
the note on disk or a version in history/: none was overwritten unseen.

The editor swaps its file in with renameat2(RENAME_EXCHANGE) and removes what it displaced: for
the note's name that is one atomic replacement, exactly what rename(2) does, but it also tells
the editor what it replaced, so the test knows which saves were superseded by the editor's own
next save (legitimately gone) and which were replaced by someone else (each of those must be
in history). The race is bounded by counts (saves made, writes tried), never by time.
"""

import ctypes
import hashlib
import os
import random
import sys
import threading
import time

import pytest

from assistant.notes.store import Conflict

_libc = ctypes.CDLL(None, use_errno=True)
HAS_EXCHANGE = sys.platform.startswith("linux") and hasattr(_libc, "renameat2")
RENAME_EXCHANGE = 2

MIN_SAVES = 3000      # the editor saves at least this often,
MIN_RACES = 5         # until at least this many of its saves were replaced by the writer
MAX_SAVES = 30000     # (a bound: a machine that never races fails, never loops for ever)
MIN_WRITES = 300      # the writer keeps writing at least this often, and while the editor saves
NOTE = "race.md"


def _exchange(a: str, b: str) -> None:
    if _libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


class Editor(threading.Thread):
    """Saves memory/race.md MIN_SAVES times, and on until MIN_RACES of its saves were replaced
    by someone else (at most MAX_SAVES); records which those were."""

    def __init__(self, note: str) -> None:
        super().__init__(daemon=True)
        self.note = note
        self.tmp = os.path.join(os.path.dirname(note), ".race.md.swp")
        self.saves: list[bytes] = []
        self.replaced_by_others: list[bytes] = []   # each must end up on disk or in history
        self.error: BaseException | None = None
        self.rng = random.Random(23)

    def run(self) -> None:
        try:
            prev = open(self.note, "rb").read()
            for i in range(MAX_SAVES):
                if i >= MIN_SAVES and len(self.replaced_by_others) >= MIN_RACES:
                    break
                text = f"hand save {i}\n".encode() * (1 + i % 7)
                with open(self.tmp, "wb") as f:
                    f.write(text)
                _exchange(self.tmp, self.note)
                displaced = open(self.tmp, "rb").read()
                os.unlink(self.tmp)
                if displaced != prev and i > 0:
                    self.replaced_by_others.append(prev)
                self.saves.append(text)
                prev = text
                if self.rng.random() < 0.5:
                    os.sched_yield()
                if i % 20 == 19:
                    # a pause now and then, as a person's saves have: without one, a fast machine
                    # can have every write meet a fresh save and end as a Conflict (none written)
                    time.sleep(0.005)
        except BaseException as exc:   # noqa: BLE001 - reported by the test
            self.error = exc


def _history_bytes(mem) -> set[str]:
    return {v.sha256 for v in mem.history.versions(NOTE) if not v.removed}


@pytest.mark.skipif(not HAS_EXCHANGE, reason="needs renameat2(RENAME_EXCHANGE) to know what a save replaced")
def test_no_hand_edit_is_lost_to_a_racing_write(ws, sessions):
    session = sessions(ws, "watched")
    mem = session.memory
    mem.write(NOTE, "first text\n")
    editor = Editor(str(ws / "memory" / NOTE))
    editor.start()
    written = conflicts = 0
    n = 0
    while editor.is_alive() or n < MIN_WRITES:
        n += 1
        try:
            mem.write(NOTE, f"written by the assistant, write {n}\n", force=True)
            written += 1
        except Conflict:
            conflicts += 1
        if not editor.is_alive() and n >= MIN_WRITES:
            break
    editor.join(60)
    assert not editor.is_alive(), "the editor thread did not finish its saves"
    assert editor.error is None, repr(editor.error)
    mem.notice([NOTE])     # the last hand save, if it is on disk and not yet a version

    on_disk = (ws / "memory" / NOTE).read_bytes()
    kept = _history_bytes(mem) | {hashlib.sha256(on_disk).hexdigest()}
    must_survive = editor.replaced_by_others + [editor.saves[-1]]
    lost = [s for s in must_survive if hashlib.sha256(s).hexdigest() not in kept]
    print(f"saves {len(editor.saves)}, replaced by the writer {len(editor.replaced_by_others)}, "
          f"writes {written}, conflicts {conflicts}, lost {len(lost)}")
    assert written > 0 and len(editor.saves) >= MIN_SAVES
    assert len(editor.replaced_by_others) >= MIN_RACES, "the race was never hit"
    assert lost == [], f"{len(lost)} hand saves were overwritten and never became a version"
