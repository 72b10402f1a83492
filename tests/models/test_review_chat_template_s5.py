"""Hostile review s5 (2026-12-01) of the chat-template work budget: five ways past it, each now
refused with a TemplateRefused (never a hang, a traceback or a gigabyte).

- time: `sum(start=[])` over many lists copied the growing list in one C call (minutes, the
  clock never checked); `wordwrap` over a long run of spaces was quadratic (82 s, then accepted);
- memory: `"%900000000s" % "x"`, a width given as a string in a nested format spec, joins with a
  huge separator over any iterable and `indent` with a huge prefix built ~1.7 GB before their
  size check;
- output: a loop printing a 1M-character string 115 times, and `{% set %}` blocks doubling,
  rendered without bound;
- errors: division by zero, `slice(0)`, `truncate(-5)` raised out of JinjaFormat.

Each template runs in a child under a 3 GiB address-space limit and a timeout; the child's own
peak memory is read from /proc (VmHWM: ru_maxrss would carry the pytest parent's peak)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHILD = r'''
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from assistant.models.jinja_format import JinjaFormat, TemplateRefused
tpl = ("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}" + sys.argv[1]
       + "{% if add_generation_prompt %}<assistant>{% endif %}")
try:
    segs = JinjaFormat(tpl)([{"role": "user", "content": "hi"}])
    outcome = "rendered:%d" % sum(len(t) for t, _ in segs)
except TemplateRefused:
    outcome = "refused"
except BaseException as e:
    outcome = "escaped:" + type(e).__name__
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
print(outcome, int(hwm) // 1024)
'''

CASES = {
    # time
    "sum-of-lists": "{{ ([[1]*300000] + [[]]*100000) | sum(start=[]) | length }}",
    "wordwrap-spaces": '{{ (" " * 300000 + "x") | wordwrap(1) }}',
    # memory before the size check
    "percent-width": '{{ "%900000000s" % "x" }}',
    "format-nested-width": '{{ "{0:{1}}".format("x", "900000000") }}',
    "str-join-str": '{{ ("y" * 1000000).join("x" * 900) }}',
    "join-filter-str": '{{ ("x" * 900) | join("y" * 1000000) }}',
    "indent-str": '{{ ("a\\n" * 900) | indent("y" * 1000000, blank=true) }}',
    # output
    "print-1M-115-times": '{% set s = "\U0001F600" * 1000000 %}{% for i in range(115) %}{{ s }}{% endfor %}',
    "set-block-doubling": ('{% set ns = namespace(s="x" * 1000) %}{% for i in range(13) %}{% set t %}{{ ns.s }}'
                           '{{ ns.s }}{% endset %}{% set ns.s = t %}{% endfor %}{{ ns.s }}'),
    # errors
    "divide-by-zero": "{{ (messages|length) / 0 }}",
    "modulo-by-zero": "{{ (messages|length) % 0 }}",
    "slice-zero": "{{ messages|slice(0)|list }}",
    "truncate-negative": '{{ "x"|truncate(-5) }}',
}


@pytest.mark.parametrize("body", list(CASES.values()), ids=list(CASES))
def test_a_template_past_the_budget_is_refused_in_bounded_time_and_memory(body):
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, body], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the template did not end within 60 s (its budget's backstop is 5 s)")
    outcome, peak_mb = proc.stdout.split()
    assert outcome == "refused", proc.stdout + proc.stderr[-2000:]
    assert int(peak_mb) < 300, f"peak memory {peak_mb} MB before the template was refused"
