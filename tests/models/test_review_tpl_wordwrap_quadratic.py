"""Review s5: `wordwrap` over a long run of spaces is quadratic inside one filter call (Python's
textwrap), so the per-character charge (300,001 steps, under MAX_STEPS) lets it in and the
wall-clock backstop, looked at only when a step is charged, never interrupts it:
`(" " * 300000 + "x") | wordwrap(1)` takes ~80 s and the template is then *accepted*;
`"x" | center(1000000) | wordwrap(1)` runs for minutes. Loading a GGUF with it hangs.
Promise (docs/model.md): every load and render ends within a few seconds.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(r'''
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from assistant.models.jinja_format import JinjaFormat, TemplateRefused
    tpl = ("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
           "{{ (\" \" * 300000 + \"x\") | wordwrap(1) }}"
           "{% if add_generation_prompt %}<assistant>{% endif %}")
    try:
        JinjaFormat(tpl)
        print("loaded")
    except TemplateRefused:
        print("refused")
''')


def test_wordwrap_over_spaces_ends_within_seconds():
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        raise AssertionError("loading the template did not end within 20 s (MAX_SECONDS is 5)") from None
    assert proc.stdout.strip() == "refused", proc.stdout + proc.stderr
