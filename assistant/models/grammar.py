"""JSON schema (the subset of assistant.agent.actions) -> GBNF grammar for llama.cpp.

Guards that the grammar enforces what the validator checks: the same closed objects, the same
property order, the same string and array bounds. Written here rather than using
llama-cpp-python's converter because that one spells `maxLength: N` as N nested optional
groups, which llama.cpp refuses past about a thousand characters; GBNF's own `x{0,N}`
repetition has no such problem. Key order is fixed (required properties first, in declared
order, then optional ones), so a tool call always names the tool before its arguments and the
grammar can narrow the arguments to that tool.
"""

from __future__ import annotations

import json
import re

_CHAR = r'[^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'


def _lit(value: str) -> str:
    """A GBNF string literal matching exactly `value`."""
    out = []
    for ch in value:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


class _Builder:
    def __init__(self) -> None:
        self.rules: dict[str, str] = {}

    def add(self, name: str, body: str) -> str:
        name = re.sub(r"[^a-zA-Z0-9-]+", "-", name).strip("-") or "r"
        base, i = name, 1
        while name in self.rules and self.rules[name] != body:
            i += 1
            name = f"{base}-{i}"
        self.rules[name] = body
        return name

    def json_literal(self, value) -> str:
        # A constant serialized as JSON, matched as one literal.
        return _lit(json.dumps(value, ensure_ascii=False))

    def value(self, schema: dict, name: str) -> str:
        if "const" in schema:
            return self.add(name, self.json_literal(schema["const"]))
        if "enum" in schema:
            return self.add(name, " | ".join(self.json_literal(v) for v in schema["enum"]))
        t = schema["type"]
        if t == "string":
            lo = schema.get("minLength", 0)
            hi = schema["maxLength"]
            return self.add(name, f'"\\"" char{{{lo},{hi}}} "\\""')
        if t == "boolean":
            return self.add(name, '"true" | "false"')
        if t == "integer":
            lo, hi = schema.get("minimum"), schema.get("maximum")
            if isinstance(lo, int) and isinstance(hi, int) and 0 <= lo <= hi:
                return self.add(name, " | ".join(integer_range(lo, hi)))
            return self.add(name, '"-"? ("0" | [1-9] [0-9]{0,15})')
        if t == "number":
            return self.add(name, '"-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,3})?')
        if t == "array":
            item = self.value(schema["items"], name + "-item")
            lo, hi = schema.get("minItems", 0), schema["maxItems"]
            if hi == 0:
                return self.add(name, '"[" ws "]"')
            rest_lo, rest_hi = max(lo - 1, 0), hi - 1
            body = f'"[" ws {item} ("," ws {item}){{{rest_lo},{rest_hi}}} ws "]"'
            if lo == 0:
                body = f'"[" ws ({item} ("," ws {item}){{0,{rest_hi}}} ws)? "]"'
            return self.add(name, body)
        if t == "object":
            return self.obj(schema, name)
        raise ValueError(f"{name}: cannot build a grammar for type {t!r}")

    def obj(self, schema: dict, name: str) -> str:
        props = schema.get("properties", {})
        required = [k for k in props if k in set(schema.get("required", []))]
        optional = [k for k in props if k not in set(required)]
        kv = {}
        for k in props:
            val = self.value(props[k], f"{name}-{k}")
            kv[k] = self.add(f"{name}-{k}-kv", f'{_lit(json.dumps(k))} ws ":" ws {val}')
        parts = [kv[k] for k in required]
        body = '"{" ws '
        if parts:
            body += ' "," ws '.join(parts)
            for k in optional:
                body += f' ("," ws {kv[k]})?'
        elif optional:
            # No required key: any ordered subset of the optional ones, commas in between.
            # Build: opt(i) = kv_i rest(i+1) | opt(i+1);   rest(i) = ("," ws kv_i)? rest(i+1)
            rest_names: dict[int, str] = {}
            n = len(optional)
            rest_names[n] = ""
            for i in range(n - 1, -1, -1):
                nxt = rest_names[i + 1]
                rest_names[i] = self.add(f"{name}-rest{i}", f'("," ws {kv[optional[i]]})? {nxt}'.strip())
            alts = []
            for i in range(n):
                alts.append(f"{kv[optional[i]]} {rest_names[i + 1]}".strip())
            body += "(" + " | ".join(alts) + ")?"
        body += ' ws "}"'
        return self.add(name, body)


def _digit_runs(lo: int, hi: int) -> list[tuple[str, str, int]]:
    """[lo, hi] (same number of digits) as runs of (shared prefix, one digit range, k free digits)."""
    runs = []
    start = lo
    while start <= hi:
        k = 0
        while k + 1 < len(str(start)) and start % 10 ** (k + 1) == 0 and start + 10 ** (k + 1) - 1 <= hi:
            k += 1
        step = 10 ** k
        block_end = start - start % (step * 10) + step * 10 - 1   # the end of start's 10**(k+1) block
        end = start + (min(hi, block_end) - start + 1) // step * step - 1
        a, b = str(start), str(end)
        shared = len(a) - k - 1
        runs.append((a[:shared], f"{a[shared]}{b[shared]}", k))
        start = end + 1
    return runs


def integer_range(lo: int, hi: int) -> list[str]:
    """GBNF alternatives matching exactly the decimal integers lo..hi (0 <= lo <= hi), no leading
    zeros: the grammar holds a model to an argument's bounds as the validator does, so a small
    model cannot spend a step on `"limit": 1000000000000000`."""
    out = []
    for digits in range(len(str(lo)), len(str(hi)) + 1):
        first = max(lo, 10 ** (digits - 1) if digits > 1 else 0)
        last = min(hi, 10 ** digits - 1)
        for prefix, (a, b), free in _digit_runs(first, last):
            parts = ([f'"{prefix}"'] if prefix else []) + [f'"{a}"' if a == b else f"[{a}-{b}]"]
            parts += ["[0-9]"] * free
            out.append(" ".join(parts))
    return out


def schema_to_gbnf(schema: dict) -> str:
    """GBNF for an action schema from assistant.agent.actions.action_schema (or any bounded schema of
    the same subset). The root may be an anyOf of object schemas."""
    b = _Builder()
    if "anyOf" in schema:
        alts = [b.value(s, f"alt{i}") for i, s in enumerate(schema["anyOf"])]
        root = " | ".join(alts)
    else:
        root = b.value(schema, "value")
    lines = [f"root ::= {root}", f"char ::= {_CHAR}", 'ws ::= " "?']
    lines += [f"{k} ::= {v}" for k, v in b.rules.items()]
    return "\n".join(lines) + "\n"


def _reply_rules(banned: list[str], n: int) -> list[str]:
    """GBNF rules `reply ::= ...`: text of 1..n+1 characters that does not start with "<", "{" or
    any of the `banned` words (lower-case ASCII). A trie of the words: at each node a character
    that leaves every word frees the rest; a word's last character is not allowed at all."""
    trie: dict = {}
    for word in banned:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node["$"] = True
    rules: list[str] = [f"tail ::= [^\\x00]{{0,{n}}}"]

    def rule(node: dict, name: str, first: bool) -> None:
        kids = sorted(k for k in node if k != "$")
        alts = [f"[^{'<{' if first else ''}{''.join(kids)}\\x00] tail"]
        for i, ch in enumerate(kids):
            child = node[ch]
            if "$" in child:
                continue              # the whole word: no reply starts with it
            sub = f"{name}-{i}"
            rule(child, sub, False)
            alts.append(f'"{ch}" {sub}')
        body = " | ".join(alts)
        rules.append(f"{name} ::= {body}" if first else f"{name} ::= ( {body} )?")

    rule(trie, "reply", True)
    return rules


def tool_call_gbnf(step_schema: dict, *, open_token: int | None = None, close_token: int | None = None) -> str:
    """GBNF for a step of the native tool-call protocol (assistant.agent.native_tools.call_schema):
    either `<tool_call>\n` + one call object of its `anyOf` + `\n</tool_call>`, or that call object
    alone, or reply text (at most its `reply` maxLength characters) that does not start with "<",
    "{" or the first word of a tool's name ("memory", "file", "web").

    `open_token`/`close_token`: the vocabulary's own single tokens for the tags (Qwen2.5 has
    them). A grammar of literal text only matches the tags spelled piece by piece, which the
    model never does: measured on the 1.5B model, the grammar then steered every call into the
    reply branch as bare JSON. A reply may not start with "{" either, so a bare JSON call cannot
    pass for an answer, nor with a tool's first word: the same model's likeliest first token
    (p 0.43) was "memory", for a call written as a command line (`memory_edit people/lina.md ...`)
    that a correction did not cure, four tries running.

    A schema marked `"calls": False` gives the reply branch alone (the step after a landed save)."""
    n = max(0, int(step_schema["reply"]["maxLength"]) - 1)
    names = [alt["properties"]["name"]["const"] for alt in step_schema["anyOf"]]
    banned = sorted({name.split("_")[0] for name in names if re.fullmatch(r"[a-z]+(_[a-z0-9]+)*", name)})
    if step_schema.get("calls") is False:       # native_tools.reply_only_call_schema: a reply, nothing else
        return "root ::= reply\n" + "\n".join(_reply_rules(banned, n)) + "\n"
    body = schema_to_gbnf({"anyOf": step_schema["anyOf"]}).replace("root ::= ", "call ::= ", 1)
    opening = f'( <[{int(open_token)}]> | "<tool_call>" )' if open_token is not None else '"<tool_call>"'
    closing = f'( <[{int(close_token)}]> | "</tool_call>" )' if close_token is not None else '"</tool_call>"'
    return (f'root ::= {opening} "\\n" call "\\n" {closing} | call | reply\n'
            + "\n".join(_reply_rules(banned, n)) + "\n" + body)
