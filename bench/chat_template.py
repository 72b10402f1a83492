"""What the chat template's work budget costs a turn, and how fast a time bomb is refused.

chat_format = "auto" renders the GGUF's template on every turn (jinja_format.py). This renders a
200-message agent conversation (tests/helpers/chat_templates.py: long_conversation) with each
real template, with the work budget on (what the product runs) and off (the same sandbox and
size bounds without template_budget.py), interleaved, and prints the medians side by side with
the steps one render used against MAX_STEPS. Then it times the refusal of a few time bombs.

    .venv/bin/python bench/chat_template.py [--messages 200] [--runs 30]
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "helpers"))

import chat_templates as ct  # noqa: E402
from timing import median_ms  # noqa: E402

from assistant.models import template_budget  # noqa: E402
from assistant.models.jinja_format import JinjaFormat, TemplateRefused, _environment  # noqa: E402

TEMPLATES = ["CHATML", "LLAMA3", "MISTRAL", "PHI3", "GEMMA3", "QWEN3", "LLAMA32"]
TAIL = "{% for m in messages %}<t>{{ m.content }}</t>{% endfor %}{% if add_generation_prompt %}<gen>{% endif %}"
BOMBS = {
    "nested range(100000) loops": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "macro calling itself twice, 40 deep": "{% macro a(n) %}{% if n > 0 %}{{ a(n - 1) }}{{ a(n - 1) }}{% endif %}"
                                           "{% endmacro %}{{ a(40) }}",
    "join of a 100,000 list per step": "{% set l = range(100000) | list %}{% for i in range(100000) %}"
                                       "{{ l | join(',') | length }}{% endfor %}",
    "`in` over a 100,000 list per step": "{% set l = range(100000) | list %}{% for i in range(100000) %}"
                                         "{% if -1 in l %}x{% endif %}{% endfor %}",
}


def _unbudgeted(fmt: JinjaFormat, template: str) -> JinjaFormat:
    """The same renderer with the template compiled without the work budget."""
    off = copy.copy(fmt)
    off._template = _environment(work_budget=False).from_string(template)
    return off


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=200)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    msgs = ct.long_conversation(args.messages)
    print(f"render of a {args.messages}-message conversation (+ system), median of {args.runs}, "
          f"budget MAX_STEPS={template_budget.MAX_STEPS:,}, MAX_DEPTH={template_budget.MAX_DEPTH}")
    print(f"  {'template':10} {'off ms':>8} {'on ms':>8} {'on/off':>7} {'steps used':>11} {'of budget':>9}")
    ratios = []
    for name in TEMPLATES:
        template = getattr(ct, name)
        on = JinjaFormat(template, bos_token="<s>", eos_token="</s>")
        off = _unbudgeted(on, template)
        assert on(msgs) == off(msgs), f"{name}: the budget changed the output"
        on_ms, off_ms = [], []
        for _ in range(3):        # interleaved, so load on the machine hits both alike
            off_ms.append(median_ms(lambda: off(msgs), args.runs // 3 or 1))
            on_ms.append(median_ms(lambda: on(msgs), args.runs // 3 or 1))
        a, b = statistics.median(off_ms), statistics.median(on_ms)
        on(msgs)
        ratios.append(b / a)
        print(f"  {name:10} {a:8.2f} {b:8.2f} {b / a:7.2f} {on.last_steps:11,} "
              f"{on.last_steps / template_budget.MAX_STEPS:9.2%}")
    print(f"  geometric mean on/off: {statistics.geometric_mean(ratios):.2f}")
    print("time to refuse a time bomb at load (JinjaFormat(template)):")
    for label, bomb in BOMBS.items():
        t = time.perf_counter()
        try:
            JinjaFormat(bomb + TAIL)
            outcome = "ACCEPTED (!)"
        except TemplateRefused as exc:
            outcome = str(exc)[:70]
        print(f"  {label:38} {time.perf_counter() - t:6.2f} s  {outcome}")


if __name__ == "__main__":
    main()
