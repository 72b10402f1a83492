"""`assistant.vault` is assistant.secrets.vault; the old name stays importable (docs/interfaces.md)."""
import sys

from assistant.secrets import vault as _moved

sys.modules[__name__] = _moved
