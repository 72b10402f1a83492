"""The real model tools with their string parameters capped short (no tests here): a step of a
real model under such a schema always fits a small max_tokens, so the llama tests stay fast."""

from __future__ import annotations

import dataclasses
import json

from assistant.tools.registry import all_tools


def tight(tool, cap: int):
    """TOOL with every string parameter's maxLength at most CAP."""
    params = json.loads(json.dumps(tool.parameters))
    for prop in params.get("properties", {}).values():
        if prop.get("type") == "string":
            prop["maxLength"] = min(prop.get("maxLength", 10**9), cap)
    return dataclasses.replace(tool, parameters=params)


def tight_tools(names: tuple[str, ...], cap: int) -> list:
    """The tools called NAMES (in that order), each capped by `tight`."""
    by_name = {t.name: t for t in all_tools()}
    return [tight(by_name[n], cap) for n in names]
