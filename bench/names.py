"""What one-spelling-per-name costs: `names.spelling_clash` (run before every note or file read
and write) against a bare `os.listdir` of the same folder, for 10, 1,000 and 10,000 entries in
one flat folder (the worst case: the check lists each folder on the path once).

    python bench/names.py [--calls 50]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.confine import Root  # noqa: E402
from assistant.notes.names import spelling_clash  # noqa: E402


def per_call(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=50)
    calls = ap.parse_args().calls
    print(f"spelling_clash per call vs os.listdir of the folder ({calls} calls each)")
    print(f"{'entries':>8} {'spelling_clash':>15} {'os.listdir':>11} {'ratio':>6}")
    for n in (10, 1000, 10000):
        with tempfile.TemporaryDirectory() as d:
            for i in range(n):
                open(os.path.join(d, f"note-{i:05d}.md"), "w").close()
            with Root(d) as root:
                ours = per_call(lambda: spelling_clash(root, "people/note-00001.md"), calls)
                bare = per_call(lambda: os.listdir(d), calls)
            print(f"{n:>8} {ours:>12.3f} ms {bare:>8.3f} ms {ours / bare:>5.2f}x")


if __name__ == "__main__":
    main()
