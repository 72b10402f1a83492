"""Review (scan): a write refused for carrying a secret does not tell the model which one.

DESIGN.md, data flow step 3: "The model is not told which secret matched (that would make
the refusal an oracle); the person's own CLI may name it." web_fetch kept to that, but the
model's memory_write and file_write refusals named the vault entry ("... carry a secret
(HOME_WIFI)"): a model guessing values learns which entry each guess hit.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


from assistant.session import open_session  # noqa: E402
from assistant.tools.base import ToolError  # noqa: E402
from assistant.tools.registry import tools_by_name  # noqa: E402
from assistant.workspace.layout import open_workspace  # noqa: E402

from e2e_support import make_ws  # noqa: E402

SECRET = "wifi" + "-Lantern-" + "7731" + "-quokka"
NAME = "HOME_WIFI"


@pytest.fixture
def parts(tmp_path):
    ws_path = make_ws(tmp_path)
    from assistant.secrets.vault import Vault
    Vault.create(ws_path / "vault.enc", "test pass phrase", opslimit=1, memlimit=8 * 1024 * 1024).set(NAME, SECRET)
    os.environ["ASSISTANT_VAULT_PASSPHRASE"] = "test pass phrase"
    try:
        s = open_session(open_workspace(ws_path), "watched", kind="test", inline_ask=lambda q: "once")
    finally:
        os.environ.pop("ASSISTANT_VAULT_PASSPHRASE", None)
    yield s
    s.close()


@pytest.mark.parametrize("tool,args", [
    ("memory_write", {"path": "wifi.md", "content": "the password is " + SECRET}),
    ("file_write", {"path": "wifi.txt", "content": "the password is " + SECRET}),
])
def test_refusal_names_no_secret(parts, tool, args):
    with pytest.raises(ToolError) as info:
        tools_by_name(parts.tools)[tool].run(args, parts.ctx)
    msg = str(info.value)
    assert "refused" in msg and "secret" in msg
    assert NAME not in msg and SECRET not in msg
    assert not (parts.ws.memory_dir / "wifi.md").exists()
    assert not (parts.ws.files_dir / "wifi.txt").exists()


def test_the_persons_cli_may_still_name_it(parts):
    """The refusal carries the names for the person (`assistant memory` shows "(found: NAME)"),
    never in the message the model is given (issue 10 item 5)."""
    from assistant.memory import SecretRefused
    with pytest.raises(SecretRefused) as info:
        parts.memory.write("wifi.md", "the password is " + SECRET)
    assert NAME in info.value.names and NAME not in str(info.value)

