"""What a tool is: a name, a description for the model, an argument schema, a policy kind.

Tools never decide their own permission: a gated tool calls `ctx.gate.authorize(...)` with
its kind and target, and only acts on an allowed Decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


class ToolError(Exception):
    """A refusal or failure the model should see, as a short specific message (never a secret)."""


@dataclass
class ToolContext:
    """What a tool run can reach. Built once per session by the agent."""

    workspace: Any            # assistant.workspace.Workspace
    scanner: Any              # assistant.leaks.Scanner
    gate: Any                 # policy.gate.Gate
    memory: Any = None        # assistant.memory.Memory
    files: Any = None         # assistant.confine.Root at files/
    vault: Any = None         # assistant.vault.Vault or None (for web_fetch auth by name)
    recall: Any = None        # assistant.recall.Recaller (memory_search), or None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Tool:
    name: str
    description: str                       # includes the judgement of when to use it
    parameters: dict                        # JSON schema of args (object), bounded strings
    run: Callable[[dict, ToolContext], str]
    kind: str | None = None                 # policy kind when gated ("memory", "file", "net")
