"""The model's tool set: memory, file and web tools, by name.

Guards that the model is offered exactly these tools and nothing that can approve, grant or
reach `state/`: the list is fixed here, not discovered.
"""

from __future__ import annotations

from assistant.tools.base import Tool
from assistant.tools.files import file_tools
from assistant.tools.memory import memory_tools
from assistant.tools.web import web_tools


def all_tools() -> list[Tool]:
    tools = [*memory_tools(), *file_tools(), *web_tools()]
    names = [t.name for t in tools]
    if len(set(names)) != len(names):
        raise RuntimeError(f"duplicate tool names: {names}")
    return tools


def tools_by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}
