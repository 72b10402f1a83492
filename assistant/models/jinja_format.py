"""`chat_format = "auto"`: the chat template a GGUF carries (Jinja, as llama.cpp and Transformers
render it), turned into our (text, is_control) segments so content still never becomes a turn.

Guards the same promise as chat_format.py for any model family. The template is rendered in a
sandboxed, immutable Jinja environment with every message's content replaced by a random
sentinel (fresh per render, so no content can contain one). The rendered text is then cut at
the sentinels: what the template wrote (turn markers, role names, BOS) becomes control segments,
and each sentinel is replaced by the real content as a plain-text segment. A template that
cannot be rendered safely is refused with the reason: it raised, it dropped, repeated or
altered a message's content (a sentinel missing, doubled or changed), or it does not emit the
generation prompt. A template that refuses a system message (Mistral's) is rendered with the
system prompt folded into the first user message, as the person's text would be.

Every compile and render runs against a work budget (template_budget.py): loop steps, calls,
items and characters handled, characters written, nesting depth and a time backstop, so a
template that would hang loading or a turn is refused as TemplateTooCostly, naming the bound it
hit. Any other error it raises is a TemplateRefused naming the exception, never a traceback.
"""

from __future__ import annotations

import datetime as _dt
import functools
import inspect
import json
import re
import secrets
import types
from typing import Any, Callable, Sequence

from assistant.models import template_budget as budget
from assistant.models.chat_format import ChatFormatError, Segment, _merge

_ROLES = {"system": "system", "user": "user", "assistant": "assistant", "model": "assistant", "tool": "user"}


class TemplateRefused(ChatFormatError):
    """A chat template that cannot be rendered safely; the message says why."""


class TemplateTooCostly(TemplateRefused):
    """A chat template that does more work than one render may (template_budget.py): too many
    steps, too deep, or too long; the message names the bound."""


def _environment(*, work_budget: bool = True) -> Any:
    """The sandbox for a GGUF's template. `work_budget=False` leaves out the step budget (only
    bench/chat_template.py does, to measure what the budget costs)."""
    try:
        import jinja2
        import jinja2.ext
        from jinja2.runtime import BlockReference, LoopContext, Macro
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        raise TemplateRefused("chat_format \"auto\" needs jinja2: pip install 'assistant[llama]'") from None

    class _Generation(jinja2.ext.Extension):
        """Transformers' {% generation %} tag: a pass-through."""

        tags = {"generation"}

        def parse(self, parser):   # pragma: no cover - trivial
            parser.stream.skip(1)
            return parser.parse_statements(("name:endgeneration",), drop_needle=True)

    class _Bounded(ImmutableSandboxedEnvironment):
        """The sandbox, plus a size bound on what one operation may build: a GGUF's template is
        not ours (a `model pull` from a hub), and `("x" * 100000) * 100000` or `"x".ljust(10**10)`
        would exhaust memory before any check of the output."""

        intercepted_binops = frozenset(["*", "**", "+", "%"])

        def call_binop(self, context, operator, left, right):
            if operator == "**" and isinstance(right, int) and abs(right) > 256:
                raise TemplateRefused("the model's chat template computes a power too large to render")
            if operator in ("*", "**"):
                _check_int_size(operator, left, right)
            if operator in ("*", "+"):
                _check_size(_product_len(left, right) if operator == "*" else _sum_len(left, right))
            if operator == "%" and isinstance(left, str):     # "%900000000s" % x: sized before it builds
                _check_size(_percent_len(left, right))
            result = super().call_binop(context, operator, left, right)
            _check_size(_len(result))
            return result

        def call(self, __context, __obj, *args, **kwargs):
            for a in (*args, *kwargs.values()):
                if isinstance(a, int) and not isinstance(a, bool) and abs(a) > MAX_BUILD:
                    raise TemplateRefused("the model's chat template asks for a string or list too large to render")
            # the sandbox hands out str.format wrapped (its own formatter): size the method itself
            method = inspect.unwrap(__obj) if isinstance(__obj, types.FunctionType) else __obj
            if isinstance(method, types.BuiltinMethodType) and isinstance(method.__self__, str):
                if method.__name__ == "join" and args and not isinstance(args[0], (list, tuple)):
                    args = (list(args[0]), *args[1:])     # any iterable, materialised (and charged) first
                _check_size(_str_method_len(method.__self__, method.__name__, args))
            result = super().call(__context, __obj, *args, **kwargs)
            _check_size(_len(result))
            return result

    class _Budgeted(_Bounded):
        """The bounded sandbox, plus the work budget of template_budget.py: every loop item, call,
        filter, test, operator, comparison and output draws from the render's meter."""

        def _parse(self, source, name, filename):
            return budget.rewrite(super()._parse(source, name, filename), self)

        def call_binop(self, context, operator, left, right):
            m = budget.meter()
            m.charge(1)
            result = super().call_binop(context, operator, left, right)
            budget.weigh(m, result)     # +, *, % and ** cost what they build (sizes bounded above)
            return result

        def call(self, __context, __obj, *args, **kwargs):
            m = budget.meter()
            if isinstance(__obj, (Macro, LoopContext, BlockReference)):   # macro, caller(), loop(...), self.block()
                # binding arguments, a new frame: a few steps' work; a block, a new context: more
                m.charge(budget.BLOCK_STEPS if isinstance(__obj, BlockReference) else budget.CALL_STEPS)
                if isinstance(__obj, LoopContext) and args:
                    args = (budget.Steps(args[0]), *args[1:])
                with m.nested():
                    return super().call(__context, __obj, *args, **kwargs)
            m.charge(2)
            if isinstance(__obj, types.BuiltinMethodType):   # "".join(x), s.split(), d.items()
                budget.weigh(m, __obj.__self__)
            args = tuple(budget.metered_arg(m, a) for a in args)
            kwargs = {k: budget.metered_arg(m, v) for k, v in kwargs.items()}
            result = super().call(__context, __obj, *args, **kwargs)
            budget.weigh(m, result)
            return result

        def getitem(self, obj, argument):
            result = super().getitem(obj, argument)
            if isinstance(argument, slice):     # messages[1:], s[::-1]: a copy
                m = budget.meter()
                m.charge(1 + (len(result) // budget.CHARS_PER_STEP if isinstance(result, str)
                              else len(result) if isinstance(result, (list, tuple)) else 0))
            return result

    env_class = _Budgeted if work_budget else _Bounded
    env = env_class(loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True,
                    extensions=[_Generation, jinja2.ext.loopcontrols], undefined=jinja2.Undefined)

    def tojson(x: object, ensure_ascii: bool = False, indent: object = None, separators: object = None,
               sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env.filters["tojson"] = tojson
    # lipsum(n) writes n paragraphs in one call (`lipsum(1000000)` runs for minutes) and urlize
    # spends seconds on a 1 MB string: no chat template has a use for either.
    # wordwrap is quadratic in a long run of spaces (textwrap: 80 s on 300,000), inside one call.
    del env.globals["lipsum"]
    del env.filters["urlize"]
    del env.filters["wordwrap"]
    # sum: Python's sum copies a growing list once per item; join: sized item by item as it builds
    env.filters["sum"] = jinja2.pass_environment(_sum)
    env.filters["join"] = jinja2.pass_eval_context(_join)
    # Filters are called directly, not through `call`: bound each one the same way
    # (`"x" | center(10**10)`, a chain of `| replace(...)` that grows tenfold per step).
    for name, fn in list(env.filters.items()):
        env.filters[name] = _bounded_filter(name, fn)
    if work_budget:
        budget.install(env, _check_size)
    return env


def _bounded_filter(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    from jinja2.utils import _PassArg

    at = 0 if _PassArg.from_obj(fn) is None else 1     # the value follows a context argument
    method = {"replace": "replace", "format": "format", "indent": "indent"}.get(name)

    @functools.wraps(fn)      # keeps jinja's pass_context / pass_environment marker
    def bounded(*args: object, **kwargs: object) -> object:
        for a in (*args, *kwargs.values()):
            if isinstance(a, int) and not isinstance(a, bool) and abs(a) > MAX_BUILD:
                raise TemplateRefused("the model's chat template asks for a string or list too large to render")
        if method == "replace" and len(args) > at and isinstance(args[at], str):
            _check_size(_str_method_len(args[at], "replace", args[at + 1:]))
        elif method == "format" and len(args) > at and isinstance(args[at], str):    # "%99999s" | format(x)
            _check_size(_percent_len(args[at], kwargs or tuple(args[at + 1:])))
        elif method == "indent" and len(args) > at and isinstance(args[at], str):    # the prefix, once per line
            width = args[at + 1] if len(args) > at + 1 else kwargs.get("width", 4)
            prefix = len(width) if isinstance(width, str) else max(width, 0) if isinstance(width, int) else 0
            _check_size(len(args[at]) + (args[at].count("\n") + 2) * prefix)
        result = fn(*args, **kwargs)
        _check_size(_len(result))
        return result

    return bounded


MAX_BUILD = 1 << 20      # characters (or items) one template operation may build
MAX_INT_BITS = 1 << 16   # bits of an integer one `*` or `**` may build (~20,000 digits)


def _sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    """The `sum` filter, for numbers only: with a list or tuple to `start` from, Python's sum
    copies the running list once per item (quadratic, in one C call no budget or clock sees),
    and no chat template sums lists."""
    from jinja2.filters import make_attrgetter

    if not isinstance(start, (int, float)):
        raise TemplateRefused("the model's chat template sums lists (`sum(start=...)`): only numbers are summed")
    if attribute is not None:
        iterable = map(make_attrgetter(environment, attribute), iterable)
    return sum(iterable, start)      # a list item is a TypeError at once (a number plus a list)


def _join(eval_ctx: Any, value: Any, d: Any = "", attribute: Any = None) -> str:
    """The `join` filter, sized as it goes: the separator and every item's text are counted
    against MAX_BUILD before the joined string is built."""
    from jinja2.filters import make_attrgetter

    if attribute is not None:
        value = map(make_attrgetter(eval_ctx.environment, attribute), value)
    sep = str(d)
    parts: list[str] = []
    total = 0
    for x in value:
        text = x if isinstance(x, str) else str(x)
        total += len(text) + (len(sep) if parts else 0)
        _check_size(total)
        parts.append(text)
    return sep.join(parts)


_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)", re.S)


def _percent_len(fmt: str, args: object) -> int:
    """An upper bound of the padding `fmt % args` adds: every width and precision written in the
    format (a `*` one taken from the arguments), on top of the format and its arguments."""
    values = args if isinstance(args, tuple) else (args,)
    stars = [abs(v) for v in values if isinstance(v, int) and not isinstance(v, bool)]
    pad = len(fmt)
    for width, precision, _ in _PERCENT_SPEC.findall(fmt):
        for w in (width, precision):
            if w == "*":
                pad += max(stars, default=0)
            elif w:
                pad += int(w) if len(w) < 20 else MAX_BUILD + 1
    return pad + sum(len(v) for v in values if isinstance(v, str))


def _len(x: object) -> int:
    return len(x) if isinstance(x, (str, bytes, list, tuple)) else 0


def _product_len(a: object, b: object) -> int:
    if isinstance(b, int) and not isinstance(b, bool):
        return _len(a) * max(b, 0)
    if isinstance(a, int) and not isinstance(a, bool):
        return _len(b) * max(a, 0)
    return 0


def _sum_len(a: object, b: object) -> int:
    return _len(a) + _len(b)


def _str_method_len(s: str, name: str, args: Sequence[object]) -> int:
    """The length a str method will build, where one call could build far more than its inputs:
    `s.replace("x", big)`, `s.expandtabs(n)`, `sep.join(items)`, `"{:>99999999}".format(x)`."""
    if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        n = s.count(args[0]) if args[0] else len(s) + 1
        if len(args) > 2 and isinstance(args[2], int) and args[2] >= 0:
            n = min(n, args[2])
        return len(s) + n * max(len(args[1]) - len(args[0]), 0)
    if name == "expandtabs":
        size = args[0] if args and isinstance(args[0], int) else 8
        return len(s) + s.count("\t") * max(size, 0)
    if name == "join" and args and isinstance(args[0], (list, tuple)):
        return len(s) * max(len(args[0]) - 1, 0) + sum(len(x) for x in args[0] if isinstance(x, str))
    if name in ("format", "format_map"):     # every width or precision written in the format string
        specs = "".join(spec for _, _, spec, _ in _formatter().parse(s) if spec)
        if "{" in specs:      # "{0:{1}}": a width taken from an argument, any size: not offered
            raise TemplateRefused("the model's chat template formats with a nested field in a format spec")
        widths = [int(w) if len(w) < 20 else MAX_BUILD + 1 for w in re.findall(r"\d+", specs)]
        return sum(widths) + len(s)
    return 0


def _formatter() -> Any:
    import string

    return string.Formatter()


def _check_int_size(operator: str, a: object, b: object) -> None:
    if not (isinstance(a, int) and isinstance(b, int)):
        return
    bits = a.bit_length() * abs(b) if operator == "**" else a.bit_length() + b.bit_length()
    if bits > MAX_INT_BITS:
        raise TemplateRefused("the model's chat template computes a number too large to render")


def _check_size(n: int) -> None:
    if n > MAX_BUILD:
        raise TemplateRefused("the model's chat template builds a string or list too large to render")


def _why(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text if len(text) <= 300 else text[:300] + '...'}"


def _raise(message: str) -> None:
    raise TemplateRefused(f"the model's chat template refused the conversation: {message}")


class JinjaFormat:
    """A GGUF chat template as a segment renderer: `fmt(messages, add_generation_prompt=True)`."""

    def __init__(self, template: str, *, bos_token: str = "", eos_token: str = "", add_bos: bool = False) -> None:
        if not isinstance(template, str) or not template.strip():
            raise TemplateRefused("the model file carries no chat template (tokenizer.chat_template); "
                                  "set model.chat_format to \"gemma\", \"chatml\" or \"llama-3\"")
        import jinja2

        self.last_steps = 0     # the work budget's steps the last render used (bench/chat_template.py)
        try:
            with budget.metered(budget.Meter()):    # constant folding runs filters at compile time
                self._template = _environment().from_string(template)
        except jinja2.TemplateError as exc:
            raise TemplateRefused(f"the model's chat template does not parse: {exc}") from None
        except budget.Spent as exc:
            raise TemplateTooCostly(str(exc)) from None
        except TemplateRefused:
            raise
        except Exception as exc:
            # too deeply nested for Python (blocks, parentheses), or a constant that fails to fold
            raise TemplateRefused(f"the model's chat template does not compile: {_why(exc)}") from None
        self.bos_token, self.eos_token, self.add_bos = bos_token, eos_token, add_bos
        self.fold_system = False
        # Probe once with a conversation of our shape, so a bad template is refused at load.
        probe = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                 {"role": "assistant", "content": "a"}, {"role": "user", "content": "v"}]
        if not self(probe)[-1][1]:     # nothing opens the model's turn after the last message
            raise TemplateRefused("the model's chat template writes no generation prompt (the model's turn)")

    def _render(self, messages: list[dict], add_generation_prompt: bool) -> str:
        meter = budget.Meter()
        try:
            with budget.metered(meter):
                return self._template.render(
                    messages=messages, add_generation_prompt=add_generation_prompt, bos_token=self.bos_token,
                    eos_token=self.eos_token, raise_exception=_raise, tools=None,
                    strftime_now=lambda f: _dt.datetime.now().strftime(f))
        except budget.Spent as exc:
            raise TemplateTooCostly(str(exc)) from None
        except TemplateRefused:
            raise
        except Exception as exc:     # any other error of the template's: a refusal, never a traceback
            raise TemplateRefused(f"the model's chat template failed: {_why(exc)}") from None
        finally:
            self.last_steps = meter.used

    def __call__(self, messages: Sequence[dict], *, add_generation_prompt: bool = True) -> list[Segment]:
        contents: list[str] = []
        shaped: list[dict] = []
        for i, m in enumerate(messages):
            role, content = m.get("role"), m.get("content")
            if role not in _ROLES:
                raise ChatFormatError(f"message {i + 1}: unknown role {role!r}")
            if role == "system" and i != 0:
                raise ChatFormatError(f"message {i + 1}: a system message is only allowed first")
            if not isinstance(content, str):
                raise ChatFormatError(f"message {i + 1}: content must be text")
            shaped.append({"role": _ROLES[role], "content": content})
        tag = secrets.token_hex(12)
        sentinels: list[str] = []
        fed: list[dict] = []
        fold = self.fold_system and shaped and shaped[0]["role"] == "system"
        pending_system = None
        for i, m in enumerate(shaped):
            if fold and i == 0:
                pending_system = m["content"]
                continue
            content = m["content"]
            if pending_system is not None and m["role"] == "user":
                content, pending_system = pending_system + "\n\n" + content, None
            s = f"\u2063SENTINEL{tag}{len(sentinels)}\u2063"
            sentinels.append(s)
            contents.append(content)
            fed.append({"role": m["role"], "content": s})
        if pending_system is not None:     # only a system prompt: its own user turn
            s = f"\u2063SENTINEL{tag}{len(sentinels)}\u2063"
            sentinels.append(s)
            contents.append(pending_system)
            fed.append({"role": "user", "content": s})
        try:
            text = self._render(fed, add_generation_prompt)
        except TemplateTooCostly:
            raise     # not a matter of roles: folding the system prompt would only spend it again
        except TemplateRefused:
            if self.fold_system or not shaped or shaped[0]["role"] != "system":
                raise
            self.fold_system = True     # e.g. Mistral: "Conversation roles must alternate ..."
            try:
                return self(messages, add_generation_prompt=add_generation_prompt)
            except TemplateRefused:
                self.fold_system = False
                raise
        return self._cut(text, tag, sentinels, contents, add_generation_prompt)

    def _cut(self, text: str, tag: str, sentinels: list[str], contents: list[str],
             add_generation_prompt: bool) -> list[Segment]:
        segs: list[Segment] = []
        pos = 0
        for s, content in zip(sentinels, contents):
            at = text.find(s, pos)
            if at < 0 or text.count(s) != 1:
                raise TemplateRefused("the model's chat template drops, repeats, reorders or rewrites message "
                                      "content, so it cannot be rendered with content kept as plain text")
            segs.append((text[pos:at], True))
            segs.append((content, False))
            pos = at + len(s)
        segs.append((text[pos:], True))
        if any(tag in t for t, ctrl in segs if ctrl):
            raise TemplateRefused("the model's chat template altered message content")
        if self.add_bos and self.bos_token and not text.startswith(self.bos_token):
            segs.insert(0, (self.bos_token, True))
        return _merge(segs)


def _joined(segs: list[Segment]) -> str:
    return "".join(t for t, _ in segs)


def from_llama(llama: Any) -> JinjaFormat:
    """The JinjaFormat of a loaded llama_cpp.Llama's GGUF metadata."""
    meta = dict(getattr(llama, "metadata", {}) or {})
    template = meta.get("tokenizer.chat_template", "")

    def piece(key: str) -> str:
        try:
            tid = int(meta.get(key, -1))
        except (TypeError, ValueError):
            return ""
        if tid < 0:
            return ""
        try:
            return llama.detokenize([tid], special=True).decode("utf-8", "replace")
        except Exception:
            return ""

    add_bos = str(meta.get("tokenizer.ggml.add_bos_token", "true")).lower() == "true"
    return JinjaFormat(template, bos_token=piece("tokenizer.ggml.bos_token_id"),
                       eos_token=piece("tokenizer.ggml.eos_token_id"), add_bos=add_bos)


Renderer = Callable[..., list[Segment]]

__all__ = ["JinjaFormat", "TemplateRefused", "TemplateTooCostly", "from_llama"]
