"""The temp sweep at session start takes only the assistant's own leftovers (issue 10 item 14).

A person's `.tmp-*` file in files/ (an editor's, a build's) survives however old it is; a temp
file of the project's exact pattern left by a killed writer is removed."""

import os
import time

from assistant.session import open_session
from assistant.workspace.layout import init_workspace, open_workspace
from policy.fileio import temp_name


def _old(path):
    t = time.time() - 3 * 86400
    os.utime(path, (t, t))


def test_session_start_keeps_the_persons_tmp_file_and_sweeps_ours(tmp_path):
    root = tmp_path / "ws"
    init_workspace(root, example=True)
    draft = root / "files" / "thesis" / "build" / ".tmp-chapter3-draft.tex"
    draft.parent.mkdir(parents=True)
    draft.write_text("\\chapter{Three}\n")
    draft.chmod(0o600)            # even private and old, it is not ours: not our name pattern
    _old(draft)
    lookalike = root / "files" / "thesis" / ".tmp-0123456789abcdef"   # the old pattern, a person's now
    lookalike.write_text("keep")
    lookalike.chmod(0o600)
    _old(lookalike)
    ours = root / "files" / "thesis" / "build" / temp_name()
    ours.write_bytes(b"half a file")
    ours.chmod(0o600)
    _old(ours)
    copied = root / "files" / temp_name()   # our pattern, but copied in by a person (0o644): kept
    copied.write_bytes(b"synced from elsewhere")
    copied.chmod(0o644)
    _old(copied)
    note_tmp = root / "memory" / "people" / temp_name()
    note_tmp.write_bytes(b"half a note")
    note_tmp.chmod(0o600)
    _old(note_tmp)

    session = open_session(open_workspace(root), "watched", kind="test", interactive=False)
    session.close()

    assert draft.read_text() == "\\chapter{Three}\n"
    assert lookalike.read_text() == "keep" and copied.exists()
    assert not ours.exists() and not note_tmp.exists()
