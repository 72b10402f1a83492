"""Review s5: a 1 MiB tool output of invisible characters, NFKC-expanding characters or 8-bit
C1 string introducers takes over a second of CPU to scan (linear, but ~1.2-1.6 s per MiB).

`without_hidden` (the shape rules' second pass) steps in Python once per hidden character of a
non-ASCII text, `_fold_chars` once per run of changed characters: 1 MiB of U+200B, U+FDFA
alternating with a letter, or U+009D, costs 1.2-1.6 s of CPU per scan, and every tool result,
transcript and approval request is scanned. Promise (brief): a scan of a 1 MiB hostile output
takes well under a second.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(r'''
    import sys, time
    from assistant.leaks import Scanner
    sc = Scanner({"bank": "Zq7-Plum-Orbit-9931"})
    text = eval(sys.argv[1])
    sc.redact("warm up \u200b\ufdfa\x9d")
    t0 = time.process_time()
    sc.redact(text)
    print(time.process_time() - t0)
''')

M = 1 << 20
CASES = {
    "zwsp": '"\\u200b" * (1 << 20)',
    "fdfa-alternating": '"\\ufdfaa" * (1 << 19)',
    "c1-osc": '"\\x9d" * (1 << 20)',
}


@pytest.mark.parametrize("expr", list(CASES.values()), ids=list(CASES))
def test_one_mib_hostile_output_scans_in_under_a_second(expr):
    proc = subprocess.run([sys.executable, "-c", CHILD, expr], capture_output=True, text=True, timeout=120)
    cpu = float(proc.stdout.strip() or "inf")
    assert cpu < 1.0, f"{cpu:.2f} s of CPU to scan 1 MiB"
