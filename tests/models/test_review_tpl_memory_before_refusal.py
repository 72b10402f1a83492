"""Review s5: a chat template builds a gigabyte-sized string before the size bound refuses it.

`_check_size` runs on the *result* of `%`, `str.format` (width through a nested field), a str
method `.join(str)`, the `join` filter over a string and `indent(str)`: the 900-million-character
string is allocated and filled first, so a template from a model hub drives one render to
~1.7 GB of memory (bounded only by what the machine has: a 9e9 width OOMs a 16 GB box) before
the TemplateRefused. Promise (docs/model.md, template_budget.py): bounded time and memory.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(r'''
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))   # keep the machine safe
    from assistant.models.jinja_format import JinjaFormat, TemplateRefused
    tpl = ("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}" + sys.argv[1]
           + "{% if add_generation_prompt %}<assistant>{% endif %}")
    try:
        JinjaFormat(tpl)([{"role": "user", "content": "hi"}])
        outcome = "rendered"
    except TemplateRefused:
        outcome = "refused"
    except BaseException as e:
        outcome = "other:" + type(e).__name__
    # VmHWM, this process's own peak: ru_maxrss keeps the parent's peak across fork and exec (a
    # pytest process that loaded a model before this test would read as 1 GB here)
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
    print(outcome, int(hwm) // 1024)
''')

CASES = {
    "percent-width": '{{ "%900000000s" % "x" }}',
    "format-nested-width": '{{ "{0:{1}}".format("x", "900000000") }}',
    "str-join-str": '{{ ("y" * 1000000).join("x" * 900) }}',
    "join-filter-str": '{{ ("x" * 900) | join("y" * 1000000) }}',
    "indent-str": '{{ ("a\\n" * 900) | indent("y" * 1000000, blank=true) }}',
}


@pytest.mark.parametrize("body", list(CASES.values()), ids=list(CASES))
def test_template_refused_without_building_a_gigabyte(body):
    proc = subprocess.run([sys.executable, "-c", CHILD, body], capture_output=True, text=True, timeout=120)
    outcome, rss_mb = proc.stdout.split()
    assert outcome == "refused", proc.stdout + proc.stderr
    # A refusal must come before the build: far below the 1 MiB-per-operation bound's scale.
    assert int(rss_mb) < 300, f"peak RSS {rss_mb} MB before the template was refused"
