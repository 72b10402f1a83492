"""The work one render of a GGUF's chat template may do: a step budget, a depth bound and a
time bound, enforced inside the Jinja sandbox (jinja_format.py builds the environment).

Guards that a chat template (a file from a model hub, not ours) ends in bounded time on every
render, at load and at every turn: `{% for i in range(100000) %}{% for j in range(100000) %}`,
macros that call each other twice per level, or a filter chain over a long list would otherwise
hang loading or a turn. Every unit of work draws from one per-render `Meter`:

- each item a `{% for %}` takes (plain, filtered with `if`, or recursive through `loop(...)`);
- each run of a loop body, macro, call block or block: one step per template node in it (the
  tree is rewritten at compile, `rewrite`), so a step costs about the same whatever the body;
- each call (a macro, `caller()`, `loop(...)`, `self.block()`, a method), filter and test;
- the size of what an operation reads or builds: one step per item of a list, tuple, dict, set,
  dict view or namespace (walked deep, so a list of lists counts every inner item) and one per
  `CHARS_PER_STEP` characters of a string, charged before a filter, a comparison, a `~` or an
  output converts it.

Every output is also counted, characters in all (whatever buffer it goes to: a `{% set %}`
block, a macro's result): past `MAX_OUTPUT` characters the render stops too.

Past `MAX_STEPS` steps, past `MAX_DEPTH` nested macro calls, recursive loops or blocks, or past
`MAX_SECONDS` of wall-clock time (checked every few thousand steps, a backstop for work no
count sees), the render stops with `Spent`, a BaseException so no `except Exception` in Jinja's
own code can swallow it; the caller (jinja_format.py) turns it into a refusal naming the reason.
A spent meter stays spent: every later charge raises again.

The budget is per render: real templates render a 200-message agent conversation in 5,000 to
60,000 steps (bench/chat_template.py prints them), under 3% of MAX_STEPS, while a template
that spends it is refused within a second or two."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import time
import types
from collections.abc import Iterator
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from jinja2 import Environment
    from jinja2.nodes import Node, Template

MAX_STEPS = 2_000_000      # steps of work one render may do
MAX_DEPTH = 50             # nested macro calls / recursive loops / blocks (Python's stack holds ~150)
MAX_SECONDS = 5.0          # wall-clock backstop for one render
CALL_STEPS = 4             # a macro call, caller() or loop(...) before its body's own charge
BLOCK_STEPS = 48           # `self.block()` / `super()`: a block render sets up a new context
CHARS_PER_STEP = 64        # a string costs one step per this many characters
_CLOCK_EVERY = 4096        # steps between two looks at the clock
MAX_OUTPUT = 1 << 24       # characters one render may write, in all (what `{% set %}` blocks capture too)

ITER = "budget iter"       # internal filter names: a template cannot spell them (not identifiers)
WEIGH = "budget weigh"
CONCAT = "budget concat"
CHARGE = "budget charge"
WRITE = "budget write"     # an output expression: weighed, converted, its characters counted
WRITE_DATA = "budget write data"   # the template's own text: its characters counted

# Filters whose work does not grow with their input (len of a sized value, one item, a fallback).
_CONSTANT_FILTERS = frozenset(["length", "count", "first", "last", "default", "d", "attr"])
# Filters that run a test, a filter or an attribute lookup per item (sandboxed: a few steps' work).
_PER_ITEM_FILTERS = frozenset(["map", "select", "reject", "selectattr", "rejectattr"])
PER_ITEM_STEPS = 3
# Text filters that work word by word in Python or by regex: a step per character, not per 64.
_PER_CHAR_FILTERS = frozenset(["title", "wordcount", "striptags"])
# Tests that compare their operands (the others check a type or a flag).
_COMPARING_TESTS = frozenset(["eq", "equalto", "==", "ne", "!=", "lt", "lessthan", "<", "le", "<=", "gt",
                              "greaterthan", ">", "ge", ">=", "in", "sameas", "divisibleby"])


class Spent(BaseException):
    """The render's budget is spent; the message says which bound. A BaseException so that no
    `except Exception` inside Jinja can swallow it (jinja_format.py catches it by name)."""


class Meter:
    """What one render may still do."""

    __slots__ = ("left", "used", "depth", "tick", "deadline", "max_steps", "seconds", "written")

    def __init__(self, max_steps: int = MAX_STEPS, seconds: float | None = None) -> None:
        seconds = MAX_SECONDS if seconds is None else seconds    # read now: a test may raise it
        self.max_steps, self.seconds = max_steps, seconds
        self.left = max_steps
        self.used = 0       # steps charged so far
        self.depth = 0
        self.tick = 0
        self.written = 0    # characters output so far, in every buffer (a `{% set %}` block, a macro)
        self.deadline = time.monotonic() + seconds

    def charge(self, n: int = 1) -> None:
        self.left -= n
        self.used += n
        if self.left < 0:
            self.left = -1     # stays spent
            raise Spent(f"the model's chat template does more than {self.max_steps:,} steps of work "
                        "(loop steps, calls, items and characters handled) for one conversation")
        self.tick += n
        if self.tick >= _CLOCK_EVERY:
            self.tick = 0
            if time.monotonic() > self.deadline:
                self.left = -1
                raise Spent(f"the model's chat template took more than {self.seconds:g} s to render one "
                            "conversation")

    def write(self, n: int) -> None:
        """Count `n` characters written; past MAX_OUTPUT in all, the render is spent."""
        self.written += n
        if self.written > MAX_OUTPUT:
            self.left = -1
            raise Spent(f"the model's chat template writes more than {MAX_OUTPUT:,} characters for one "
                        "conversation")

    @contextlib.contextmanager
    def nested(self) -> Iterator[None]:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                self.left = -1
                raise Spent(f"the model's chat template nests macro calls, recursive loops or blocks "
                            f"more than {MAX_DEPTH} deep")
            yield
        finally:
            self.depth -= 1


_METER: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("chat_template_meter", default=None)


@contextlib.contextmanager
def metered(meter: Meter) -> Iterator[Meter]:
    """Run a compile or a render of a bounded template against `meter`."""
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)


def meter() -> Meter:
    m = _METER.get()
    if m is None:      # a bounded template used outside `metered`: a bug here, never unbounded work
        raise Spent("the chat template was rendered without a work budget")
    return m


try:
    from jinja2.utils import Namespace as _Namespace
except ImportError:     # no jinja2: jinja_format.py refuses "auto" before anything renders
    _Namespace = ()     # type: ignore[assignment,misc]

_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))   # d.items() prints its dict
_SEQUENCES = (list, tuple, set, frozenset, *_VIEWS)
_WALKED = (dict, *_SEQUENCES)
_SCALARS = frozenset([int, float, bool, type(None)])    # nothing to walk (the fast path)


def weigh(m: Meter, value: object) -> None:
    """Charge the size of `value`: its characters, or every item of it, walked deep (iteratively,
    charged before each level is opened, so the walk itself is bounded)."""
    if isinstance(value, str):
        if len(value) >= CHARS_PER_STEP:
            m.charge(len(value) // CHARS_PER_STEP)
        return
    if isinstance(value, range):
        m.charge(1 + len(value))
        return
    if not isinstance(value, _WALKED) and not isinstance(value, _Namespace):
        return
    stack: list[object] = [value]
    while stack:
        x = stack.pop()
        if type(x) in _SCALARS:
            continue
        if isinstance(x, str):
            if len(x) >= CHARS_PER_STEP:
                m.charge(len(x) // CHARS_PER_STEP)
        elif isinstance(x, dict):
            m.charge(1 + len(x))
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, _SEQUENCES):
            m.charge(1 + len(x))
            stack.extend(x)
        elif isinstance(x, range):
            m.charge(1 + len(x))
        elif isinstance(x, _Namespace):      # `{{ ns }}` prints every value it holds
            stack.append(object.__getattribute__(x, "_Namespace__attrs"))


class Steps:
    """An iterable that charges `weight` steps per item it yields (a for loop's items, a lazy
    sequence a filter consumes). Keeps `len()` where the underlying value has one (loop.length,
    loop.last)."""

    __slots__ = ("_inner", "_weight")

    def __init__(self, inner: object, weight: int = 1) -> None:
        self._inner, self._weight = inner, weight

    def __iter__(self) -> Iterator[object]:
        m, w = meter(), self._weight
        for item in self._inner:
            m.charge(w)
            yield item

    def __len__(self) -> int:
        return len(self._inner)

    def __bool__(self) -> bool:      # as the value itself tests (a generator is true)
        return bool(self._inner)

    def __reversed__(self) -> Iterator[object]:
        m, w = meter(), self._weight
        for item in reversed(self._inner):
            m.charge(w)
            yield item


def metered_arg(m: Meter, value: object) -> object:
    """An argument handed to a filter, test or call: an iterator is charged as it is consumed,
    anything else by its size now."""
    if isinstance(value, (types.GeneratorType, Iterator)) and not isinstance(value, Steps):
        return Steps(value)
    weigh(m, value)
    return value


def _iter_filter(value: object) -> object:
    return value if isinstance(value, Steps) else Steps(value)


def _weigh_filter(value: object) -> object:
    if isinstance(value, str) and len(value) < CHARS_PER_STEP:    # the common case: nothing to charge
        return value
    weigh(meter(), value)
    return value


def _write_filter(_context: object, value: object) -> str:
    """An output expression: charged by its size, converted as Jinja would (`str`), counted."""
    m = meter()
    weigh(m, value)
    text = value if isinstance(value, str) else str(value)
    m.write(len(text))
    return text


def _write_data_filter(_context: object, text: str) -> str:
    meter().write(len(text))
    return text


def _charge_filter(_context: object, steps: int) -> str:
    """At the top of a loop body, a macro or a call block: the size of that body in template
    nodes, so a step costs about the same whatever the body holds."""
    meter().charge(steps)
    return ""


def bounded_filter(name: str, fn: Callable[..., object]) -> Callable[..., object]:
    """A filter (or test) that charges a step, and what it reads unless it is a constant-time one;
    the filters that call a test, a filter or an attribute lookup per item charge per item too."""
    from jinja2.utils import _PassArg

    cheap = name in _CONSTANT_FILTERS
    per_item = name in _PER_ITEM_FILTERS
    per_char = name in _PER_CHAR_FILTERS
    at = 0 if _PassArg.from_obj(fn) is None else 1     # the value follows a context/environment argument

    @functools.wraps(fn)      # keeps jinja's pass_context / pass_environment marker
    def bounded(*args: object, **kwargs: object) -> object:
        m = meter()
        m.charge(1)
        if cheap:
            args = tuple(Steps(a) if isinstance(a, (types.GeneratorType, Iterator)) else a for a in args)
        else:
            args = tuple(metered_arg(m, a) for a in args)
            kwargs = {k: metered_arg(m, v) for k, v in kwargs.items()}
            if per_item and len(args) > at:
                args = (*args[:at], Steps(args[at], PER_ITEM_STEPS), *args[at + 1:])
            if per_char and len(args) > at and isinstance(args[at], str):
                m.charge(len(args[at]))
        result = fn(*args, **kwargs)
        weigh(m, result)
        return result

    return bounded


def bounded_test(name: str, fn: Callable[..., object]) -> Callable[..., object]:
    if name in _COMPARING_TESTS:
        return bounded_filter(name, fn)

    @functools.wraps(fn)
    def bounded(*args: object, **kwargs: object) -> object:
        meter().charge(1)
        return fn(*args, **kwargs)

    return bounded


def install(env: Environment, check_size: Callable[[int], None]) -> None:
    """Bound every filter and test of `env` and add the internal filters `rewrite` inserts.
    `check_size(n)` refuses a string of n characters (the `~` operator's result)."""
    from jinja2.runtime import str_join
    from jinja2.utils import pass_context

    def concat(pieces: tuple) -> str:
        m = meter()
        m.charge(1)
        for p in pieces:
            weigh(m, p)
        texts = [p if isinstance(p, str) else str(p) for p in pieces]
        check_size(sum(len(t) for t in texts))
        return str_join(texts)

    for name, fn in list(env.filters.items()):
        env.filters[name] = bounded_filter(name, fn)
    for name, fn in list(env.tests.items()):
        env.tests[name] = bounded_test(name, fn)
    env.filters[ITER] = _iter_filter
    env.filters[WEIGH] = _weigh_filter
    env.filters[CONCAT] = concat
    env.filters[CHARGE] = pass_context(_charge_filter)   # a context filter is never folded at compile
    env.filters[WRITE] = pass_context(_write_filter)
    env.filters[WRITE_DATA] = pass_context(_write_data_filter)


def _body_weight(body: list) -> int:
    """Template nodes in a body, not counting nested loops, macros, call blocks and blocks (they
    charge their own bodies when they run)."""
    from jinja2 import nodes

    n = 1
    stack = list(body)
    while stack:
        node = stack.pop()
        n += 1
        if not isinstance(node, (nodes.For, nodes.Macro, nodes.CallBlock, nodes.Block)):
            stack.extend(node.iter_child_nodes())
    return n


def rewrite(tree: Template, env: Environment) -> Template:
    """Rewrite a parsed template so every for loop draws a step per item (filtered or not) and
    its body's weight per iteration run, every macro and call block its body's weight per call,
    every output, comparison operand and `~` operand is weighed before Python converts or
    compares it, every output (the template's own text too) is counted against MAX_OUTPUT, and `~`
    is size-bounded like `+`."""
    from jinja2 import nodes
    from jinja2.visitor import NodeTransformer

    def wrap(node: Node, name: str) -> Node:
        return nodes.Filter(node, name, [], [], None, None, lineno=node.lineno)

    def charged(body: list, lineno: int) -> list:
        cost = nodes.Const(_body_weight(body), lineno=lineno)
        return [nodes.ExprStmt(nodes.Filter(cost, CHARGE, [], [], None, None, lineno=lineno), lineno=lineno), *body]

    class _Rewrite(NodeTransformer):
        def visit_For(self, node: Node) -> Node:
            node = self.generic_visit(node)
            node.iter = wrap(node.iter, ITER)
            node.body = charged(node.body, node.lineno)
            return node

        def visit_Macro(self, node: Node) -> Node:
            node = self.generic_visit(node)
            node.body = charged(node.body, node.lineno)
            return node

        visit_CallBlock = visit_Macro
        visit_Block = visit_Macro       # a block runs again on each `self.name()` / `super()`

        def visit_Output(self, node: Node) -> Node:
            node = self.generic_visit(node)
            node.nodes = [wrap(n, WRITE_DATA if isinstance(n, nodes.TemplateData) else WRITE) for n in node.nodes]
            return node

        def visit_Compare(self, node: Node) -> Node:
            node = self.generic_visit(node)
            node.expr = wrap(node.expr, WEIGH)
            for op in node.ops:
                op.expr = wrap(op.expr, WEIGH)
            return node

        def visit_Concat(self, node: Node) -> Node:
            node = self.generic_visit(node)
            return wrap(nodes.Tuple(node.nodes, "load", lineno=node.lineno), CONCAT)

    tree = _Rewrite().visit(tree)
    tree.set_environment(env)
    return tree


__all__ = ["MAX_STEPS", "MAX_DEPTH", "MAX_SECONDS", "MAX_OUTPUT", "CHARS_PER_STEP", "Meter", "Spent", "metered", "meter",
           "weigh", "Steps", "metered_arg", "bounded_filter", "install", "rewrite"]
