"""Issue 23 item 5: a symbolic link planted at any level of state/ or history/ is refused, with
the fix, and never followed: nothing is written (nor created, nor removed) where it points.
Real workspaces and real symlinks in tmp_path; each writer of state/ and history/ is reached
through the door a person uses (the CLI), and each one's own entry point is tried directly."""

import os
import shutil

import pytest
from click.testing import CliRunner

from assistant.cli import main
from assistant.notes.history import History, HistoryError
from assistant.records.transcript import Transcript
from assistant.recall.index import Index, IndexUnavailable
from assistant.secrets.revision_key import RevisionKeyError, load_key
from assistant.workspace.layout import open_workspace
from policy.approvals import Inbox, InboxError
from policy.fileio import FileLock, LinkedFolder, LockTimeout, open_folder

LEVELS = ["state", "state/transcripts", "state/approvals", "history", "history/objects"]


def _plant(ws, rel, tmp_path):
    """Replace the folder ws/rel with a link to an empty folder outside the workspace."""
    outside = tmp_path / ("outside-" + rel.replace("/", "-"))
    outside.mkdir()
    target = ws / rel
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, target)
    return outside


def _everything_under(folder):
    return sorted(os.path.relpath(os.path.join(d, n), folder) for d, ds, fs in os.walk(folder) for n in ds + fs)


@pytest.mark.parametrize("rel", LEVELS)
def test_a_memory_write_refuses_a_linked_private_folder_with_the_fix(ws, tmp_path, rel):
    # the session's first steps make state/ and history/: open it once so every level exists
    assert CliRunner().invoke(main, ["-w", str(ws), "memory", "ls"]).exit_code == 0
    outside = _plant(ws, rel, tmp_path)
    r = CliRunner().invoke(main, ["-w", str(ws), "memory", "write", "people/ana.md"], input="Ana keeps bees.\n")
    assert r.exit_code != 0, r.output
    assert f"{rel} is a symbolic link" in r.stderr
    assert f"rm {ws / rel}" in r.stderr
    assert _everything_under(outside) == []
    assert os.path.islink(ws / rel)
    assert not (ws / "memory/people/ana.md").exists()


def test_the_transcript_refuses_a_linked_state_or_transcripts_folder(ws, tmp_path):
    outside = _plant(ws, "state/transcripts", tmp_path)
    with pytest.raises(LinkedFolder, match="state/transcripts is a symbolic link.*remove it"):
        Transcript(ws / "state/transcripts", "s1", None)
    shutil.rmtree(ws / "state", ignore_errors=True)
    os.unlink(ws / "state") if os.path.islink(ws / "state") else None
    outside_state = _plant(ws, "state", tmp_path)
    with pytest.raises(LinkedFolder, match="state is a symbolic link"):
        Transcript(ws / "state/transcripts", "s1", None)
    assert _everything_under(outside) == [] and _everything_under(outside_state) == []


def test_the_inbox_refuses_a_linked_state_folder(ws, tmp_path):
    open_workspace(ws).ensure_state()
    outside = _plant(ws, "state", tmp_path)
    (outside / "approvals").mkdir()       # what the link points at looks like an inbox
    inbox = Inbox(ws / "state/approvals")
    with pytest.raises(InboxError, match="state is a symbolic link"):
        inbox.create(run_id="r", kind="memory", target="a.md", summary="s", reason="r", sha256="0" * 64,
                     content="x", current=None, content_exact=True, offers=(), timeout=10)
    assert _everything_under(outside) == ["approvals"]


def test_keys_locks_index_and_history_refuse_a_linked_state_or_history(ws, tmp_path):
    outside = _plant(ws, "state", tmp_path)
    with pytest.raises(RevisionKeyError, match="state is a symbolic link"):
        load_key(ws / "state")
    with pytest.raises(LockTimeout, match="state is a symbolic link"):
        FileLock("state/memory.lock", beneath=ws).acquire()
    index = Index(ws / "state", ws / "memory", ws / "state/transcripts")
    with pytest.raises(IndexUnavailable, match="state is a symbolic link"):
        index.search("bees")
    index.close()
    assert _everything_under(outside) == []
    hist_outside = _plant(ws, "history", tmp_path)
    with pytest.raises(HistoryError, match="history is a symbolic link"):
        History(ws / "history", revision=lambda b: "r").ensure()
    assert _everything_under(hist_outside) == []


def test_a_file_where_a_private_folder_belongs_is_refused_with_the_fix(ws):
    (ws / "state").mkdir(exist_ok=True)
    shutil.rmtree(ws / "state")
    (ws / "state").write_text("not a folder\n")
    with pytest.raises(LinkedFolder, match=r"state is a regular file, not a folder: move it aside \(mv "):
        os.close(open_folder(ws, "state/transcripts", create=True))
