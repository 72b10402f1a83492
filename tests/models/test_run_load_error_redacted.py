"""`assistant run` prints a ModelError raised while the model loads as its one outcome line
(stdout: a scheduled run's journal or cron mail) without the session's redaction. The server
backend scrubs only the raw API key from a server's error body; a server that echoes the key
encoded (base64 here) puts it into the run's output, though the session's scanner, which knows
the vault value, would have redacted it (the same text inside a turn is redacted)."""

from __future__ import annotations

import base64
import os

import pytest
from click.testing import CliRunner

pytest.importorskip("httpx")

from recording_server import send_json  # noqa: E402

from assistant.cli import main  # noqa: E402
from assistant.secrets.vault import ENV_PASSPHRASE, Vault  # noqa: E402
from assistant.workspace.layout import init_workspace  # noqa: E402

PASS = "run load error pass phrase"


def test_a_load_error_echoing_the_key_encoded_is_redacted(tmp_path, recording_server):
    value = "sk-review-" + os.urandom(8).hex()
    encoded = base64.b64encode(value.encode()).decode()

    def answer(h, path, body):
        sent = h.headers.get("Authorization", "").removeprefix("Bearer ")
        return send_json(h, {"error": f"unknown token {base64.b64encode(sent.encode()).decode()}"}, status=400)

    rec = recording_server(answer)
    ws = tmp_path / "ws"
    init_workspace(ws)
    port = int(rec.url.split(":")[2].split("/")[0])
    Vault.create(ws / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024).set(
        "SERVER_KEY", value, hosts=[f"127.0.0.1:{port}"])
    cfg = ws / "config.toml"
    text = cfg.read_text().replace('backend = "llama"', 'backend = "openai"', 1)
    text = text.replace('endpoint = ""', f'endpoint = "{rec.url}"', 1).replace('api_key = ""', 'api_key = "SERVER_KEY"', 1)
    cfg.write_text(text)
    res = CliRunner().invoke(main, ["-w", str(ws), "run", "hello"], env={ENV_PASSPHRASE: PASS})
    assert res.exit_code == 1 and "answered HTTP 400" in res.output
    leaked = encoded in res.output          # a bool: a failure never prints the output itself
    assert not leaked, "the run's outcome line carries the API key (base64)"
