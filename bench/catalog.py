"""Catalog cost: 1,000 and 10,000 notes, 1 KiB bodies vs 100 MB sparse bodies, side by side.

Targets: body size changes nothing within noise (only a bounded head of each shown note is
read); 10,000 notes under 200 ms warm. Also prints the budget drop line the model sees.

    /work/dev/bin/python bench/catalog.py [--runs 9] [--dir /some/tmp]
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.notes.catalog import CatalogSettings, render  # noqa: E402

SPARSE = 100 * 1024 * 1024
PER_DIR = 100


def _scanner():
    try:
        from assistant.secrets.scanner import Scanner
    except ImportError:  # pragma: no cover - the leak scanner not installed yet
        return None
    return Scanner(secrets={f"bench-secret-{i}": f"s3cr3t-value-{i:04d}-xyzzy" for i in range(10)})


def build(root: Path, count: int, sparse: bool) -> Path:
    mem = root / f"memory-{count}-{'sparse' if sparse else '1k'}"
    mem.mkdir(parents=True)
    body = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 20)[:1024 - 80]
    for i in range(count):
        d = mem / f"topic-{i // PER_DIR:03d}"
        if i % PER_DIR == 0:
            d.mkdir()
        text = f"---\ndescription: Note number {i} about topic {i // PER_DIR}\ncategory: bench\n---\n{body}\n"
        with open(d / f"note-{i:05d}.md", "wb") as f:
            f.write(text.encode())
            if sparse:
                f.truncate(SPARSE)
        # spread mtimes so the order is by recency, not by creation accident
        os.utime(d / f"note-{i:05d}.md", ns=(1_700_000_000_000_000_000 + i * 1_000_000,) * 2)
    (mem / "index.md").write_text("---\ndescription: Start here\n---\nindex\n")
    return mem


def timed_pair(a: Path, b: Path, settings: CatalogSettings, scanner, runs: int):
    """Median and min of each, measured alternately (a, b, a, b, ...) so load drift hits both."""
    outs = [render(a, settings, scanner), render(b, settings, scanner)]  # warm: dentries cached
    samples: list[list[float]] = [[], []]
    for _ in range(runs):
        for i, mem in enumerate((a, b)):
            t = time.perf_counter()
            outs[i] = render(mem, settings, scanner)
            samples[i].append(time.perf_counter() - t)
    return [(statistics.median(s), min(s)) for s in samples], outs


def shown(block: str) -> int:
    return sum(1 for ln in block.splitlines() if ln.startswith("- "))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--dir", default=None, help="where to build the trees (default: a temp dir)")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="catalog-bench-", dir=args.dir))
    # max_note_bytes above 100 MB so both trees render identical lines (with the default cap the
    # sparse notes are flagged "too large to read", which only makes their lines longer).
    settings = CatalogSettings(max_note_bytes=SPARSE * 2)
    scanner = _scanner()
    try:
        print(f"catalog bench: budget {settings.budget_bytes} B, head {settings.head_bytes} B, "
              f"median of {args.runs} warm runs, scanner={'on' if scanner else 'off'}")
        print(f"{'notes':>7} | {'1 KiB bodies (median/min)':>26} | {'100 MB sparse (median/min)':>26} "
              f"| sparse/1KiB (median)")
        last = ""
        for count in (1_000, 10_000):
            small = build(base, count, sparse=False)
            big = build(base, count, sparse=True)
            ((m_s, lo_s), (m_b, lo_b)), (out_small, out_big) = timed_pair(small, big, settings, scanner, args.runs)
            print(f"{count:>7} | {m_s * 1e3:>9.1f} ms / {lo_s * 1e3:>6.1f} ms {'':>3}"
                  f"| {m_b * 1e3:>9.1f} ms / {lo_b * 1e3:>6.1f} ms {'':>3}| {m_b / m_s:>6.2f}x"
                  f"   (lines shown: {shown(out_small)} / {shown(out_big)})")
            last = out_big
            shutil.rmtree(small)
            shutil.rmtree(big)
        print(f"budget: 10,000 sparse notes -> {shown(last)} lines shown, block {len(last.encode())} "
              f"of {settings.budget_bytes} bytes; the drop line:")
        print("  " + last.splitlines()[-1])
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
