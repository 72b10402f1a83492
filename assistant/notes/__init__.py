"""The notes in memory/: the store (store.py), the one gated writer (writer.py), the note format
(frontmatter.py), names, catalog, watch, history and the intake of hand edits.

The note format's names (`assistant.notes.staleness`, ...) import from here too.
"""

from assistant.notes.frontmatter import (
    ELLIPSIS, EXPIRES_KEY, FENCE, ParsedNote, REVIEW_KEY, REVISION_CHARS, Staleness, clean_line,
    cut, decode_head, head_meta, parse, revision, sha256_hex, staleness, summary_from_head,
    with_meta,
)

__all__ = [
    "ELLIPSIS", "EXPIRES_KEY", "FENCE", "ParsedNote", "REVIEW_KEY", "REVISION_CHARS", "Staleness",
    "clean_line", "cut", "decode_head", "head_meta", "parse", "revision", "sha256_hex",
    "staleness", "summary_from_head", "with_meta",
]
