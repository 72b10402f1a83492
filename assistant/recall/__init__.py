"""Recall: the derived FTS5 index of notes and transcripts (index.py), the per-turn recall
(turn.py) and the optional embeddings (embed.py).

The per-turn recall's names import from here too.
"""

from assistant.recall.turn import (
    HEADER_COST, HEAD_BYTES, Recalled, Recaller,
)

__all__ = [
    "HEADER_COST", "HEAD_BYTES", "Recalled", "Recaller",
]
