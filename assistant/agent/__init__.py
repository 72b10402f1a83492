"""The agent: the turn loop (loop.py), the actions and their schema, the prompt, streaming
display, interrupts and the typed events a turn reports.

The turn loop's names (`assistant.agent.Agent`, ...) import from here too.
"""

from assistant.agent.loop import (
    Agent, CallResult, DISPLAY_ONLY, FailedCall, Limits, MAX_TOOL_OUTPUT_CHARS, SECRET_REFUSED, TurnResult,
    reply_limit,
)

__all__ = [
    "Agent", "CallResult", "DISPLAY_ONLY", "FailedCall", "Limits", "MAX_TOOL_OUTPUT_CHARS",
    "SECRET_REFUSED", "TurnResult", "reply_limit",
]
