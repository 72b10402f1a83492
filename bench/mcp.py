"""Benchmark: what the MCP door costs over the same calls made in process.

1. memory_read of one note: round trip through MCP (the SDK's stdio_client + ClientSession
   driving `assistant mcp serve` as a subprocess: JSON-RPC over pipes, the server's worker
   thread, redaction, data markers) versus the in-process call on a session opened at the
   composition root (`session.memory.read`).
2. memory_write of a 1 KiB note with a standing grant (grants.json allows `bench/*`, so nothing
   is asked): through MCP versus in process (an unattended session, the same grant, the same
   confined, scanned, gated writer with history and audit).

p50 / p95 in milliseconds, and their ratios, side by side.

    python bench/mcp.py [--n 300] [--dir DIR]

--dir picks the filesystem for the workspace (fsync cost differs between tmpfs, ext4, overlay).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
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

from assistant.session import open_session  # noqa: E402
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="calls of each kind (default 300)")
    ap.add_argument("--dir", default=None, help="folder for the temporary workspace")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-mcp-", dir=args.dir))
    try:
        ws = tmp / "ws"
        init_workspace(ws, example=True)
        GrantStore(ws / "grants.json").add("memory", "bench/*", note="bench: a standing grant")
        local_reads, local_writes = in_process(ws, args.n)
        mcp_reads, mcp_writes, ready = anyio.run(through_mcp, ws, args.n)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"assistant mcp serve benchmark: n={args.n} calls of each kind; server start to initialized "
          f"{ready * 1e3:.0f} ms")
    print(f"{'call':<36} {'in-process p50/p95 ms':>22} {'MCP p50/p95 ms':>18} {'ratio p50/p95':>15}")
    for label, local, remote in (("memory_read (one note)", local_reads, mcp_reads),
                                 ("memory_write 1 KiB, standing grant", local_writes, mcp_writes)):
        l50, l95 = quantiles(local)
        m50, m95 = quantiles(remote)
        print(f"{label:<36} {l50:>10.2f} / {l95:<9.2f} {m50:>8.2f} / {m95:<7.2f} "
              f"{m50 / l50:>6.1f}x / {m95 / l95:.1f}x")


if __name__ == "__main__":
    main()
