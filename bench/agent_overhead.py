"""Our own per-turn overhead in the agent loop, separately from model time.

One turn = user text redacted + prompt assembled + action parsed + one gated tool call
(memory_write in a watched session: gate ruling + audit line + confined atomic write, or
memory_read: confined read + redaction) + tool result redacted and wrapped + reply streamed
through the redacting SafeStream + transcript lines. The model is the scripted backend, and
the time spent inside `model.step` is measured and subtracted. Run with 10 and 10,000 notes
side by side (the catalog is built once per session, at start; it is shown separately).

    python bench/agent_overhead.py [--turns 40]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.session import open_session  # noqa: E402
from assistant.models.scripted import ScriptedModel  # noqa: E402
from assistant.workspace.layout import init_workspace, open_workspace  # noqa: E402


class TimedModel(ScriptedModel):
    def __init__(self, path):
        super().__init__(path)
        self.model_seconds = 0.0

    def step(self, *a, **kw):
        t = time.perf_counter()
        try:
            return super().step(*a, **kw)
        finally:
            self.model_seconds += time.perf_counter() - t


def run(n_notes: int, turns: int, tmp: Path) -> dict:
    ws_path = tmp / f"ws{n_notes}"
    init_workspace(ws_path)
    mem = ws_path / "memory" / "bulk"
    mem.mkdir()
    body = "---\ndescription: note {i} about something worth remembering\n---\n" + "text " * 200 + "\n"
    for i in range(n_notes):
        (mem / f"n{i:05d}.md").write_text(body.format(i=i))
    items = []
    for t in range(turns):
        if t % 2 == 0:
            items.append({"tool": "memory_write", "args": {"path": f"bench/t{t}.md",
                                                           "content": f"turn {t}: Sam prefers tea.\n"}})
        else:
            items.append({"tool": "memory_read", "args": {"path": "people/lina.md"}})
        items.append({"reply": "Done. " + "A reply of a few sentences, streamed to the terminal. " * 4})
    script = tmp / f"script{n_notes}.json"
    script.write_text(json.dumps(items))
    ws = open_workspace(ws_path)
    ws.config = ws.config.updated({"model": {"max_tokens": 1024}})
    parts = open_session(ws, "watched", kind="bench", interactive=False)
    model = TimedModel(script)
    t0 = time.perf_counter()
    agent = parts.new_agent(model)
    start_ms = (time.perf_counter() - t0) * 1000
    per_turn = []
    try:
        for t in range(turns):
            before_model = model.model_seconds
            t1 = time.perf_counter()
            res = agent.turn(f"turn {t}: please handle this")
            elapsed = time.perf_counter() - t1 - (model.model_seconds - before_model)
            assert res.outcome == "reply", res
            per_turn.append(elapsed * 1000)
    finally:
        parts.close()
    per_turn.sort()
    return {"notes": n_notes, "session_start_ms": start_ms, "median_ms": statistics.median(per_turn),
            "p95_ms": per_turn[int(0.95 * (len(per_turn) - 1))], "max_ms": per_turn[-1]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        rows = [run(n, args.turns, Path(d)) for n in (10, 10_000)]
    print(f"agent per-turn overhead (model time excluded), {args.turns} turns, one gated tool call per turn")
    print(f"{'notes':>8} {'session start (catalog)':>24} {'median/turn':>12} {'p95/turn':>10} {'max':>8}")
    for r in rows:
        print(f"{r['notes']:>8} {r['session_start_ms']:>21.1f} ms {r['median_ms']:>9.2f} ms "
              f"{r['p95_ms']:>7.2f} ms {r['max_ms']:>5.1f} ms")
    ratio = rows[1]["median_ms"] / rows[0]["median_ms"] if rows[0]["median_ms"] else float("nan")
    print(f"10,000 / 10 notes, median per turn: {ratio:.2f}x   (target: under 20 ms per turn)")


if __name__ == "__main__":
    main()
