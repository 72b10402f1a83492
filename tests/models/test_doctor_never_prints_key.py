"""Review (hostile): `assistant doctor` never prints the model server's API key.

Found in review: doctor printed what a server sent back unredacted: an error body echoing the
Authorization header (now scrubbed in the backend's errors) and the text of its constrained
test step ("came back as ..."), where a server that answers with the header it received put
the key into doctor's output. Real vault, real loopback server started by the test.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("httpx")

from recording_server import Recorder, models, send_json, send_stream  # noqa: E402

from assistant.cli import main  # noqa: E402
from assistant.secrets.vault import ENV_PASSPHRASE, Vault  # noqa: E402
from assistant.workspace.layout import init_workspace  # noqa: E402

PASS = "doctor review pass phrase"


def _workspace(tmp_path, rec, value):
    ws = tmp_path / "ws"
    init_workspace(ws)
    port = int(rec.url.split(":")[2].split("/")[0])
    vault = Vault.create(ws / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024)
    vault.set("SERVER_KEY", value, hosts=[f"127.0.0.1:{port}"])
    cfg = ws / "config.toml"
    text = cfg.read_text().replace('backend = "llama"', 'backend = "openai"', 1)
    text = text.replace('endpoint = ""', f'endpoint = "{rec.url}"', 1)
    text = text.replace('api_key = ""', 'api_key = "SERVER_KEY"', 1)
    assert 'api_key = "SERVER_KEY"' in text
    cfg.write_text(text)
    return ws


def _doctor(ws):
    res = CliRunner().invoke(main, ["-w", str(ws), "doctor", "--no-notify", "--json"],
                             env={ENV_PASSPHRASE: PASS})
    return res.exit_code, res.output


def test_a_test_step_echoing_the_key_is_not_printed(tmp_path, recording_server):
    value = "sk-review-" + os.urandom(8).hex()

    def answer(h, path, body):
        if path == "/v1/models":
            return send_json(h, models("vllm", ("qwen",)))
        echoed = h.headers.get("Authorization", "")
        return send_stream(h, [f"data: {json.dumps({'choices': [{'delta': {'content': echoed}}]})}\n",
                               "data: [DONE]\n"])

    rec = recording_server(answer)      # conftest: closed at teardown
    ws = _workspace(tmp_path, rec, value)
    code, out = _doctor(ws)
    assert rec.posts("/v1/chat/completions"), out      # the step did run, with the key
    assert rec.posts("/v1/chat/completions")[-1]["headers"].get("Authorization") == f"Bearer {value}"
    assert "ignored the action schema" in out
    assert value not in out


def test_an_error_echoing_the_key_is_not_printed(tmp_path, recording_server):
    value = "sk-review-" + os.urandom(8).hex()

    def answer(h, path, body):
        return send_json(h, {"error": f"denied for {h.headers.get('Authorization')}"}, status=403)

    rec = recording_server(answer)      # conftest: closed at teardown
    ws = _workspace(tmp_path, rec, value)
    code, out = _doctor(ws)
    assert code == 1 and "refused the request (HTTP 403)" in out
    assert value not in out
