"""`assistant.gated_write` is assistant.notes.writer; the old name stays importable (docs/interfaces.md)."""
import sys

from assistant.notes import writer as _moved

sys.modules[__name__] = _moved
