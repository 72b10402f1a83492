"""Benchmark: what the MCP door costs over the same calls made in process.

1. memory_read of one note: round trip through MCP (the SDK's stdio_client + ClientSession
   driving `assistant mcp serve` as a subprocess: JSON-RPC over pipes, the server's worker
   thread, redaction, data markers) versus the in-process call on a session opened at the
   composition root (`session.memory.read`).
2. memory_write of a 1 KiB note with a standing grant (grants.json allows `bench/*`, so nothing
   is asked): through MCP versus in process (an unattended session, the same grant, the same
   confined, scanned, gated writer with history and audit).

3. memory_search at --notes notes (default 10,000): --queries distinct queries (default 200),
   with a hand edit (a file written straight into memory/, as an editor saves) before every
   10th query, which that query must find (asserted: the edited note is among its hits). The
   in-process side is the same call on a session fed by the same watcher the server runs
   (assistant.notes.watch.MemoryWatcher, its reports taken in by a thread as the server's are:
   only reported notes are re-read). After each hand
   edit the bench waits --settle seconds (default 0.25, untimed) before the query: the watcher
   reports a change once the folder has been quiet for its debounce (50 ms), and a person's
   save and their client's next call are further apart than that. Each side first runs 20
   other queries, untimed (a cold page cache makes the first few slow). Target: MCP p95 <= 15 ms
   and <= 1.5x the in-process p95.

p50 / p95 in milliseconds, and their ratios, side by side.

    python bench/mcp.py [--n 300] [--notes 10000] [--queries 200] [--dir DIR]

--dir picks the filesystem for the workspace (fsync cost differs between tmpfs, ext4, overlay).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

# This file is bench/mcp.py: its own folder (sys.path[0] when run as a script) would shadow the
# SDK's `mcp` package. Take it off the path; put the project root on it instead.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.insert(0, os.path.join(_HERE, ".."))

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from assistant.notes.watch import MemoryWatcher  # noqa: E402
from assistant.session import open_session  # noqa: E402
from assistant.tools.memory import run_memory_search  # noqa: E402
from assistant.workspace.layout import init_workspace  # noqa: E402
from policy.grants import GrantStore  # noqa: E402

NOTE = "people/lina.md"


def quantiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p95) in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return statistics.median(ordered) * 1e3, p95 * 1e3


def content(i: int) -> str:
    body = f"Benchmark note {i}. " + ("Lorem ipsum dolor sit amet, consectetur adipiscing. " * 20)
    return f"---\ndescription: bench {i}\n---\n{body[:1000]}\n"


def in_process(ws: Path, n: int) -> tuple[list[float], list[float]]:
    reads: list[float] = []
    writes: list[float] = []
    with open_session(ws, "unattended", kind="api", transcript=False) as session:
        session.memory.read(NOTE)          # warm: revision key, scanner
        for _ in range(n):
            t = time.perf_counter()
            session.memory.read(NOTE)
            reads.append(time.perf_counter() - t)
        for i in range(n):
            t = time.perf_counter()
            session.memory.write(f"bench/inproc-{i}.md", content(i))
            writes.append(time.perf_counter() - t)
    return reads, writes


async def through_mcp(ws: Path, n: int) -> tuple[list[float], list[float], float]:
    reads: list[float] = []
    writes: list[float] = []
    params = StdioServerParameters(command=sys.executable, args=["-m", "assistant", "-w", str(ws), "mcp", "serve"],
                                   env={k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")})
    started = time.perf_counter()
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                ready = time.perf_counter() - started
                await s.call_tool("memory_read", {"path": NOTE})     # warm
                for _ in range(n):
                    t = time.perf_counter()
                    r = await s.call_tool("memory_read", {"path": NOTE})
                    reads.append(time.perf_counter() - t)
                    assert not r.isError
                for i in range(n):
                    t = time.perf_counter()
                    r = await s.call_tool("memory_write", {"path": f"bench/mcp-{i}.md", "content": content(i)})
                    writes.append(time.perf_counter() - t)
                    assert not r.isError, r.content
    return reads, writes, ready


SEARCH_DIR = "corpus"
SEARCH_LIMIT = 5
WARM = 20


def vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    """Made-up words (letters only, so each is one index token), distinct."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(5, 9))))
    return sorted(words)


def write_corpus(ws: Path, notes: int, rng: random.Random, words: list[str]) -> list[str]:
    """`notes` notes of ~80 words each (Zipf-like word use), straight onto disk; their paths."""
    weights = [1.0 / (r + 1) for r in range(len(words))]
    paths = []
    for i in range(notes):
        rel = f"{SEARCH_DIR}/{i // 500:02d}/note-{i:05d}.md"
        body = " ".join(rng.choices(words, weights, k=80))
        target = ws / "memory" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"---\ndescription: {' '.join(rng.sample(words[:800], 4))}\n---\n{body}\n")
        paths.append(rel)
    return paths


def search_plan(rng: random.Random, words: list[str], paths: list[str], queries: int,
                marker: str) -> list[tuple[str, tuple[str, str] | None]]:
    """(query, hand edit or None) per query: distinct queries of 1-3 words; before every 10th, a
    hand edit (path, a new word put in it) which that query searches for."""
    plan: list[tuple[str, tuple[str, str] | None]] = []
    seen: set[str] = set()
    while len(plan) < queries:
        n = len(plan)
        if n % 10 == 9:
            word = f"{marker}{''.join(rng.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(8))}"
            plan.append((word, (rng.choice(paths), word)))
            continue
        q = " ".join(rng.sample(words[50:], rng.randint(1, 3)))
        if q not in seen:
            seen.add(q)
            plan.append((q, None))
    return plan


def hand_edit(ws: Path, edit: tuple[str, str]) -> None:
    """What an editor's save does: the note rewritten in place, with one new sentence."""
    rel, word = edit
    target = ws / "memory" / rel
    target.write_text(target.read_text() + f"\nAdded by hand: {word}.\n")


def found(text: str, rel: str) -> bool:
    return f"- {rel} [note" in text


def search_in_process(ws: Path, plan: list, warm: list[str], settle: float) -> list[float]:
    samples: list[float] = []
    stop = threading.Event()
    with open_session(ws, "unattended", kind="api", transcript=False) as session, \
            MemoryWatcher(ws / "memory") as watcher:
        session.index.sync(conversations=False)     # what the server does as it starts
        session.notice_hand_edits(watcher)          # ... and from then on the index trusts the watcher

        def intake() -> None:                       # the server's hand-edit intake, in a thread of its own
            while not stop.is_set():
                if watcher.wait(0.5):
                    session.notice_hand_edits(watcher)
        taker = threading.Thread(target=intake, daemon=True)
        taker.start()
        try:
            for query in warm:
                run_memory_search({"query": query, "limit": SEARCH_LIMIT}, session.ctx)
            for query, edit in plan:
                if edit is not None:
                    hand_edit(ws, edit)
                    time.sleep(settle)
                t = time.perf_counter()
                out = run_memory_search({"query": query, "limit": SEARCH_LIMIT}, session.ctx)
                samples.append(time.perf_counter() - t)
                assert edit is None or found(out, edit[0]), f"in process: the hand edit of {edit[0]} was not found"
        finally:
            stop.set()
            taker.join(5.0)
    return samples


async def search_through_mcp(ws: Path, plan: list, warm: list[str], settle: float) -> list[float]:
    samples: list[float] = []
    params = StdioServerParameters(command=sys.executable, args=["-m", "assistant", "-w", str(ws), "mcp", "serve"],
                                   env={k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")})
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                for query in warm:
                    await s.call_tool("memory_search", {"query": query, "limit": SEARCH_LIMIT})
                for query, edit in plan:
                    if edit is not None:
                        hand_edit(ws, edit)
                        await anyio.sleep(settle)
                    t = time.perf_counter()
                    r = await s.call_tool("memory_search", {"query": query, "limit": SEARCH_LIMIT})
                    samples.append(time.perf_counter() - t)
                    assert not r.isError, r.content
                    text = r.content[0].text
                    assert edit is None or found(text, edit[0]), f"MCP: the hand edit of {edit[0]} was not found"
    return samples


def search_case(tmp: Path, notes: int, queries: int, settle: float) -> tuple[list[float], list[float], float]:
    """(in-process samples, MCP samples, seconds to write and first index the corpus)."""
    ws = tmp / "ws-search"
    init_workspace(ws, example=True)
    rng = random.Random(23)
    words = vocabulary(rng)
    started = time.perf_counter()
    paths = write_corpus(ws, notes, rng, words)
    with open_session(ws, "unattended", kind="api", transcript=False) as session:
        session.index.sync(conversations=False)
    built = time.perf_counter() - started
    # untimed warm-up: WARM distinct queries of their own fill the index's page cache
    warm = [" ".join(rng.sample(words[50:], 2)) for _ in range(WARM)]
    local = search_in_process(ws, search_plan(rng, words, paths, queries, "zzlocal"), warm, settle)
    remote = anyio.run(search_through_mcp, ws, search_plan(rng, words, paths, queries, "zzmcp"), warm, settle)
    return local, remote, built


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="calls of each kind (default 300)")
    ap.add_argument("--dir", default=None, help="folder for the temporary workspace")
    ap.add_argument("--notes", type=int, default=10_000, help="notes for the search case (default 10000)")
    ap.add_argument("--queries", type=int, default=200, help="distinct memory_search queries (default 200)")
    ap.add_argument("--settle", type=float, default=0.25,
                    help="seconds between a hand edit and the query that must find it (default 0.25, untimed)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-mcp-", dir=args.dir))
    try:
        ws = tmp / "ws"
        init_workspace(ws, example=True)
        GrantStore(ws / "grants.json").add("memory", "bench/*", note="bench: a standing grant")
        local_reads, local_writes = in_process(ws, args.n)
        mcp_reads, mcp_writes, ready = anyio.run(through_mcp, ws, args.n)
        local_search, mcp_search, built = search_case(tmp, args.notes, args.queries, args.settle)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"assistant mcp serve benchmark: n={args.n} calls of each kind; server start to initialized "
          f"{ready * 1e3:.0f} ms; search corpus of {args.notes} notes written and indexed in {built:.1f} s; "
          f"{args.queries} distinct queries, a hand edit before every 10th (found by it: asserted)")
    print(f"{'call':<36} {'in-process p50/p95 ms':>22} {'MCP p50/p95 ms':>18} {'ratio p50/p95':>15}")
    search_label = f"memory_search at {args.notes} notes"
    for label, local, remote in (("memory_read (one note)", local_reads, mcp_reads),
                                 ("memory_write 1 KiB, standing grant", local_writes, mcp_writes),
                                 (search_label, local_search, mcp_search)):
        l50, l95 = quantiles(local)
        m50, m95 = quantiles(remote)
        print(f"{label:<36} {l50:>10.2f} / {l95:<9.2f} {m50:>8.2f} / {m95:<7.2f} "
              f"{m50 / l50:>6.1f}x / {m95 / l95:.1f}x")
    l50, l95 = quantiles(local_search)
    m50, m95 = quantiles(mcp_search)
    verdict = "met" if m95 <= 15.0 and m95 <= 1.5 * l95 else "NOT met"
    print(f"target for {search_label}: MCP p95 <= 15 ms and <= 1.5x in-process p95: {verdict} "
          f"(MCP p95 {m95:.2f} ms, {m95 / l95:.2f}x)")


if __name__ == "__main__":
    main()
