"""Review (hostile): a server answering deeply nested JSON is a clear ModelError / an invalid
step, never a RecursionError traceback out of the backend.

Found in review: json.loads raises RecursionError (not ValueError) on `[[[[...]]]]` nested
100000 deep, and the backend caught ValueError only, so one malicious or broken answer to
GET /models, to a tokenize call, or one stream event crashed the run. Real loopback server.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("httpx")

from recording_server import Recorder, models, send_json, send_stream  # noqa: E402

from assistant.models.base import ModelError  # noqa: E402
from assistant.models.openai import OpenAIModel  # noqa: E402

DEEP = "[" * 100000 + "]" * 100000


def _send_raw(h, text, ctype="application/json"):
    data = text.encode()
    h.send_response(200)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


def test_a_deeply_nested_model_list_is_a_model_error(recording_server):
    rec = recording_server(lambda h, path, body: _send_raw(h, DEEP))      # conftest: closed at teardown
    with pytest.raises(ModelError, match="did not answer JSON"):
        OpenAIModel({"endpoint": rec.url}, timeout=10)


def test_a_deeply_nested_stream_event_ends_the_step_as_malformed(recording_server):
    def answer(h, path, body):
        if path == "/v1/models":
            return send_json(h, models("vllm"))
        return send_stream(h, [f"data: {DEEP}\n", "data: [DONE]\n"])

    rec = recording_server(answer)      # conftest: closed at teardown
    m = OpenAIModel({"endpoint": rec.url}, timeout=10)
    got = m.step([{"role": "user", "content": "hi"}], {"type": "object"}, max_tokens=10)
    assert got.finish_reason == "malformed" and got.text == ""


def test_a_deeply_nested_tokenize_answer_is_a_model_error(recording_server):
    def answer(h, path, body):
        if path == "/v1/models":
            return send_json(h, models("llamacpp"))
        return _send_raw(h, DEEP)

    rec = recording_server(answer)      # conftest: closed at teardown
    m = OpenAIModel({"endpoint": rec.url}, timeout=10)
    with pytest.raises(ModelError):
        m.step([{"role": "user", "content": "hi"}], {"type": "object"}, max_tokens=10)
