"""`assistant doctor` with [model] backend = "openai": endpoint, model name, constrained output
(against loopback servers started here; the real llama-cpp-python server case is in
test_openai_backend.py)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

pytest.importorskip("httpx")

from recording_server import Recorder, models, send_json, send_stream  # noqa: E402

from assistant.cli import main  # noqa: E402
from assistant.workspace.layout import init_workspace  # noqa: E402


def _doctor(ws, *extra):
    res = CliRunner().invoke(main, ["-w", str(ws), "doctor", "--no-notify", "--json", *extra])
    return res.exit_code, json.loads(res.output)


def _model_checks(out):
    return [c for c in out["checks"] if c["area"] == "model"]


def test_doctor_names_an_unreachable_endpoint(tmp_path):
    from model_server import free_port

    init_workspace(tmp_path / "ws", example=True)
    url = f"http://127.0.0.1:{free_port()}/v1"
    code, out = _doctor(tmp_path / "ws", "--model", f"openai:{url}")
    (check,) = _model_checks(out)
    assert code == 1 and not check["ok"] and url in check["message"] and "model.endpoint" in check["message"]


def test_doctor_reports_constrained_output_and_an_ignored_schema(tmp_path):
    def answer(reply):
        def handler(h, path, body):
            if path == "/v1/models":
                return send_json(h, models("vllm", ("qwen",)))
            return send_stream(h, [f"data: {json.dumps({'choices': [{'delta': {'content': reply}}]})}\n",
                                   "data: [DONE]\n"])
        return handler

    good, bad = Recorder(answer('{"reply": "ok"}')), Recorder(answer('{"reply": "sure!"}'))
    try:
        init_workspace(tmp_path / "ws", example=True)
        cfg = tmp_path / "ws" / "config.toml"
        text = cfg.read_text().replace('backend = "llama"', 'backend = "openai"', 1)
        cfg.write_text(text.replace('endpoint = ""', f'endpoint = "{good.url}"', 1))
        code, out = _doctor(tmp_path / "ws")
        msgs = [c["message"] for c in _model_checks(out)]
        assert msgs and all(c["ok"] for c in _model_checks(out)), msgs
        assert any("serves 'qwen' (vllm)" in m for m in msgs) and any("constrained output works" in m for m in msgs)
        code, out = _doctor(tmp_path / "ws", "--model", f"openai:{bad.url}")
        bad_checks = [c for c in _model_checks(out) if not c["ok"]]
        assert code == 1 and bad_checks and "ignored the action schema" in bad_checks[0]["message"]
    finally:
        good.close()
        bad.close()
