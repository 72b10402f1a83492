"""Benchmark: what history and the hash-chained audit log cost.

1. A memory write (Memory.write of a 1 KiB note, watched session, the real gate, scanner and
   confined writer) with history versus the same writer with history switched off
   (target: at most 1.5x).
2. `assistant memory log PATH` for a note with 10,000 versions (target: under 200 ms): the
   history read alone, the command in process, and the command as a fresh process.
3. Disk use per version (object file + log line) for 1 KiB notes.
4. `assistant audit verify` on an intact log of 100,000 lines (target: well under a second),
   and the cost of one chained audit append.

    python bench/history.py [--n 300] [--versions 10000] [--audit-lines 100000] [--dir DIR] [--parts 1234]

--dir picks the filesystem (fsync cost differs a lot between tmpfs, ext4 and overlay).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from assistant.notes.history import History, Origin  # noqa: E402
from assistant.notes.frontmatter import revision as keyed_revision  # noqa: E402

BENCH_KEY = b"bench-revision-key-32-bytes-long"


def revision(data: bytes) -> str:
    return keyed_revision(data, BENCH_KEY)
from assistant.session import open_session  # noqa: E402
from assistant.workspace.layout import init_workspace  # noqa: E402
from policy.audit import ZERO, AuditLog, Head, _write_head, head_path, line_hash, verify  # noqa: E402


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


class Clock:
    """Wall and CPU time of a block (CPU time is what the work costs when other processes
    compete for the cores; wall time is what a person waits)."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __enter__(self) -> "Clock":
        self._w, self._c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall.append(time.perf_counter() - self._w)
        self.cpu.append(time.process_time() - self._c)

    def ms(self) -> str:
        return f"{median_us(self.wall) / 1000:6.1f} ms wall / {median_us(self.cpu) / 1000:6.1f} ms cpu"


def bench_writes(base: str, n: int) -> None:
    ws = os.path.join(base, "ws-writes")
    init_workspace(ws)
    body = b"x" * 1000
    results: dict[str, list[float]] = {"without history": [], "with history": []}
    cpu: dict[str, list[float]] = {"without history": [], "with history": []}
    with open_session(ws, "watched", kind="bench", transcript=False) as s:
        mem = s.memory
        keep = mem.history
        # interleaved, alternating which goes first: load on a shared machine drifts
        for i in range(n + 20):
            order = (("without history", None), ("with history", keep))
            for label, hist in order if i % 2 else order[::-1]:
                mem.history = hist
                data = b"%s %d %d\n" % (label.encode(), i, time.time_ns()) + body
                t, c = time.perf_counter(), time.process_time()
                # Each variant writes its own 20 notes: a note last written with history off
                # would be a hand edit to the history-keeping writer, which then records an
                # extra version (the "with" and "without" writes once shared their notes).
                name = "hist" if hist is not None else "plain"
                mem.write(f"bench/{name}-{i % 20}.md", data, force=True, origin=Origin("assistant"))
                if i >= 20:     # the first 20 create the notes and warm up
                    results[label].append(time.perf_counter() - t)
                    cpu[label].append(time.process_time() - c)
        mem.history = keep
    a, b = median_us(results["without history"]), median_us(results["with history"])
    print(f"1. memory write of a 1 KiB note, median of {n} (fs of {base}):")
    ca, cb = median_us(cpu["without history"]), median_us(cpu["with history"])
    print(f"   wall: without history {a:8.0f} us   with history {b:8.0f} us   ratio {b / a:5.2f}x  (target <= 1.5x)")
    print(f"   cpu:  without history {ca:8.0f} us   with history {cb:8.0f} us   ratio {cb / ca:5.2f}x")


def bench_log(base: str, versions: int) -> None:
    ws = os.path.join(base, "ws-log")
    init_workspace(ws)
    with open_session(ws, "watched", kind="bench", transcript=False):
        pass
    h = History(os.path.join(ws, "history"), revision=revision)
    batch = []
    t0 = time.perf_counter()
    for i in range(versions):
        data = b"---\ndescription: version %d\n---\n" % i + b"y" * 1000 + b"\n"
        v = h.make_version("busy.md", data, Origin("assistant" if i % 2 else "person", model="m",
                                                   sources=("web:example.org",)), run="run-bench")
        batch.append((v, data))
        if len(batch) == 500:
            h.record_many(batch)
            batch = []
    if batch:
        h.record_many(batch)
    os.makedirs(os.path.join(ws, "memory"), exist_ok=True)
    with open(os.path.join(ws, "memory", "busy.md"), "wb") as f:
        f.write(h.object_bytes(h.head("busy.md").sha256))
    with open_session(ws, "watched", kind="bench", transcript=False):
        pass   # the note on disk is now seen: the log command records nothing
    build = time.perf_counter() - t0

    reads = Clock()
    for _ in range(5):
        with reads:
            got = History(os.path.join(ws, "history"), revision=revision).versions("busy.md")
    assert len(got) == versions

    from click.testing import CliRunner

    from assistant.cli import main

    inproc, text, ls = Clock(), Clock(), Clock()
    for _ in range(5):
        with inproc:
            r = CliRunner().invoke(main, ["-w", ws, "memory", "log", "busy.md", "--json"])
        assert r.exit_code == 0 and len(json.loads(r.stdout)) == versions, r.output[-500:]
        with text:
            CliRunner().invoke(main, ["-w", ws, "memory", "log", "busy.md"])
        with ls:
            CliRunner().invoke(main, ["-w", ws, "memory", "ls"])
    procs = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "assistant", "-w", ws, "memory", "log", "busy.md"],
                       stdout=subprocess.DEVNULL, check=True)
        procs.append(time.perf_counter() - t)
    print(f"2. memory log for a note with {versions} versions (built in {build:.1f} s), medians:")
    print(f"   history read alone      {reads.ms()}")
    print(f"   memory log --json       {inproc.ms()}   (target < 200 ms)")
    print(f"   memory log (text)       {text.ms()}")
    print(f"   memory ls, for scale    {ls.ms()}   (the same session opening, no history read)")
    print(f"   memory log, new process {median_us(procs) / 1000:6.1f} ms wall (interpreter start and imports included)")

    objects, obj_bytes = h.disk_usage()
    log_bytes = os.path.getsize(os.path.join(ws, "history", "log.jsonl"))
    apparent = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(ws, "history", "objects"))
                   for f in fs)
    print(f"3. disk per version (1 KiB notes, {objects} objects): object {obj_bytes / objects:6.0f} bytes on disk "
          f"({apparent / objects:.0f} apparent) + log line {log_bytes / versions:4.0f} bytes "
          f"= {(obj_bytes + log_bytes) / versions:6.0f} bytes per version")


def synth_audit(path: str, lines: int) -> None:
    """A chained log written in the format AuditLog.append writes (verify must say intact)."""
    prev = ZERO
    out = []
    size = 0
    for i in range(1, lines + 1):
        rest = json.dumps({"time": "2026-12-01T00:00:00.000Z", "event": "ruling", "run": "run-bench",
                           "mode": "unattended", "kind": "memory", "target": f"people/p{i % 97}.md",
                           "verdict": "allow", "reason": "granted: memory people/*",
                           "sha256": hashlib.sha256(b"%d" % i).hexdigest()}, ensure_ascii=False)
        line = (f'{{"seq":{i},"prev":"{prev}",' + rest[1:]).encode()
        prev = line_hash(line)
        out.append(line + b"\n")
        size += len(line) + 1
    with open(path, "wb") as f:
        f.write(b"".join(out))
    _write_head(head_path(path), Head(lines, prev, size, 1))


def bench_audit(base: str, lines: int) -> None:
    d = os.path.join(base, "audit")
    os.makedirs(d)
    path = os.path.join(d, "audit.jsonl")
    synth_audit(path, lines)
    clock = Clock()
    for _ in range(5):
        with clock:
            v = verify(path)
        assert v.intact and v.lines == lines, v
    log = AuditLog(os.path.join(d, "live.jsonl"))
    appends = []
    for i in range(2000):
        t = time.perf_counter()
        log.append({"event": "ruling", "kind": "memory", "target": f"n{i}.md", "verdict": "allow"})
        appends.append(time.perf_counter() - t)
    assert verify(os.path.join(d, "live.jsonl")).intact
    size = os.path.getsize(path)
    print(f"4. audit verify of an intact {lines}-line log ({size / 1e6:.1f} MB): {clock.ms()} "
          f"(target well under 1000 ms); one chained append {median_us(appends):5.0f} us wall")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--versions", type=int, default=10_000)
    ap.add_argument("--audit-lines", type=int, default=100_000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--parts", default="1234", help="which parts to run (default 1234: all)")
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="bench-history-", dir=args.dir)
    try:
        if "1" in args.parts:
            bench_writes(base, args.n)
        if "2" in args.parts or "3" in args.parts:
            bench_log(base, args.versions)
        if "4" in args.parts:
            bench_audit(base, args.audit_lines)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
