"""Test support (no tests here): how many alternatives of the action schema a value satisfies
(a well-formed action satisfies exactly one, so a grammar built from the schema is unambiguous)."""

from __future__ import annotations

from assistant.agent.actions import ActionError, validate


def alternatives_matched(value, schema: dict) -> int:
    """The number of `schema["anyOf"]` alternatives VALUE validates against."""
    matched = 0
    for alt in schema["anyOf"]:
        try:
            validate(value, alt, "action")
            matched += 1
        except ActionError:
            pass
    return matched
