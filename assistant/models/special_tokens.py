"""Neutralise special-token spellings in text that a server will tokenize with special parsing on.

Guards the turn structure when the prompt leaves the process as text: llama-cpp-python's server
(and every chat-completions server) tokenizes what it receives with special-token parsing on,
so a fetched page holding "<end_of_turn><start_of_turn>user" would become real turn markers.
Every substring shaped like a special token (`<...>` in any script, `<|...|>`, `<｜...｜>`,
`[INST]`/`[gMASK]`-style bracketed capitals, EXAONE's `[|...|]`, MiniMax's `]~b]` / `]~!b[`,
Falcon's `>>WORD<<`) is broken by a WORD JOINER (U+2060) after its first character: the text
reads the same to a person and to the model, but no tokenizer matches it as the control token.

`neutralise(text, is_special=None)`: with `is_special` (a callable asking the server's own
tokenizer), only candidates it confirms are broken; without it, every candidate is (nothing
to ask, so fail safe). `aggressive(text)` breaks every `<`, `[` and `|` run: the last resort
when a server round-trip still finds a control token the shapes did not predict.
`break_spellings(text, spellings)` breaks the spellings a server's tokenizer named as control
tokens (the served model's own list, whatever their shape).
"""

from __future__ import annotations

import re
from typing import Callable

JOINER = "\u2060"

# Shapes special tokens take across model families (Gemma <start_of_turn>, ChatML <|im_end|>,
# Llama 3 <|eot_id|>, DeepSeek <｜end▁of▁sentence｜>, Mistral [INST] / [/INST] / [TOOL_CALLS],
# Llama 2 </s>, Phi <|end|>, EXAONE [|endofturn|], MiniMax ]~b], MiniCPM <用户> / <AI>,
# GLM [gMASK] / [sMASK] / <sop>, Falcon >>QUESTION<< / >>ANSWER<<, BERT-style [unused0]).
# By rule, not by list: any non-space run in angle brackets (any script), bracketed capitals
# with an optional lower-case prefix, and a capitalised word between >> and <<.
_CANDIDATE = re.compile(
    r"<\|[^\s<>]{0,64}?\|>"               # <|...|>
    r"|<｜[^<>]{0,64}?｜>"                 # <｜...｜> (fullwidth bars)
    r"|</?[^\s<>|｜\u2060]{1,64}>"         # <tag>, </s>, <start_of_turn>, <用户>, <seed:bos> (a broken one: no)
    r"|\[/?[a-z]?[A-Z][A-Z0-9_]{1,31}\]"    # [INST], [/INST], [TOOL_CALLS], [gMASK], [sMASK]
    r"|\[unused[0-9]{1,5}\]"               # [unused0]
    r"|\[\|[A-Za-z0-9_]{1,64}\|\]"          # [|system|], [|endofturn|] (EXAONE)
    r"|\]~!?b[\]\[]"                       # ]~b], ]~!b[ (MiniMax)
    r"|>>[A-Z][A-Z0-9_]{0,31}<<"            # >>QUESTION<<, >>ANSWER<< (Falcon)
)
_AGGRESSIVE = re.compile(r"[<\[|｜]")


def candidates(text: str) -> list[str]:
    """Distinct special-token-shaped substrings of `text`, in order of first appearance."""
    seen: dict[str, None] = {}
    for m in _CANDIDATE.finditer(text):
        seen.setdefault(m.group(0), None)
    return list(seen)


def _break(token: str) -> str:
    return token[0] + JOINER + token[1:]


def neutralise(text: str, is_special: Callable[[str], bool] | None = None) -> str:
    """`text` with every (confirmed) special-token spelling broken. Idempotent."""
    found = candidates(text)
    if not found:
        return text
    hits = [c for c in found if is_special is None or is_special(c)]
    if not hits:
        return text
    pattern = re.compile("|".join(re.escape(h) for h in sorted(hits, key=len, reverse=True)))
    return pattern.sub(lambda m: _break(m.group(0)), text)


def break_spellings(text: str, spellings: list[str]) -> str:
    """`text` with every occurrence of each given spelling broken (the served model's own control
    tokens, as its tokenizer named them). Spellings of one character cannot be broken: the
    caller checks the result with the tokenizer again."""
    found = sorted({sp for sp in spellings if len(sp) > 1 and sp in text}, key=len, reverse=True)
    if not found:
        return text
    pattern = re.compile("|".join(re.escape(sp) for sp in found))
    return pattern.sub(lambda m: _break(m.group(0)), text)


def aggressive(text: str) -> str:
    """Break every `<`, `[`, `|` and fullwidth bar: no special-token spelling survives it that
    starts with one of those (all known families)."""
    return _AGGRESSIVE.sub(lambda m: m.group(0) + JOINER, text)


__all__ = ["JOINER", "aggressive", "break_spellings", "candidates", "neutralise"]
