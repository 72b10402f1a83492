"""What a proposed write's diff costs a person waiting for the approval page or `approvals show`
(issue 23 item 9): difflib's unbounded unified diff (before) against the bounded one
(assistant.display.terminal.unified_diff, after) for pathological pairs: many lines each repeated
just below difflib's autojunk threshold, in a different order in the two texts; and a pair of
totally different texts at the line-pair bound. The last columns lift the line-pair bound, to
show where the time bound alone stops the matching.

    python bench/diff.py [--lines 2000 4000 6000] [--no-before]
"""

from __future__ import annotations

import argparse
import difflib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.display.terminal import DIFF_SECONDS, MAX_DIFF_LINE_PAIRS, unified_diff  # noqa: E402


def pathological(n: int) -> tuple[str, str]:
    """Two texts of n lines over 150 distinct lines (each repeated n/150 times: under the
    autojunk threshold of n/100), permuted: difflib's matching is about n**2.5 here."""
    old = "".join(f"l{i % 150}\n" for i in range(n))
    new = "".join(f"l{(i * 7) % 150}\n" for i in range(n))
    return old, new


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, nargs="+", default=[2000, 4000, 6000])
    ap.add_argument("--no-before", action="store_true", help="skip the unbounded difflib run")
    args = ap.parse_args()
    print(f"bounds: {MAX_DIFF_LINE_PAIRS:,} line pairs, {DIFF_SECONDS:g} s")
    print(f"{'pair':<28} {'before (difflib) s':>19} {'after (bounded) s':>18}  {'after shows':<21}"
          f"{'time bound only s':>18}  shows")
    cases = [(f"permuted repeats, {n:,} lines", *pathological(n)) for n in args.lines]
    side = int(MAX_DIFF_LINE_PAIRS ** 0.5) + 1
    cases.append((f"all lines differ, {side:,} lines", "".join(f"old {i}\n" for i in range(side)),
                   "".join(f"new {i}\n" for i in range(side))))
    for label, old, new in cases:
        before = "-" if args.no_before else f"{seconds(lambda: list(difflib.unified_diff(old.splitlines(True), new.splitlines(True)))):.2f}"
        out: list[str] = []
        after = seconds(lambda: out.append(unified_diff(old, new, "n.md")))
        # the time bound alone (the line-pair bound lifted): where it stops the matching
        timed = seconds(lambda: out.append(unified_diff(old, new, "n.md", max_pairs=10**12)))
        shows = ["both texts (no diff)" if o.startswith("(no diff was computed") else "the diff" for o in out]
        print(f"{label:<28} {before:>19} {after:>18.2f}  {shows[0]:<21}{timed:>18.2f}  {shows[1]}")


if __name__ == "__main__":
    main()
