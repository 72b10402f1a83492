"""Actions: the only two things a model step may produce, and the schema that pins them down.

Guards the boundary between model output and the agent. Every step of every backend is either
`{"reply": "<text>"}` or `{"tool": "<NAME>", "args": {...}}` with that tool's arguments, with
every string bounded. `action_schema(tools)` is the JSON schema the llama.cpp backend compiles
into a grammar (so a small model cannot emit a broken tool call); `parse_action(text, tools)` is
the strict check applied to *every* step, grammar or not (the scripted backend has none): bad
JSON, duplicate keys, unknown tools, missing/extra/mistyped/oversized arguments are all a
specific ActionError, never a best-effort guess.

Only a small, explicit subset of JSON schema is understood (see SUPPORTED_KEYWORDS); a tool
declaring anything else is a programming error reported at schema build time, because a
keyword the grammar and the validator silently ignore would be an unenforced promise.
"""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, NoReturn, Union

from policy.strict_json import unique_keys

if TYPE_CHECKING:
    from assistant.tools.base import Tool

# Strings without an explicit maxLength get this bound (in characters).
DEFAULT_MAX_STRING = 4000
# Arrays without an explicit maxItems get this bound.
DEFAULT_MAX_ITEMS = 64
# Longest reply text a step may carry.
DEFAULT_MAX_REPLY = 4000
# Whole action text we are willing to parse at all (bytes of UTF-8).
MAX_ACTION_BYTES = 512 * 1024
# Object nesting we accept in tool schemas and in actions.
MAX_DEPTH = 8
# Longest number literal an action may spell (characters). Python refuses to convert integers
# of more than 4300 digits, and no tool argument needs more than a few: a longer number is an
# invalid step, not an exception far from here.
MAX_NUMBER_CHARS = 40

SUPPORTED_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items",
    "enum", "const", "minLength", "maxLength", "minimum", "maximum",
    "minItems", "maxItems", "description", "title", "default", "examples",
})
SUPPORTED_TYPES = ("object", "string", "integer", "number", "boolean", "array")

_TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_SURROGATE = re.compile("[\ud800-\udfff]")


class ActionError(ValueError):
    """A model step that is not a valid action. The message says exactly what is wrong."""


class SchemaError(ValueError):
    """A tool whose parameter schema uses something this module cannot enforce."""


@dataclass(frozen=True)
class Reply:
    text: str


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, object] = field(default_factory=dict)


Action = Union[Reply, ToolCall]


# ---------------------------------------------------------------------------------------------
# Schema construction


def _bounded(schema: object, where: str, depth: int = 0) -> dict:
    """Check a tool parameter schema against the supported subset; return a copy with every
    string and array given an explicit bound and every object closed (additionalProperties
    false)."""
    if depth > MAX_DEPTH:
        raise SchemaError(f"{where}: nested deeper than {MAX_DEPTH} levels")
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be an object, got {type(schema).__name__}")
    unknown = sorted(set(schema) - SUPPORTED_KEYWORDS)
    if unknown:
        raise SchemaError(
            f"{where}: unsupported schema keyword(s) {', '.join(unknown)} "
            f"(supported: {', '.join(sorted(SUPPORTED_KEYWORDS))})"
        )
    out = copy.deepcopy(schema)
    if "const" in out:
        if not isinstance(out["const"], (str, int, bool)) or isinstance(out["const"], float):
            raise SchemaError(f"{where}: const must be a string, integer or boolean")
        return out
    if "enum" in out:
        values = out["enum"]
        if not (isinstance(values, list) and values
                and all(isinstance(v, (str, int, bool)) for v in values)):
            raise SchemaError(f"{where}: enum must be a non-empty list of strings/integers/booleans")
        return out
    t = out.get("type")
    if t not in SUPPORTED_TYPES:
        raise SchemaError(f"{where}: type must be one of {', '.join(SUPPORTED_TYPES)}, got {t!r}")
    if t == "string":
        lo = out.get("minLength", 0)
        hi = out.get("maxLength", DEFAULT_MAX_STRING)
        if not (isinstance(lo, int) and isinstance(hi, int) and 0 <= lo <= hi):
            raise SchemaError(f"{where}: minLength/maxLength must be integers with 0 <= min <= max")
        out["maxLength"] = hi
    elif t in ("integer", "number"):
        for k in ("minimum", "maximum"):
            if k in out and (isinstance(out[k], bool) or not isinstance(out[k], (int, float))):
                raise SchemaError(f"{where}: {k} must be a number")
    elif t == "array":
        if "items" not in out:
            raise SchemaError(f"{where}: an array needs an items schema")
        out["items"] = _bounded(out["items"], f"{where}[]", depth + 1)
        lo = out.get("minItems", 0)
        hi = out.get("maxItems", DEFAULT_MAX_ITEMS)
        if not (isinstance(lo, int) and isinstance(hi, int) and 0 <= lo <= hi):
            raise SchemaError(f"{where}: minItems/maxItems must be integers with 0 <= min <= max")
        out["maxItems"] = hi
    elif t == "object":
        props = out.get("properties", {})
        if not isinstance(props, dict):
            raise SchemaError(f"{where}: properties must be an object")
        if out.get("additionalProperties", False) is not False:
            raise SchemaError(f"{where}: additionalProperties must be false (every argument named)")
        required = out.get("required", [])
        if not (isinstance(required, list) and all(isinstance(r, str) for r in required)):
            raise SchemaError(f"{where}: required must be a list of property names")
        missing = [r for r in required if r not in props]
        if missing:
            raise SchemaError(f"{where}: required names unknown properties: {', '.join(missing)}")
        out["properties"] = {k: _bounded(v, f"{where}.{k}", depth + 1) for k, v in props.items()}
        out["required"] = list(required)
        out["additionalProperties"] = False
    return out


def action_schema(tools: Iterable["Tool"], *, max_reply: int = DEFAULT_MAX_REPLY) -> dict:
    """The JSON schema of one model step: exactly one of a reply or one call of one tool.

    `tools` are assistant.tools.base.Tool objects (name, description, parameters, ...).
    Raises SchemaError when a tool's schema cannot be enforced."""
    alternatives: list[dict] = [{
        "type": "object",
        "properties": {"reply": {"type": "string", "minLength": 1, "maxLength": int(max_reply)}},
        "required": ["reply"],
        "additionalProperties": False,
    }]
    seen: set[str] = set()
    for tool in tools:
        name = tool.name
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise SchemaError(f"tool name {name!r} must match {_TOOL_NAME.pattern}")
        if name in seen:
            raise SchemaError(f"tool {name!r} is listed twice")
        seen.add(name)
        params = _bounded(tool.parameters, f"tool {name}: parameters")
        if params.get("type") != "object":
            raise SchemaError(f"tool {name}: parameters must be an object schema")
        alternatives.append({
            "type": "object",
            "properties": {"tool": {"const": name}, "args": params},
            "required": ["tool", "args"],
            "additionalProperties": False,
        })
    return {"anyOf": alternatives}


# ---------------------------------------------------------------------------------------------
# Validation (the same subset)


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
               (dict, "object"))   # bool before int: True is an int too


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), type(value).__name__)


def _short(value: object, n: int = 40) -> str:
    s = json.dumps(value, ensure_ascii=False)
    return s if len(s) <= n else s[: n - 1] + "…"


def validate(value: object, schema: dict, where: str) -> None:
    """Raise ActionError naming `where` if `value` does not satisfy the (bounded) schema."""
    if "const" in schema:
        if _type_name(value) != _type_name(schema["const"]) or value != schema["const"]:
            raise ActionError(f"{where} must be {_short(schema['const'])}")
        return
    if "enum" in schema:
        if not any(_type_name(value) == _type_name(v) and value == v for v in schema["enum"]):
            allowed = ", ".join(_short(v) for v in schema["enum"])
            raise ActionError(f"{where} must be one of {allowed}, got {_short(value)}")
        return
    t = schema.get("type")
    actual = _type_name(value)
    if t == "number" and actual == "integer":
        actual = "number"
    if actual != t:
        raise ActionError(f"{where} must be {'an' if t in ('integer', 'object', 'array') else 'a'} {t}, got {actual}")
    if t == "string":
        if len(value) < schema.get("minLength", 0):
            raise ActionError(f"{where} must be at least {schema['minLength']} characters")
        if len(value) > schema.get("maxLength", DEFAULT_MAX_STRING):
            raise ActionError(
                f"{where} is {len(value)} characters; the limit is {schema.get('maxLength', DEFAULT_MAX_STRING)}"
            )
    elif t in ("integer", "number"):
        if isinstance(value, float) and not math.isfinite(value):
            raise ActionError(f"{where} must be a finite number")
        if "minimum" in schema and value < schema["minimum"]:
            raise ActionError(f"{where} must be >= {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ActionError(f"{where} must be <= {schema['maximum']}, got {value}")
    elif t == "array":
        if len(value) < schema.get("minItems", 0):
            raise ActionError(f"{where} needs at least {schema['minItems']} items")
        if len(value) > schema.get("maxItems", DEFAULT_MAX_ITEMS):
            raise ActionError(f"{where} has {len(value)} items; the limit is {schema.get('maxItems', DEFAULT_MAX_ITEMS)}")
        for i, item in enumerate(value):
            validate(item, schema["items"], f"{where}[{i}]")
    elif t == "object":
        props = schema.get("properties", {})
        extra = [k for k in value if k not in props]
        if extra:
            known = ", ".join(props) or "none"
            raise ActionError(f"{where} has unknown field(s) {', '.join(map(repr, extra))} (allowed: {known})")
        missing = [k for k in schema.get("required", []) if k not in value]
        if missing:
            raise ActionError(f"{where} is missing required field(s) {', '.join(map(repr, missing))}")
        for k, v in value.items():
            validate(v, props[k], f"{where}.{k}")


# ---------------------------------------------------------------------------------------------
# Parsing


_no_duplicates = unique_keys(lambda key: ActionError(f"duplicate key {key!r} in the action"))


def _no_constants(name: str) -> NoReturn:
    raise ActionError(f"{name} is not valid JSON")


def _parse_int(literal: str) -> int:
    if len(literal) > MAX_NUMBER_CHARS:
        raise ActionError(f"a number in the action has {len(literal.lstrip('-'))} digits; "
                          f"numbers here have at most {MAX_NUMBER_CHARS}")
    return int(literal)


def _parse_float(literal: str) -> float:
    if len(literal) > MAX_NUMBER_CHARS:
        raise ActionError(f"a number in the action is {len(literal)} characters long; "
                          f"numbers here have at most {MAX_NUMBER_CHARS}")
    value = float(literal)
    if not math.isfinite(value):
        raise ActionError(f"the number {literal} in the action is out of range")
    return value


def _check_numbers(value: object) -> None:
    """The same bounds for an already-decoded value (a script item): a huge integer or a
    non-finite float is an invalid step."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if abs(value) >= 10 ** MAX_NUMBER_CHARS:
            raise ActionError(f"a number in the action has more than {MAX_NUMBER_CHARS} digits")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ActionError("a number in the action is out of range (not finite)")
    elif isinstance(value, dict):
        for v in value.values():
            _check_numbers(v)
    elif isinstance(value, list):
        for v in value:
            _check_numbers(v)


def _depth(value: object, d: int = 0) -> int:
    if d > MAX_DEPTH + 2:
        return d
    if isinstance(value, dict):
        return max([_depth(v, d + 1) for v in value.values()] or [d + 1])
    if isinstance(value, list):
        return max([_depth(v, d + 1) for v in value] or [d + 1])
    return d


def parse_json(text: str) -> dict:
    """Strict JSON object parse: one object, no duplicate keys, no NaN/Infinity, bounded size."""
    if not isinstance(text, str):
        raise ActionError(f"an action must be text, got {type(text).__name__}")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_ACTION_BYTES:
        raise ActionError(f"the action is larger than {MAX_ACTION_BYTES} bytes")
    stripped = text.strip()
    if not stripped:
        raise ActionError("the model produced no action (empty output)")
    try:
        value = json.loads(stripped, object_pairs_hook=_no_duplicates, parse_constant=_no_constants,
                           parse_int=_parse_int, parse_float=_parse_float)
    except json.JSONDecodeError as exc:
        raise ActionError(f"the action is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ActionError("the action is nested too deeply") from None
    except ActionError:
        raise
    except ValueError as exc:   # anything else json/int/float refuse: an invalid step, never a crash
        raise ActionError(f"the action is not valid JSON ({type(exc).__name__})") from None
    if not isinstance(value, dict):
        raise ActionError(f"an action must be a JSON object, got {_type_name(value)}")
    if _depth(value) > MAX_DEPTH + 2:
        raise ActionError("the action is nested too deeply")
    _check_text(value)
    return value


def _check_text(value: object) -> None:
    """JSON may spell a lone UTF-16 surrogate (\\ud800); Python then holds a string that cannot
    be encoded as UTF-8 and would fail far from here (writing a note). Refuse it at the door."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise ActionError("the action contains an invalid \\u escape (a lone surrogate)")
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_text(k)
            _check_text(v)
    elif isinstance(value, list):
        for v in value:
            _check_text(v)


def parse_action(text: str, tools: Iterable["Tool"], *, max_reply: int = DEFAULT_MAX_REPLY) -> Action:
    """Turn one model step into a Reply or a ToolCall, or raise ActionError saying why not."""
    value = parse_json(text)
    return action_from_value(value, tools, max_reply=max_reply)


def action_from_value(value: object, tools: Iterable["Tool"], *, max_reply: int = DEFAULT_MAX_REPLY) -> Action:
    """Like parse_action, for an already-decoded JSON value (e.g. one entry of a script)."""
    if not isinstance(value, dict):
        raise ActionError(f"an action must be a JSON object, got {_type_name(value)}")
    _check_text(value)
    _check_numbers(value)
    keys = set(value)
    if keys == {"reply"}:
        text = value["reply"]
        if not isinstance(text, str):
            raise ActionError(f"reply must be a string, got {_type_name(text)}")
        if not text.strip():
            raise ActionError("reply is empty")
        if len(text) > max_reply:
            raise ActionError(f"reply is {len(text)} characters; the limit is {max_reply}")
        return Reply(text)
    if "reply" in keys:
        raise ActionError("an action is either {\"reply\": ...} or {\"tool\": ..., \"args\": ...}, not both")
    if keys != {"tool", "args"}:
        if "tool" in keys and "args" not in keys:
            raise ActionError("a tool call needs \"args\" (use {} when the tool takes none)")
        extra = sorted(keys - {"tool", "args"})
        if extra and "tool" in keys:
            raise ActionError(f"unknown field(s) in the action: {', '.join(map(repr, extra))}")
        raise ActionError('an action must be an object with the single key "reply" (your answer) or the '
                          'keys "tool" (a tool\'s name) and "args" (its arguments)')
    name = value["tool"]
    if not isinstance(name, str):
        raise ActionError(f"tool must be a tool name (string), got {_type_name(name)}")
    by_name = {t.name: t for t in tools}
    if name not in by_name:
        known = ", ".join(sorted(by_name)) or "none"
        raise ActionError(f"unknown tool {_short(name)} (tools: {known})")
    args = value["args"]
    if not isinstance(args, dict):
        raise ActionError(f"args of {name} must be an object, got {_type_name(args)}")
    try:
        params = _bounded(by_name[name].parameters, f"tool {name}: parameters")
    except SchemaError as exc:
        raise ActionError(str(exc)) from None
    validate(args, params, f"{name} args")
    return ToolCall(name, args)


def action_json(action: Action) -> str:
    """Canonical JSON text of an action (what a scripted step or a replay stores)."""
    if isinstance(action, Reply):
        return json.dumps({"reply": action.text}, ensure_ascii=False)
    return json.dumps({"tool": action.name, "args": action.args}, ensure_ascii=False)


def reply_only_schema(schema: dict) -> dict:
    """The same step schema with the tool calls taken out: a step that may only reply (after a
    landed save: assistant.agent.loop)."""
    return {"anyOf": [alt for alt in schema["anyOf"] if "reply" in alt["properties"]]}

