"""`assistant.config` is assistant.workspace.config; the old name stays importable (docs/interfaces.md)."""
import sys

from assistant.workspace import config as _moved

sys.modules[__name__] = _moved
