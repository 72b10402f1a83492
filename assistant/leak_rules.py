"""`assistant.leak_rules` is assistant.secrets.rules; the old name stays importable (docs/interfaces.md)."""
import sys

from assistant.secrets import rules as _moved

sys.modules[__name__] = _moved
