"""Fixtures shared by every test folder (the one conftest.py of tests/).

- `ws`: a fresh workspace made from the shipped example, as a Path (most CLI and API tests).
- `vault_ws`: the same with a cheap vault KDF (argon2id at its minimum cost), for tests that create
  or unlock a vault; the KDF rewrite itself is `workspaces.cheap_kdf` for workspaces built by hand.
- `opened_ws`: the example workspace opened (`assistant.workspace.layout.Workspace`), for API tests.
- `loopback_site`, `recording_server`: real HTTP servers on 127.0.0.1, started by the test through
  these factories and always closed at teardown, even when the test fails.
- `sessions`: `sessions(ws_path, mode, ...)` opens a real session (`session_support.open_test_session`:
  optionally a vault filled and unlocked first); every one is closed at teardown.

A test module may still define its own fixture of the same name when it needs a different
workspace (pytest uses the nearest one); keep such a fixture only where the difference matters.
Helper modules (no tests) live in tests/helpers/, which is on pytest's pythonpath.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from workspaces import cheap_kdf, example_ws


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return example_ws(tmp_path)


@pytest.fixture
def vault_ws(tmp_path: Path) -> Path:
    return cheap_kdf(example_ws(tmp_path))


@pytest.fixture
def opened_ws(tmp_path: Path):
    from assistant.workspace.layout import open_workspace

    return open_workspace(example_ws(tmp_path))


@pytest.fixture
def loopback_site() -> Iterator[Callable]:
    """`loopback_site({path: (status, headers, body)})` -> a started e2e_support.Site."""
    from e2e_support import Site

    started: list = []

    def start(pages: dict):
        site = Site(pages).__enter__()
        started.append(site)
        return site

    yield start
    for site in started:
        site.__exit__(None, None, None)


@pytest.fixture
def recording_server() -> Iterator[Callable]:
    """`recording_server(answer)` -> a started recording_server.Recorder (an OpenAI-style server)."""
    from recording_server import Recorder

    started: list = []

    def start(answer):
        rec = Recorder(answer)
        started.append(rec)
        return rec

    yield start
    for rec in started:
        rec.close()


@pytest.fixture
def sessions() -> Iterator[Callable]:
    """`sessions(ws_path, mode="watched", *, kind, inline_ask, vault, hosts)` -> an open Session."""
    from session_support import open_test_session

    opened: list = []

    def start(ws_path: Path, mode: str = "watched", **kw):
        parts = open_test_session(ws_path, mode, **kw)
        opened.append(parts)
        return parts

    yield start
    for parts in opened:
        parts.close()
