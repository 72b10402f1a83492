"""`assistant.leaks` is assistant.secrets.scanner; the old name stays importable (docs/interfaces.md)."""
import sys

from assistant.secrets import scanner as _moved

sys.modules[__name__] = _moved
