"""The memory watcher: notes written, hand-edited or removed show up; temp files never do."""

import os
import threading

from assistant.notes.watch import MemoryWatcher, NoteChange, note_relpath, watch_notes
import subprocess
import time
from acceptance_support import ASSISTANT, _env
import json


def wait_for(w, paths, timeout=5.0):
    seen = {}
    deadline = __import__("time").monotonic() + timeout
    while not set(paths) <= set(seen):
        left = deadline - __import__("time").monotonic()
        if left <= 0:
            break
        w.wait(left)
        for c in w.drain():
            seen[c.path] = c.kind
    return seen


def test_reports_note_changes_and_ignores_temp_files(tmp_path):
    mem = tmp_path / "memory"
    (mem / "people").mkdir(parents=True)
    (mem / "old.md").write_text("old\n")
    with MemoryWatcher(mem) as w:
        (mem / ".tmp-abc123").write_text("temp")
        (mem / "people" / ".lina.md.swp").write_text("swap")
        (mem / "not-a-note.txt").write_text("x")
        # an atomic write the way Root does it: dot-leading temp, then rename
        (mem / "people" / ".tmp-1").write_text("new\n")
        os.rename(mem / "people" / ".tmp-1", mem / "people" / "lina.md")
        (mem / "old.md").write_text("hand edited\n")
        seen = wait_for(w, {"people/lina.md", "old.md"})
        assert set(seen) == {"people/lina.md", "old.md"}
        (mem / "old.md").unlink()
        seen = wait_for(w, {"old.md"})
        assert seen == {"old.md": "deleted"}
        assert w.drain() == []


def test_note_relpath_filter(tmp_path):
    mem = tmp_path / "m"
    assert note_relpath(mem, str(mem / "a" / "b.md")) == "a/b.md"
    assert note_relpath(mem, str(mem / ".git" / "b.md")) is None
    assert note_relpath(mem, str(mem / "a" / ".b.md")) is None
    assert note_relpath(mem, str(mem / "a.txt")) is None
    assert note_relpath(mem, str(tmp_path / "other.md")) is None


def test_watch_notes_generator_stops_on_event(tmp_path):
    mem = tmp_path / "memory"
    mem.mkdir()
    stop = threading.Event()
    got = []

    def run():
        for batch in watch_notes(mem, stop_event=stop):
            got.extend(batch)
            stop.set()

    t = threading.Thread(target=run)
    t.start()
    import time
    deadline = time.monotonic() + 5
    while not got and time.monotonic() < deadline:
        (mem / "x.md").write_text(str(time.monotonic()))
        time.sleep(0.1)
    stop.set()
    t.join(5)
    assert not t.is_alive()
    assert NoteChange("x.md", "added") in got or NoteChange("x.md", "modified") in got


def test_watcher_sees_memory_writes_and_hand_edits(tmp_path):
    from assistant.secrets.scanner import Scanner
    from assistant.memory import Memory
    from assistant.workspace.layout import init_workspace, open_workspace
    from policy.gate import Gate

    init_workspace(tmp_path / "ws", example=True)
    ws = open_workspace(tmp_path / "ws")
    ws.ensure_state()
    gate = Gate.for_workspace("watched", run_id="t", config=ws.config, grants_path=ws.grants_path,
                              approvals_dir=ws.approvals_dir, audit_path=ws.audit_path)
    mem = Memory(ws, Scanner({}), gate)
    with MemoryWatcher(ws.memory_dir) as w:
        mem.write("people/anna.md", "Anna keeps bees.\n")
        (ws.memory_dir / "people" / "lina.md").write_text("hand edited\n")
        mem.remove("people/marek.md")
        seen = wait_for(w, {"people/anna.md", "people/lina.md", "people/marek.md"})
    assert set(seen) == {"people/anna.md", "people/lina.md", "people/marek.md"}
    assert seen["people/marek.md"] == "deleted"


# acceptance (issue 5: memory), written from the words
def test_memory_watch_prints_changes(vault_ws):
    e = dict(os.environ)
    e.update(_env(vault_ws))
    proc = subprocess.Popen([str(ASSISTANT), "memory", "watch"], env=e, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        out = []
        reader = threading.Thread(target=lambda: out.extend(iter(proc.stdout.readline, "")),
                                  daemon=True)
        reader.start()
        deadline = time.time() + 15
        while time.time() < deadline and "watched.md" not in "".join(out):
            (vault_ws / "memory" / "watched.md").write_text(f"edit {time.time()}\n")
            time.sleep(0.5)
        assert "watched.md" in "".join(out)
    finally:
        proc.terminate()
        proc.wait(10)


GH_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


REVIEW_LONG = "Zq8#pL2!vN7xR4tWsecretvalue123456"


# review (secrets): 7. `memory watch` printed note names unredacted
def test_memory_watch_redacts_a_secret_in_a_note_name(tmp_path):
    import os
    import subprocess
    import sys

    from assistant.secrets.vault import Vault
    from assistant.workspace.layout import init_workspace

    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    Vault.create(ws / "vault.enc", "pw-for-tests", opslimit=1, memlimit=8 * 1024).set("k", REVIEW_LONG)
    env = {**os.environ, "ASSISTANT_VAULT_PASSPHRASE": "pw-for-tests"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant", "-w", str(ws), "memory", "watch", "--json", "--timeout", "90"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # the watcher may start after a first write (a loaded machine): write again until it reports
        # one, within a bound, rather than guessing how long start-up takes
        import select
        line, deadline, n = "", time.monotonic() + 60, 0
        while not line and time.monotonic() < deadline and proc.poll() is None:
            n += 1
            (ws / "memory" / f"creds {GH_TOKEN}.md").write_text(f"x {n}\n")
            if select.select([proc.stdout], [], [], 0.5)[0]:
                line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.poll() is not None else "no change reported in 60 s"
        change = json.loads(line)
        assert GH_TOKEN not in change["path"] and change["path"] == "creds [redacted:github-token].md"
    finally:
        proc.kill()
        proc.wait()
