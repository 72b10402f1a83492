"""`assistant.colour` is assistant.display.colour; the old name stays importable (docs/interfaces.md)."""
import sys

from assistant.display import colour as _moved

sys.modules[__name__] = _moved
