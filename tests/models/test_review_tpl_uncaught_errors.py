"""Review s5: a chat template that divides by zero, slices into zero parts or truncates to a
negative length escapes JinjaFormat as a raw ZeroDivisionError / AssertionError instead of a
TemplateRefused: `_render` catches a fixed list of exception types (TypeError, ValueError, ...)
that misses ArithmeticError's ZeroDivisionError and jinja's `truncate` assertion, and
llama_cpp.py (which catches TemplateRefused at load) lets it out as a traceback.
Promise (docs/model.md): a bad template ends with a clear TemplateRefused, never a traceback.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(r'''
    import sys
    from assistant.models.jinja_format import JinjaFormat, TemplateRefused
    tpl = ("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}" + sys.argv[1]
           + "{% if add_generation_prompt %}<assistant>{% endif %}")
    try:
        JinjaFormat(tpl)
        print("loaded")
    except TemplateRefused:
        print("refused")
    except BaseException as e:
        print("escaped:" + type(e).__name__)
''')

CASES = {
    "divide-by-zero": "{{ (messages|length) / 0 }}",
    "modulo-by-zero": "{{ (messages|length) % 0 }}",
    "slice-zero": "{{ messages|slice(0)|list }}",
    "truncate-negative": '{{ "x"|truncate(-5) }}',
}


@pytest.mark.parametrize("body", list(CASES.values()), ids=list(CASES))
def test_template_error_is_a_refusal(body):
    proc = subprocess.run([sys.executable, "-c", CHILD, body], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "refused", proc.stdout + proc.stderr
