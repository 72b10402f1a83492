"""Review (hostile): a model server that misbehaves must not hold the run, and must not make
the API key appear in a message.

Found in review: a server that streams SSE keep-alive comments forever, streams one endless
line, or trickles a non-streamed answer (GET /models) byte by byte held the run forever (the
client's read timeout bounds one silent read only, and the deadline was checked only between
events). A server that echoes the Authorization header in an error body put the API key into
the ModelError, which `run`, `chat` and `doctor` print unredacted.
Every server here is real, on 127.0.0.1, started by the test.
"""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

pytest.importorskip("httpx")

from assistant.models.base import ModelError  # noqa: E402
from assistant.models.openai import OpenAIModel  # noqa: E402
from loopback import start_http, stop_http  # noqa: E402
from recording_server import QuietHandler, send_json  # noqa: E402

MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
SCHEMA = {"type": "object"}


class Evil:
    """A loopback server: GET /v1/models answers one vLLM model unless `models` misbehaves;
    POST answers with `post(handler, stop_event)`."""

    def __init__(self, post=None, get=None):
        self.stop = threading.Event()
        self.seen_auth: list[str] = []
        evil = self

        class H(QuietHandler):
            def do_GET(self):
                evil.seen_auth.append(self.headers.get("Authorization", ""))
                if get is not None:
                    return _guard(get, self, evil.stop)
                send_json(self, {"data": [{"id": "m", "owned_by": "vllm"}]})

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(n)
                _guard(post, self, evil.stop)

        self.httpd = start_http(H)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def close(self):
        self.stop.set()
        stop_http(self.httpd)


def _guard(fn, h, stop):
    try:
        fn(h, stop)
    except (BrokenPipeError, ConnectionResetError):
        pass


def _sse_head(h):
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.end_headers()


def keepalives_forever(h, stop):
    _sse_head(h)
    while not stop.is_set():
        h.wfile.write(b": keep-alive\n\n")
        h.wfile.flush()
        time.sleep(0.1)


def one_endless_line(h, stop):
    _sse_head(h)
    h.wfile.write(b"data: ")
    while not stop.is_set():
        h.wfile.write(b"a" * 65536)
        h.wfile.flush()
        time.sleep(0.005)


def trickle_json(h, stop):
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.end_headers()
    while not stop.is_set():
        h.wfile.write(b" ")
        h.wfile.flush()
        time.sleep(0.2)


def _within(fn, seconds: float):
    """Run fn in a thread; (finished, result-or-exception)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            box["value"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    return (not t.is_alive()), box.get("value")


@pytest.mark.parametrize("post", [keepalives_forever, one_endless_line], ids=["keepalives", "endless-line"])
def test_an_endless_stream_ends_the_step_within_the_timeout(post):
    srv = Evil(post=post)
    try:
        model = OpenAIModel({"endpoint": srv.url}, timeout=2)
        done, got = _within(lambda: model.step(MESSAGES, SCHEMA, max_tokens=50), 30)
        assert done, "the step never ended: an endless stream held the run"
        assert not isinstance(got, BaseException), repr(got)
        assert got.finish_reason in ("timeout", "length")
        assert got.text == ""
    finally:
        srv.close()


def test_a_trickled_model_list_is_a_clear_error_within_the_timeout():
    srv = Evil(get=trickle_json)
    try:
        done, got = _within(lambda: OpenAIModel({"endpoint": srv.url}, timeout=2), 30)
        assert done, "loading never ended: a trickled /models answer held the run"
        assert isinstance(got, ModelError)
        assert "did not end within 2s" in str(got) and "/v1/models" in str(got)
    finally:
        srv.close()


def test_a_gigantic_model_list_is_refused_not_read_whole():
    def huge(h, stop):
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.end_headers()
        chunk = b"[" * (1 << 20)
        while not stop.is_set():
            h.wfile.write(chunk)

    srv = Evil(get=huge)
    try:
        done, got = _within(lambda: OpenAIModel({"endpoint": srv.url}, timeout=60), 60)
        assert done
        assert isinstance(got, ModelError) and "more than 32 MiB" in str(got)
    finally:
        srv.close()


def _vault(tmp_path, port, value):
    from assistant.secrets.vault import Vault

    vault = Vault.create(tmp_path / "vault.enc", "test pass phrase", opslimit=1, memlimit=8 * 1024 * 1024)
    vault.set("SERVER_KEY", value, hosts=[f"127.0.0.1:{port}"])
    return vault


def echo_auth(status):
    def post(h, stop):
        send_json(h, {"detail": f"bad request, got header {h.headers.get('Authorization')}"}, status)
    return post


def _step_failing_with_a_key(tmp_path, post) -> tuple[str, list[str], str]:
    """One step against Evil(post=POST), its api_key a fresh value in the vault, which must fail:
    (the value, the Authorization headers the server saw, the ModelError's message)."""
    value = "sk-review-" + os.urandom(8).hex()
    srv = Evil(post=post)
    try:
        model = OpenAIModel({"endpoint": srv.url, "api_key": "SERVER_KEY"},
                            vault=_vault(tmp_path, srv.port, value), timeout=10)
        with pytest.raises(ModelError) as info:
            model.step(MESSAGES, SCHEMA, max_tokens=10)
        return value, srv.seen_auth, str(info.value)
    finally:
        srv.close()


@pytest.mark.parametrize("status", [400, 500])
def test_a_server_echoing_the_key_in_an_error_does_not_put_it_in_the_message(tmp_path, status):
    value, seen_auth, message = _step_failing_with_a_key(tmp_path, echo_auth(status))
    assert seen_auth[-1] == f"Bearer {value}"      # it was sent, as a header (GET /v1/models)
    assert value not in message
    assert "[redacted:SERVER_KEY]" in message


def test_a_stream_error_echoing_the_key_does_not_put_it_in_the_message(tmp_path):
    def post(h, stop):
        _sse_head(h)
        ev = {"error": {"message": f"invalid token {h.headers.get('Authorization')}"}}
        h.wfile.write(f"data: {json.dumps(ev)}\n\n".encode())
        h.wfile.flush()

    value, _, message = _step_failing_with_a_key(tmp_path, post)
    assert value not in message
    assert "reported an error" in message
