"""Leak scanner throughput: one Aho-Corasick pass vs the naive loop, for 10 and 1,000 secrets.

Run: .venv/bin/python bench/leaks.py [--size BYTES] [--repeat N] [--clock cpu] [--note unicode]
     [--baseline DIR]

A ~1 MiB note of ordinary text (prose, markdown, code, hashes, URLs, base64 images) with a
few planted hits (vault values raw / base64 / hex / line-split, and shape tokens) is scanned
by:
- Scanner.find: every vault value in all its encodings in one automaton over a normalised
  view of the text, plus the shape rules (each gated by its literal needles);
- naive: a loop of `in` checks, one per encoded variant of every value, over the raw text,
  plus one regex per shape rule over the whole text. (It is also weaker: it cannot see
  values split across lines, wrapped base64, or hex in mixed case.)
Targets: >= 20 MB/s, and 1,000 secrets costing at most 2x 10 secrets.

--note unicode: the same note respelled as pasted text is (CJK lines with fullwidth punctuation,
fullwidth words, typographic dashes): the scanner's non-ASCII path, which folds NFKC forms and
dashes (assistant/secrets/view.py); --note ascii-ansi / unicode-ansi: with ANSI colour codes on
~30% of the lines (terminal output), which also scans a second view (sequences kept).
--baseline DIR: load DIR/assistant/leaks.py (a checkout of another commit, e.g. made with
`git archive COMMIT assistant | tar -x -C DIR`) and print Scanner.find before (DIR) and after
(this tree) side by side for every note, the two timed alternately in one run.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time

# This file's own folder (sys.path[0] when run as a script) holds bench/policy.py, which would
# shadow the policy package the scanner's view imports: it is replaced by the repository root.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.insert(0, os.path.join(_HERE, ".."))
sys.path.insert(0, os.path.join(_HERE, "..", "tests", "helpers"))

from leak_corpus import big_note, big_unicode_note, fake_tokens, random_secrets, with_colour_codes  # noqa: E402

from assistant.secrets.rules import RULES  # noqa: E402
from assistant.secrets.scanner import Scanner, variants  # noqa: E402


NOTES = ("ascii", "ascii-ansi", "unicode", "unicode-ansi")


def planted_note(size: int, secrets: dict[str, str], note: str = "ascii") -> str:
    base = big_unicode_note(size) if note.startswith("unicode") else big_note(size)
    if note.endswith("-ansi"):
        base = with_colour_codes(base)[:size]
    vals = list(secrets.values())[:4]
    tokens = [t[0] for t in fake_tokens().values()][:6]
    plants = [
        vals[0],
        base64.b64encode(b"user:" + vals[1].encode()).decode(),
        vals[2].encode().hex().upper(),
        vals[3][:5] + "\n  " + vals[3][5:],
        *tokens,
    ]
    step = len(base) // (len(plants) + 1)
    out, pos = [], 0
    for i, p in enumerate(plants, 1):
        cut = base.rfind(" ", 0, i * step) + 1 or i * step
        out.append(base[pos:cut])
        out.append(p + " ")
        pos = cut
    out.append(base[pos:])
    return "".join(out)[: size + 2048]


class Naive:
    def __init__(self, secrets: dict[str, str]):
        self.needles = [(v.name, v.exact) for name, value in secrets.items()
                        for v in variants(name, value)]
        self.rules = RULES

    def find(self, text: str) -> list[tuple[str, int]]:
        hits = []
        for name, needle in self.needles:
            if needle in text:
                hits.append((name, text.index(needle)))
        for rule in self.rules:
            for m in rule.pattern.finditer(text):
                hits.append((rule.id, m.start()))
        return hits


CLOCK = time.perf_counter


def timed(fn, text: str, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = CLOCK()
        result = fn(text)
        times.append(CLOCK() - t)
    # Best of N: the machine is shared, and other processes' load only ever adds time.
    return min(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1 << 20)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall: elapsed time; cpu: this process's CPU time (steadier on a machine "
                         "shared with other work, whose load adds wall time)")
    ap.add_argument("--note", choices=NOTES, default="ascii",
                    help="ascii: ordinary notes (the scanner's ASCII fast path); unicode: the same "
                         "respelled with CJK, fullwidth forms and typographic dashes; -ansi: with "
                         "ANSI colour codes on ~30%% of the lines (terminal output)")
    ap.add_argument("--baseline", metavar="DIR",
                    help="a checkout holding DIR/assistant/leaks.py: time it against this tree, "
                         "side by side, on both notes")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    mb = args.size / 1e6

    if args.baseline:
        compare(args, load_baseline(args.baseline))
        return
    print(f"note: {args.size} characters (~{args.size / 2**20:.2f} MiB) of {args.note} ordinary text "
          f"with planted hits; best of {args.repeat} runs ({args.clock} clock); {len(RULES)} shape rules "
          f"({len(set(r.id for r in RULES))} ids)")
    header = (f"{'secrets':>8} {'variants':>9} {'build s':>8} {'scanner ms':>11} "
              f"{'scanner MB/s':>13} {'naive ms':>9} {'naive MB/s':>11} {'speedup':>8} {'vault found':>12} {'naive vault':>12}")
    print(header)
    print("-" * len(header))
    rows = {}
    for n in (0, 10, 1000):
        secrets = random_secrets(n, seed=42) if n else {}
        text = planted_note(args.size, secrets or random_secrets(4, seed=1), args.note)
        t = time.perf_counter()
        scanner = Scanner(secrets)
        build = time.perf_counter() - t
        s_time, found = timed(scanner.find, text, args.repeat)
        naive = Naive(secrets)
        n_time, n_found = timed(naive.find, text, max(1, args.repeat // 3) if n >= 1000 else args.repeat)
        planted = list((secrets or {}).keys())[:4]
        v_found = f"{len({f.name for f in found if f.rule == 'vault'})}/{len(planted)}"
        n_vault = f"{len({h[0] for h in n_found if h[0] in planted})}/{len(planted)}"
        nvar = sum(len(variants(k, v)) for k, v in secrets.items())
        rows[n] = s_time
        label = f"{n}" if n else "shapes"
        print(f"{label:>8} {nvar:>9} {build:>8.3f} {s_time * 1e3:>11.1f} {mb / s_time:>13.1f} "
              f"{n_time * 1e3:>9.1f} {mb / n_time:>11.1f} {n_time / s_time:>7.1f}x {v_found:>12} {n_vault:>12}")
    print()
    print("(planted: 4 vault values — raw, base64 of 'user:'+value, upper-case hex, split across")
    print(" a line break — and 6 shape tokens; the naive loop misses the last two vault forms)")
    print(f"cost of 1,000 secrets vs 10 secrets (scanner): {rows[1000] / rows[10]:.2f}x (target <= 2x)")
    print(f"scanner throughput with 1,000 secrets: {mb / rows[1000]:.1f} MB/s (target >= 20)")


def load_baseline(root: str):
    """DIR/assistant/leaks.py (with its sibling modules) as the package `baseline_assistant`."""
    import importlib
    import types

    folder = os.path.join(os.path.abspath(root), "assistant")
    if not os.path.isfile(os.path.join(folder, "leaks.py")):
        raise SystemExit(f"--baseline: no assistant/leaks.py under {root}: --baseline loads a checkout of the flat "
                         "layout (before 46ae573); for a later one, run this script from that checkout and compare")
    pkg = types.ModuleType("baseline_assistant")
    pkg.__path__ = [folder]
    sys.modules["baseline_assistant"] = pkg
    return importlib.import_module("baseline_assistant.leaks")


def compare(args, baseline) -> None:
    print(f"Scanner.find, before ({args.baseline}) and after (this tree), timed alternately; "
          f"note: {args.size} characters; best of {args.repeat} ({args.clock} clock)")
    header = (f"{'note':>12} {'secrets':>8} {'before ms':>10} {'after ms':>9} {'before MB/s':>12} "
              f"{'after MB/s':>11} {'after/before':>13} {'found b/a':>10}")
    print(header)
    print("-" * len(header))
    mb = args.size / 1e6
    for note in NOTES:
        for n in (0, 10, 1000):
            secrets = random_secrets(n, seed=42) if n else {}
            text = planted_note(args.size, secrets or random_secrets(4, seed=1), note)
            old, new = baseline.Scanner(secrets), Scanner(secrets)
            times: dict[str, list[float]] = {"old": [], "new": []}
            found = {}
            for _ in range(args.repeat):
                for key, scanner in (("old", old), ("new", new)):
                    t = CLOCK()
                    found[key] = scanner.find(text)
                    times[key].append(CLOCK() - t)
            b, a = min(times["old"]), min(times["new"])
            label = f"{n}" if n else "shapes"
            print(f"{note:>12} {label:>8} {b * 1e3:>10.1f} {a * 1e3:>9.1f} {mb / b:>12.1f} {mb / a:>11.1f} "
                  f"{a / b:>12.2f}x {len(found['old']):>4}/{len(found['new']):<5}")
    print()
    print("(found b/a: findings before/after, shape tokens included; the unicode note plants the")
    print(" same values and tokens as the ascii one)")


if __name__ == "__main__":
    main()
