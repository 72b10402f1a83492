"""Review (hostile): a GGUF's chat template (a file from a hub, not ours) that tries to
exhaust memory is refused with the reason, never a MemoryError traceback or an OOM kill.

Found in review: `("x" * 100000) * 100000` in tokenizer.chat_template made chat_format =
"auto" allocate 10 GB at load (a MemoryError traceback under a memory limit, the OOM killer
without one); `"x".ljust(10**10)` and `"x" | center(10**10)` likewise. The children run under
a 2 GiB address-space limit so a regression fails instead of taking the machine down.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("jinja2", reason="jinja2 is not installed (chat_format \"auto\" needs it: pip install 'assistant[llama]')")

TAIL = "{% for m in messages %}<t>{{ m.content }}</t>{% endfor %}{% if add_generation_prompt %}<gen>{% endif %}"
BOMBS = ['{{ ("x" * 100000) * 100000 }}', '{% set s = "x" * 1000 %}{{ s * 10000000 }}',
         '{{ "x".ljust(10000000000) }}', '{{ "x" | center(10000000000) }}',
         '{% set l = [1] * 1000 %}{{ (l * 100000) | length }}', '{{ 10 ** 100000000 }}',
         '{{ "x" | indent(10000000000) }}', '{{ "%10000000000s" % "a" }}',
         '{% set s = "x" * 1000 %}{{ s | replace("x", "xxxxxxxxxx") | replace("x", "xxxxxxxxxx")'
         ' | replace("x", "xxxxxxxxxx") | replace("x", "xxxxxxxxxx") | replace("x", "xxxxxxxxxx") }}']

# a child process compiles the template of argv[1] and prints REFUSED (with why) or ACCEPTED
TIME_CHILD = """
import sys
from assistant.models.jinja_format import JinjaFormat, TemplateRefused
try:
    JinjaFormat(sys.argv[1])
except TemplateRefused as exc:
    print("REFUSED", exc)
else:
    print("ACCEPTED")
"""
# the same under a 2 GiB address-space limit: a bomb that gets past the checks dies, not the machine
CHILD = "import resource\nresource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n" + TIME_CHILD


@pytest.mark.parametrize("bomb", BOMBS)
def test_a_memory_bomb_template_is_refused(bomb):
    r = subprocess.run([sys.executable, "-c", CHILD, bomb + TAIL], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-500:]
    assert r.stdout.startswith("REFUSED"), r.stdout
    assert "Traceback" not in r.stderr


def test_ordinary_string_work_in_a_template_still_renders():
    from assistant.models.jinja_format import JinjaFormat

    fmt = JinjaFormat('{{ "=" * 20 }}{% set sep = "-" * 3 %}' + TAIL.replace("<t>", "<t>{{ sep }}"))
    segs = fmt([{"role": "user", "content": "hi"}])
    assert "".join(t for t, _ in segs).startswith("=" * 20)
    assert ("hi", False) in segs


def test_a_time_bomb_template_is_refused_within_a_bound():
    bomb = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    try:
        r = subprocess.run([sys.executable, "-c", TIME_CHILD, bomb + TAIL], capture_output=True, text=True,
                           timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("loading the template did not end within 30 s")
    assert r.stdout.startswith("REFUSED"), r.stdout
    # the step budget, or on a machine loaded enough, the wall-clock backstop (5 s) before it
    assert "steps of work" in r.stdout or "took more than" in r.stdout, r.stdout


# review (model templates): s5: five ways past the template work budget (time, memory, output, errors)
# - time: `sum(start=[])` over many lists copied the growing list in one C call (minutes, the
#   clock never checked); `wordwrap` over a long run of spaces was quadratic (82 s, then accepted);
# - memory: `"%900000000s" % "x"`, a width given as a string in a nested format spec, joins with a
#   huge separator over any iterable and `indent` with a huge prefix built ~1.7 GB before their
#   size check;
# - output: a loop printing a 1M-character string 115 times, and `{% set %}` blocks doubling,
#   rendered without bound;
# - errors: division by zero, `slice(0)`, `truncate(-5)` raised out of JinjaFormat.
# Each is now refused with a TemplateRefused (never a hang, a traceback or a gigabyte). Each
# template runs in a child under a 3 GiB address-space limit and a timeout; the child's own peak
# memory is read from /proc (VmHWM: ru_maxrss would carry the pytest parent's peak).
BUDGET_CHILD = r'''
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

BUDGET_CASES = {
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


@pytest.mark.parametrize("body", list(BUDGET_CASES.values()), ids=list(BUDGET_CASES))
def test_a_template_past_the_budget_is_refused_in_bounded_time_and_memory(body):
    try:
        proc = subprocess.run([sys.executable, "-c", BUDGET_CHILD, body], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the template did not end within 60 s (its budget's backstop is 5 s)")
    outcome, peak_mb = proc.stdout.split()
    assert outcome == "refused", proc.stdout + proc.stderr[-2000:]
    assert int(peak_mb) < 300, f"peak memory {peak_mb} MB before the template was refused"
