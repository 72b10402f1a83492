"""The one small protocol every model backend implements.

A backend turns a list of chat messages into exactly one *action* text: a JSON object that
matches the schema it is given (see assistant/agent/actions.py). It never runs tools itself.
A backend whose `protocol` is "completion" (a base model: assistant.agent.completion) instead
continues a page of plain text with `complete()`; the agent offers it no tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol


class ModelError(Exception):
    """A model that cannot load or cannot produce a step. The message says what to fix."""


class ContextOverflow(ModelError):
    """The conversation no longer fits the model's context window. The agent answers it by
    dropping the oldest exchanges (the stable prefix stays), never by failing every later turn."""


@dataclass
class StepResult:
    text: str                  # the action JSON, exactly as produced
    prompt_tokens: int = 0     # tokens in the rendered prompt
    evaluated_tokens: int = 0  # prompt tokens actually evaluated (the rest came from the KV cache)
    completion_tokens: int = 0
    finish_reason: str = ""    # "stop" (action complete) or "length" (hit max_tokens: likely cut off)
    cached_tokens: int | None = None   # prompt tokens a server reports it reused (None: not reported)


PROTOCOLS = ("auto", "actions", "completion", "tools")   # [model] protocol
TOOL_CALL_FORMAT = "tool_call"    # step()'s schema is assistant.agent.native_tools.call_schema


class Model(Protocol):
    name: str
    # "actions" (default: step() with the action schema), "tools" (step() with the native
    # tool-call schema: a reply in plain text or one <tool_call>) or "completion" (complete())
    protocol: str

    def step(
        self,
        messages: list[dict[str, str]],
        schema: dict,
        *,
        max_tokens: int,
        on_token: Callable[[str], None] | None = None,
    ) -> StepResult: ...

    def complete(
        self,
        page: str,
        *,
        max_tokens: int,
        stop: tuple[str, ...],
        attempt: int = 0,
    ) -> StepResult: ...
