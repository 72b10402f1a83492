"""`assistant memory watch` calls a note replaced by a rename (how editors and sync clients save)
"modified", not "added"; a new note is "added" and a removed one "deleted" (issue 13 item 9)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from assistant.workspace.layout import init_workspace


def _watch(ws, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("ASSISTANT_WORKSPACE", "ASSISTANT_VAULT_PASSPHRASE")}
    env.update(HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path / "tmp"))
    return subprocess.Popen([sys.executable, "-m", "assistant", "-w", str(ws), "memory", "watch", "--timeout", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)


def _lines_until(proc, want: int, deadline: float) -> list[str]:
    out = []
    while len(out) < want and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        out.append(line.rstrip("\n"))
    return out


def test_rename_over_a_note_is_modified(tmp_path):
    ws = tmp_path / "ws"
    init_workspace(ws)
    (tmp_path / "tmp").mkdir()
    mem = ws / "memory"
    (mem / "people").mkdir(exist_ok=True)
    (mem / "people" / "lina.md").write_text("Lina likes tea.\n")
    proc = _watch(ws, tmp_path)
    try:
        assert "watching" in proc.stderr.readline()     # printed once the watches are in place
        # an editor's atomic save: a new file beside the note, renamed over it
        (mem / "people" / "lina.md.new").write_text("Lina likes green tea.\n")
        os.rename(mem / "people" / "lina.md.new", mem / "people" / "lina.md")
        lines = _lines_until(proc, 1, time.monotonic() + 10)
        assert lines == ["modified\tpeople/lina.md"], lines
        # a dot-leading temp renamed over a note (how the assistant itself writes)
        (mem / "people" / ".tmp-x").write_text("Lina likes black tea.\n")
        os.rename(mem / "people" / ".tmp-x", mem / "people" / "lina.md")
        assert _lines_until(proc, 1, time.monotonic() + 10) == ["modified\tpeople/lina.md"]
        # a new note is added; the same name renamed over again is then modified
        (mem / "marek.md").write_text("Marek.\n")
        assert _lines_until(proc, 1, time.monotonic() + 10) == ["added\tmarek.md"]
        (mem / ".tmp-y").write_text("Marek plays chess.\n")
        os.rename(mem / ".tmp-y", mem / "marek.md")
        assert _lines_until(proc, 1, time.monotonic() + 10) == ["modified\tmarek.md"]
        (mem / "marek.md").unlink()
        assert _lines_until(proc, 1, time.monotonic() + 10) == ["deleted\tmarek.md"]
    finally:
        proc.kill()
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()

