"""Scripted model: replays a JSON array of actions, one per step (tests, demos, bug reports).

Guards the contract that a script is either played exactly as written or refused with a
clear ModelError: a malformed file, a malformed item or running past the end never
turns into a guessed action.

`--model script:FILE.json` selects it. Each item is `{"reply": "text"}` or
`{"tool": "NAME", "args": {...}}`; `step()` returns that item's JSON text.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

from assistant.models.base import ModelError, StepResult

MAX_SCRIPT_BYTES = 8 * 1024 * 1024


def _check_item(index: int, item: object) -> dict:
    where = f"script item {index + 1}"
    if not isinstance(item, dict):
        raise ModelError(f"{where}: expected an object like {{\"reply\": ...}} or {{\"tool\": ..., \"args\": {{...}}}}, got {type(item).__name__}")
    keys = set(item)
    if keys == {"reply"}:
        if not isinstance(item["reply"], str):
            raise ModelError(f"{where}: \"reply\" must be a string")
        return item
    if keys in ({"tool"}, {"tool", "args"}):
        if not isinstance(item["tool"], str) or not item["tool"]:
            raise ModelError(f"{where}: \"tool\" must be a non-empty string")
        args = item.get("args", {})
        if not isinstance(args, dict):
            raise ModelError(f"{where}: \"args\" must be an object")
        return {"tool": item["tool"], "args": args}
    raise ModelError(
        f"{where}: expected exactly {{\"reply\"}} or {{\"tool\", \"args\"}} keys, got {sorted(keys)}"
    )


class _Verbatim(float):
    """A number the script spells that Python will not hold (an integer of thousands of digits,
    1e999): the item is then played as written, and the agent refuses it as an invalid step."""


def _int(literal: str) -> int | float:
    try:
        return int(literal)
    except ValueError:      # more digits than int() converts
        return _Verbatim("inf")


def _float(literal: str) -> float:
    value = float(literal)
    return value if value not in (float("inf"), float("-inf")) else _Verbatim("inf")


def _has_verbatim(value: object) -> bool:
    if isinstance(value, _Verbatim):
        return True
    if isinstance(value, dict):
        return any(_has_verbatim(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_verbatim(v) for v in value)
    return False


def _item_texts(text: str, count: int) -> list[str]:
    """The exact source text of each element of the (already parsed) top-level array."""
    decoder = json.JSONDecoder(parse_int=_int, parse_float=_float)
    ws = " \t\n\r"
    i = len(text) - len(text.lstrip(ws)) + 1      # after "["
    out: list[str] = []
    for _ in range(count):
        while text[i] in ws + ",":
            i += 1
        _, end = decoder.raw_decode(text, i)
        out.append(text[i:end])
        i = end
    return out


def load_script(path: str | os.PathLike[str]) -> list[dict]:
    """Read and validate a whole script up front, so a bad item fails before any step runs."""
    return [item for item, _ in _load(path)]


def _load(path: str | os.PathLike[str]) -> list[tuple[dict, str | None]]:
    """(item, its text as written when it must be played verbatim, else None) per item."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            raw = f.read(MAX_SCRIPT_BYTES + 1)
    except OSError as exc:
        raise ModelError(f"cannot read model script {p}: {exc.strerror or exc}") from None
    if len(raw) > MAX_SCRIPT_BYTES:
        raise ModelError(f"model script {p} is larger than {MAX_SCRIPT_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_int=_int, parse_float=_float)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"model script {p} is not valid JSON: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise ModelError(f"model script {p} cannot be read as JSON ({type(exc).__name__})") from None
    if not isinstance(data, list):
        raise ModelError(f"model script {p} must be a JSON array of actions, got {type(data).__name__}")
    items = [_check_item(i, item) for i, item in enumerate(data)]
    texts: list[str | None] = [None] * len(items)
    if any(_has_verbatim(item) for item in items):
        texts = [t if _has_verbatim(item) else None
                 for item, t in zip(items, _item_texts(text, len(items)))]
    return list(zip(items, texts))


class ScriptedModel:
    """A Model whose every step is the next item of a script file."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        loaded = _load(self.path)
        self.items = [item for item, _ in loaded]
        self._verbatim = [t for _, t in loaded]
        self.position = 0
        self.name = f"script:{self.path}"
        self.calls: list[list[dict]] = []   # the messages each step saw (for tests and replay)

    def step(
        self,
        messages: list[dict],
        schema: dict,
        *,
        max_tokens: int = 0,
        on_token: Callable[[str], None] | None = None,
    ) -> StepResult:
        if self.position >= len(self.items):
            raise ModelError(
                f"model script {self.path} is exhausted after {len(self.items)} step(s): "
                "add a {\"reply\": ...} item to end the turn"
            )
        item, verbatim = self.items[self.position], self._verbatim[self.position]
        self.position += 1
        self.calls.append([dict(m) for m in messages])
        text = verbatim if verbatim is not None else json.dumps(item, ensure_ascii=False)
        if on_token is not None:
            # Stream in small pieces, as a real backend would, so display code is exercised.
            for i in range(0, len(text), 16):
                on_token(text[i:i + 16])
        prompt_tokens = sum(len(m.get("content", "")) for m in messages) // 4
        return StepResult(text=text, prompt_tokens=prompt_tokens, evaluated_tokens=prompt_tokens,
                          completion_tokens=max(1, len(text) // 4))
