"""Concurrent writers: 4 processes x 200 writes to 3 overlapping notes.

No torn note (every note on disk is exactly one complete write), every lost race is a refusal
the writer saw (Conflict), and the successful writes of each note form one unbroken chain
(each names the revision of the one before it): no update was silently lost.
"""

import hashlib
from pathlib import Path
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict

from assistant.notes.frontmatter import revision as keyed_revision
from assistant.secrets.revision_key import load_key


def revision(data, ws):
    """The keyed revision of `data` in workspace `ws` (issue 10: HMAC under state/revision.key)."""
    root = ws if isinstance(ws, Path) else ws.root
    return keyed_revision(data, load_key(root / "state"))
from assistant.workspace.layout import init_workspace, open_workspace

PROCS = 4
WRITES = 200
NOTES = ["shared/a.md", "shared/b.md", "shared/c.md"]

WORKER = r"""
import hashlib, json, os, sys
from assistant.secrets.scanner import Scanner
from assistant.memory import Conflict, Memory, NotFound
from assistant.workspace.layout import open_workspace
from policy.gate import Gate

ws_path, wid, writes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
notes = json.loads(sys.argv[4])
ws = open_workspace(ws_path)
scanner = Scanner({})
gate = Gate.for_workspace("watched", run_id=f"w{wid}", config=ws.config, grants_path=ws.grants_path,
                          approvals_dir=ws.approvals_dir, audit_path=ws.audit_path)
mem = Memory(ws, scanner, gate, lock_timeout=30)
import time
go = os.path.join(ws_path, "state", "go")
deadline = time.monotonic() + 30
while not os.path.exists(go) and time.monotonic() < deadline:   # start together
    time.sleep(0.005)
ok = conflicts = 0
errors = []
for i in range(writes):
    path = notes[(i + wid) % len(notes)]
    try:
        base = mem.read(path).revision
    except NotFound:
        base = None
    payload = f"writer {wid} write {i} " + ("x" * (wid * 37 + i % 50)) + "\n"
    body = "---\ndescription: shared note\n---\n" + payload * 40
    content = body + "check: " + hashlib.sha256(body.encode()).hexdigest() + "\n"
    try:
        mem.write(path, content, base=base)
        ok += 1
    except Conflict as exc:
        if "changed since you read it" not in str(exc) and "created by another writer" not in str(exc) \
                and "already exists" not in str(exc):
            errors.append("unexpected conflict text: " + str(exc))
        conflicts += 1
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
print(json.dumps({"ok": ok, "conflicts": conflicts, "errors": errors}))
"""


def test_four_processes_two_hundred_writes_each(tmp_path):
    init_workspace(tmp_path / "ws", example=True)
    ws = open_workspace(tmp_path / "ws")
    ws.ensure_state()
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(ws.root), str(w), str(WRITES), json.dumps(NOTES)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for w in range(PROCS)
    ]
    import time
    time.sleep(0.5)
    (ws.state_dir / "go").write_text("go")
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    for r in results:
        assert r["errors"] == []
        assert r["ok"] + r["conflicts"] == WRITES
    total_ok = sum(r["ok"] for r in results)
    total_conflicts = sum(r["conflicts"] for r in results)
    print(f"successes {total_ok}, refused races {total_conflicts}")
    assert total_ok > 0 and total_conflicts > 0     # there really was contention

    # no torn note: each is one complete, self-checking write
    for path in NOTES:
        text = (ws.memory_dir / path).read_text()
        body, _, check = text.rpartition("check: ")
        assert check == hashlib.sha256(body.encode()).hexdigest() + "\n", path

    # every success is audited once, and each note's successes form an unbroken chain
    lines = [json.loads(ln) for ln in ws.audit_path.read_text().splitlines()]
    written = [ln for ln in lines if ln["event"] == "written"]
    assert len(written) == total_ok
    chains = defaultdict(list)
    for ln in written:
        chains[ln["target"]].append(ln)
    for path, chain in chains.items():
        assert chain[0]["base"] is None and chain[0]["created"] is True
        for prev, cur in zip(chain, chain[1:]):
            assert cur["base"] == prev["revision"], path
        final = (ws.memory_dir / path).read_bytes()
        assert chain[-1]["revision"] == revision(final, ws)
    assert Counter(ln["run"] for ln in written) == Counter(
        {f"w{w}": r["ok"] for w, r in enumerate(results) if r["ok"]})
    # no temp file left behind
    leftovers = [n for _, _, fns in os.walk(ws.memory_dir) for n in fns if n.startswith(".")]
    assert leftovers == []


def _writer(ws_path: str, worker: int, n: int, q) -> None:
    from assistant.memory import Conflict, memory_read, memory_write

    seen_conflicts = 0
    for i in range(n):
        path = f"race/n{i % 2}.md"
        try:
            rev = memory_read(path, workspace=ws_path).revision
        except FileNotFoundError:
            rev = None
        try:
            memory_write(path, f"w{worker} i{i}\n" * 20, base=rev, workspace=ws_path)
        except Conflict:
            seen_conflicts += 1
        except Exception as exc:  # a lost creation race is a refusal too
            assert "exists" in str(exc) or "meanwhile" in str(exc), exc
            seen_conflicts += 1
    q.put(seen_conflicts)


# acceptance (issue 5: memory), written from the words
def test_concurrent_writers_no_torn_note(vault_ws):
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(vault_ws), w, 25, q)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    for k in (0, 1):
        text = (vault_ws / f"memory/race/n{k}.md").read_text()
        lines = text.splitlines()
        assert len(lines) == 20 and len(set(lines)) == 1, text
