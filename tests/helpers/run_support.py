"""Helpers for tests/run (no tests here): a fresh workspace with a cheap vault KDF, a model
script, the CLI in a child. The same steps as tests/secrets' (secrets_support), re-exported."""

from __future__ import annotations

from secrets_support import (PASSPHRASE, PY, audit_events, cli, env, make_ws,  # noqa: F401
                             transcript_events, write_script)
