"""Benchmark: confined atomic write (assistant.confine.Root.write_bytes) vs an unconfined atomic
write (open + write + fsync + os.replace + directory fsync) of a 1 KiB note at depth 3
(`a/b/c/note.md`), for both resolver paths (openat2 and the per-component walk).

Prints median microseconds per write side by side with confined/unconfined ratios (target
<= 1.3), the same without fsync (so the resolution overhead itself is visible), and syscalls
per write counted with `strace -c -f` when strace is installed.

    python bench/confine_write.py [--n 400] [--dir DIR] [--size 1024] [--no-strace]
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from assistant.confine import Root, openat2_available  # noqa: E402

REL = "a/b/c/note.md"


def unconfined_write(path: str, data: bytes) -> None:
    d = os.path.dirname(path)
    tmp = os.path.join(d, ".tmp-" + secrets.token_hex(8))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def make_writers(base: str, data: bytes) -> dict:
    writers = {}
    udir = os.path.join(base, "unconfined")
    os.makedirs(os.path.join(udir, "a/b/c"))
    upath = os.path.join(udir, REL)
    writers["unconfined"] = lambda: unconfined_write(upath, data)
    modes = (["openat2"] if openat2_available() else []) + ["walk"]
    for m in modes:
        rdir = os.path.join(base, m)
        os.makedirs(rdir)
        r = Root(rdir, use_openat2=(m == "openat2"))
        r.write_bytes(REL, data)  # parents exist from here on, as for a note being rewritten
        writers[m] = (lambda r=r: r.write_bytes(REL, data))
    return writers


def measure(writers: dict, n: int) -> dict:
    names = list(writers)
    samples = {k: [] for k in names}
    for w in writers.values():  # warm up
        for _ in range(10):
            w()
    for i in range(n):
        order = names[i % len(names):] + names[: i % len(names)]  # rotate: no position bias
        for k in order:
            t0 = time.perf_counter_ns()
            writers[k]()
            samples[k].append(time.perf_counter_ns() - t0)
    return {k: statistics.median(v) / 1000 for k, v in samples.items()}


def table(title: str, med: dict) -> None:
    base = med["unconfined"]
    print(f"\n{title}")
    print(f"  {'variant':<12}{'median us':>12}{'ratio':>9}")
    for k, v in med.items():
        print(f"  {k:<12}{v:>12.1f}{v / base:>9.2f}" + ("" if k == "unconfined" else "  (confined/unconfined)"))


# ------------------------------------------------------------------ strace


def strace_child(variant: str, n: int, base: str, size: int) -> None:
    writers = make_writers(base, os.urandom(size))
    for _ in range(n):
        writers[variant]()


def parse_strace(path: str) -> Counter:
    calls = Counter()
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 5 or not parts[0][0].isdigit() or parts[-1] == "total":
                continue
            calls[parts[-1]] = int(parts[3])
    return calls


def syscalls_per_write(variant: str, n: int, size: int) -> tuple[float, Counter] | None:
    out = {}
    for count in (0, n):
        base = tempfile.mkdtemp(prefix="confine-strace-")
        trace = os.path.join(base, "trace")
        cmd = ["strace", "-c", "-f", "-o", trace, sys.executable, os.path.abspath(__file__),
               "--strace-child", variant, "--n", str(count), "--dir", base, "--size", str(size)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            print(f"  strace failed for {variant}: {res.stderr.strip()[:200]}")
            return None
        out[count] = parse_strace(trace)
        shutil.rmtree(base, ignore_errors=True)
    diff = Counter({k: out[n][k] - out[0].get(k, 0) for k in out[n]})
    diff = Counter({k: v for k, v in diff.items() if v > 0})
    return sum(diff.values()) / n, diff


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400, help="writes per variant")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--dir", default=None, help="where to write (default: a temp dir)")
    ap.add_argument("--no-strace", action="store_true")
    ap.add_argument("--strace-child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.strace_child:
        strace_child(args.strace_child, args.n, args.dir, args.size)
        return

    base = tempfile.mkdtemp(prefix="confine-bench-", dir=args.dir)
    try:
        fs = subprocess.run(["stat", "-f", "-c", "%T", base], capture_output=True, text=True).stdout.strip()
        data = os.urandom(args.size)
        print(f"confined vs unconfined atomic write: {args.size} B note at depth 3 ({REL}), "
              f"n={args.n} per variant, dir={base} ({fs or '?'}), kernel {os.uname().release}, "
              f"openat2 {'available' if openat2_available() else 'NOT available'}")
        med = measure(make_writers(os.path.join(base, "fsync"), data), args.n)
        table("with fsync (the real write path):", med)
        real_fsync = os.fsync
        os.fsync = lambda fd: None  # both sides lose the same two fsyncs
        try:
            med_nf = measure(make_writers(os.path.join(base, "nofsync"), data), args.n)
        finally:
            os.fsync = real_fsync
        table("without fsync (resolution overhead laid bare):", med_nf)

        if args.no_strace:
            return
        if not shutil.which("strace"):
            print("\nsyscalls per write: strace not installed, skipped")
            return
        print("\nsyscalls per write (strace -c -f, run with n minus run with 0):")
        n = min(args.n, 200)
        for variant in med:
            got = syscalls_per_write(variant, n, args.size)
            if got:
                per, diff = got
                detail = ", ".join(f"{k} {v / n:g}" for k, v in diff.most_common())
                print(f"  {variant:<12}{per:>6.1f}   {detail}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
