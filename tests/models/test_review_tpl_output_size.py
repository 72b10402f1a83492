"""Review s5: a chat template's rendered text is not size-bounded: a loop that prints one
1,000,000-character string 115 times (each print charged 15,625 steps, under MAX_STEPS in
total) renders 115 million characters of control text, using ~1.3 GB, and is *accepted* at
load; every turn then hands a 115M-character prompt to the tokenizer. MAX_BUILD (1 MiB per
operation) is also bypassed by `{% set x %}...{% endset %}`, whose joined body is never sized.
Promise (docs/model.md): each render ends in bounded time and memory; what one operation may
build is bounded, and a template that would exhaust memory is refused.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(r'''
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
    print(outcome, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
''')

CASES = {
    "print-1M-115-times": '{% set s = "\U0001F600" * 1000000 %}{% for i in range(115) %}{{ s }}{% endfor %}',
    "set-block-doubling": ('{% set ns = namespace(s="x" * 1000) %}{% for i in range(13) %}{% set t %}{{ ns.s }}'
                           '{{ ns.s }}{% endset %}{% set ns.s = t %}{% endfor %}{{ ns.s }}'),
}


@pytest.mark.parametrize("body", list(CASES.values()), ids=list(CASES))
def test_huge_rendered_text_is_refused(body):
    proc = subprocess.run([sys.executable, "-c", CHILD, body], capture_output=True, text=True, timeout=120)
    outcome, rss_mb = proc.stdout.split()
    assert outcome == "refused", f"{outcome} characters accepted (peak RSS {rss_mb} MB)"
