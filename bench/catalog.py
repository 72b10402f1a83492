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

from assistant.catalog import CatalogSettings, render  # noqa: E402

SPARSE = 100 * 1024 * 1024
PER_DIR = 100


def _scanner():
    try:
        from assistant.leaks import Scanner
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


def timed(mem: Path, settings: CatalogSettings, scanner, runs: int) -> tuple[float, str]:
    out = render(mem, settings, scanner)  # warm: dentries/inodes cached
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        out = render(mem, settings, scanner)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--dir", default=None, help="where to build the trees (default: a temp dir)")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="catalog-bench-", dir=args.dir))
    settings = CatalogSettings()
    scanner = _scanner()
    try:
        print(f"catalog bench: budget {settings.budget_bytes} B, head {settings.head_bytes} B, "
              f"median of {args.runs} warm runs, scanner={'on' if scanner else 'off'}")
        print(f"{'notes':>7} | {'1 KiB bodies':>13} | {'100 MB sparse':>13} | sparse/1KiB")
        last = ""
        for count in (1_000, 10_000):
            small = build(base, count, sparse=False)
            big = build(base, count, sparse=True)
            t_small, out_small = timed(small, settings, scanner, args.runs)
            t_big, out_big = timed(big, settings, scanner, args.runs)
            print(f"{count:>7} | {t_small * 1e3:>10.1f} ms | {t_big * 1e3:>10.1f} ms | {t_big / t_small:>6.2f}x")
            last = out_big
            shutil.rmtree(small)
            shutil.rmtree(big)
        shown = sum(1 for ln in last.splitlines() if ln.startswith("- "))
        print(f"10,000 sparse notes: {shown} lines shown, block {len(last.encode())} bytes; drop line:")
        print("  " + last.splitlines()[-1])
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
