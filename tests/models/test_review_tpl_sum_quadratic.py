"""Review s5: `| sum(start=[])` over many lists is quadratic in C, inside one filter call, so
neither the step budget nor the wall-clock backstop (checked only when a step is charged)
stops it: a template loads (the probe render at JinjaFormat()) for minutes.

`([[1]*300000] + [[]]*100000) | sum(start=[])` charges ~1.5M steps (under MAX_STEPS) for its
operands, then Python's sum copies the 300,000-item running list 100,000 times (3e10 copies).
Promise (docs/model.md, template_budget.py): every load and render ends within a few seconds
with TemplateTooCostly, never a hang.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(r'''
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from assistant.models.jinja_format import JinjaFormat, TemplateRefused
    tpl = ("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
           "{{ ([[1]*300000] + [[]]*100000) | sum(start=[]) | length }}"
           "{% if add_generation_prompt %}<assistant>{% endif %}")
    try:
        JinjaFormat(tpl)
        print("loaded")
    except TemplateRefused as e:
        print("refused")
''')


def test_sum_of_many_lists_is_stopped_within_seconds():
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        raise AssertionError("loading the template did not end within 20 s (MAX_SECONDS is 5)") from None
    assert proc.stdout.strip() == "refused", proc.stdout + proc.stderr
