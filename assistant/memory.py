"""The plain Python API of memory: `memory_write(path, content, base)`, `memory_read(path)`,
`memory_list()`, for scripts and tests.

A door like the CLI: each call opens a session at the composition root (assistant.session), so
the same scanner, gate, writer and history serve it as chat and run, and closes it again
(no descriptor is left open). `open_memory` hands the session's Memory to the caller, who
closes it (`close()` or `with`), and with it the session. The store itself is
assistant.notes.store.Memory; its names are re-exported here because this is where a script
imports them from.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from assistant.notes.store import (
    CONFLICT_MESSAGE, REVISION_CHARS, Busy, Conflict, ContentRefused, Denied, Entry, Memory,
    Note, NoteError, NotFound, PathRefused, RemoveResult, SecretRefused, SecretWouldBeLost,
    Unreadable, WriteResult,
)
from assistant.session import SessionError, open_session

if TYPE_CHECKING:
    from assistant.workspace.layout import Workspace

__all__ = [
    "Memory", "Note", "WriteResult", "RemoveResult", "Entry", "REVISION_CHARS",
    "NoteError", "PathRefused", "ContentRefused", "SecretRefused", "SecretWouldBeLost", "Conflict",
    "Denied", "NotFound", "Unreadable", "Busy", "CONFLICT_MESSAGE",
    "open_memory", "memory_write", "memory_read", "memory_list",
]


# --- plain-function API ------------------------------------------------------------------------
# memory_write(path, content[, base]) / memory_read(path) as the issue names them, for scripts
# and tests: each call opens the workspace (`workspace=`, else $ASSISTANT_WORKSPACE, else the
# default), unlocks the scanner the way a run would (a vault that cannot be unlocked fails
# closed) and goes through the same Memory writer as the model's tool. mode="watched" (the
# default: the caller is the person, as with `assistant memory write`) or "unattended" (asks
# out of band per [approvals], denies when nobody can answer).

def open_memory(workspace: "Workspace | str | os.PathLike[str] | None" = None, *, mode: str = "watched") -> Memory:
    """A Memory for the workspace, from a session opened at the composition root
    (assistant.session): the same scanner and gate as chat and run. It owns that session:
    close it (`mem.close()`, or `with open_memory(...) as mem:`) and the session is closed."""
    try:
        session = open_session(workspace, mode, kind="api", transcript=False)
    except SessionError as exc:
        raise NoteError(str(exc)) from None
    return session.memory.on_close(session.close)


def memory_write(path: str, content: str | bytes, base: str | None = None, *, workspace: "Workspace | str | os.PathLike[str] | None" = None,
                 mode: str = "watched") -> WriteResult:
    """Create or replace one note (see Memory.write); raises a NoteError subclass on refusal."""
    with open_memory(workspace, mode=mode) as memory:
        return memory.write(path, content, base=base)


def memory_read(path: str, *, workspace: "Workspace | str | os.PathLike[str] | None" = None) -> Note:
    """The note, redacted, with its revision (Note: .content, .revision; unpacks to both)."""
    with open_memory(workspace) as memory:
        return memory.read(path)


def memory_list(offset: int = 0, limit: int = 50, *, workspace: "Workspace | str | os.PathLike[str] | None" = None) -> list[Entry]:
    """One page of catalog entries, in catalog order."""
    with open_memory(workspace) as memory:
        return memory.list(offset, limit)
