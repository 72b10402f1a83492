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

pytest.importorskip("jinja2")

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
