"""Benchmark: sync between two devices through a bare repository on local disk (real git).

For N notes (default 10,000) on device A:
1. the first push (A: export every note and its history, sign, push);
2. the first pull on B (every note lands through B's gated writer);
3. a no-change sync (target under 1 s), on A and on B;
4. a one-note change each way (target under 2 s): A writes, A syncs, B syncs; then B to A;
5. a 100-note incoming batch: A writes 100 notes and syncs; B's sync is timed.
Each line prints the wall time, the time spent waiting for git, and the rest (our own checks:
history, the scanner, the gate, the writer), side by side. The session's opening (what
`assistant sync` pays before it starts: unlocking, hand-edit intake) is printed apart.

    python bench/sync.py [--notes 10000] [--dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from assistant.session import open_session  # noqa: E402
from assistant.sync.engine import Syncer, device_list, enrol, init_sync  # noqa: E402
from assistant.workspace.layout import init_workspace  # noqa: E402


def sync(ws: Path) -> tuple[float, float, float, object]:
    """(session open s, sync wall s, git s, report)."""
    t0 = time.perf_counter()
    with open_session(ws, "unattended", kind="sync", transcript=False) as s:
        t1 = time.perf_counter()
        report = Syncer(ws / "state", memory=s.memory, history=s.history, gate=s.policy_gate,
                        audit=s.policy_gate.audit, scanner=s.scanner, on_changed=s.index.note_changes).run()
        t2 = time.perf_counter()
    return t1 - t0, t2 - t1, report.git_seconds, report


def line(what: str, result: tuple[float, float, float, object], target: str = "") -> None:
    opened, wall, git, _ = result
    print(f"{what:<34} {wall * 1000:9.0f} ms   git {git * 1000:8.0f} ms   ours {(wall - git) * 1000:8.0f} ms"
          f"   (session open {opened * 1000:5.0f} ms){'   target ' + target if target else ''}", flush=True)


def write_notes(ws: Path, names: list[str], tag: str) -> None:
    """Notes written as a person's editor would (the session's intake records them)."""
    for name in names:
        path = ws / "memory" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ndescription: note {name} ({tag})\n---\n# {name}\n\n" + f"{tag} line\n" * 12)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--dir", default=None, help="where to make the workspaces (default: a temp folder)")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-sync-", dir=args.dir))
    try:
        remote = base / "remote.git"
        subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
        a, b = base / "a", base / "b"
        for ws, name in ((a, "A"), (b, "B")):
            init_workspace(ws)
            init_sync(ws / "state", str(remote), name)
        enrol(a / "state", "B", str(device_list(b / "state")[0]["key"]))
        enrol(b / "state", "A", str(device_list(a / "state")[0]["key"]))
        names = [f"topic{i // 100:03d}/note{i:05d}.md" for i in range(args.notes)]
        write_notes(a, names, "v1")
        print(f"{args.notes} notes, git {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}")
        line("first push (A)", sync(a))
        line("first pull (B)", sync(b))
        line("no-change sync (A, takes B's)", sync(a))
        line("no-change sync (A)", sync(a), "< 1 s")
        line("no-change sync (B)", sync(b), "< 1 s")
        write_notes(a, names[:1], "v2")
        line("one-note change: push (A)", sync(a), "< 2 s")
        line("one-note change: pull (B)", sync(b), "< 2 s")
        write_notes(b, names[1:2], "v3")
        line("one-note change: push (B)", sync(b), "< 2 s")
        line("one-note change: pull (A)", sync(a), "< 2 s")
        batch = [f"batch/note{i:03d}.md" for i in range(100)]
        write_notes(a, batch, "batch")
        line("100-note batch: push (A)", sync(a))
        result = sync(b)
        line("100-note batch: pull (B)", result)
        assert (b / "memory" / batch[-1]).exists() and (b / "memory" / names[0]).read_text().count("v2") == 13
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
