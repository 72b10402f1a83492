"""`assistant.localtime` is assistant.display.localtime; the old name stays importable (docs/interfaces.md)."""
import sys

from assistant.display import localtime as _moved

sys.modules[__name__] = _moved
