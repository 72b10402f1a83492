"""Review (hostile): where the API key may go, by endpoint spelling.

Found in review:
- `http://localhost./v1` counted as loopback (the trailing dot was stripped before the check),
  so the key went over plain http to whatever the resolver answers for "localhost." — glibc's
  /etc/hosts has "localhost", not "localhost.", so that name is asked of DNS (here it does not
  resolve at all). A trailing-dot name is no longer loopback: the key needs https there.
- a key bound to an IPv6 loopback (`vault set K --host [::1]:PORT`) was never sent to
  `http://[::1]:PORT/v1`: the binding keeps its brackets, the endpoint's host has none
  (failed closed, but the documented IPv6 spelling could not work).
Real vault, real server on ::1 started by the test.
"""

from __future__ import annotations

import socket
import threading
from http.server import ThreadingHTTPServer

import pytest

pytest.importorskip("httpx")

from assistant.models.base import ModelError  # noqa: E402
from assistant.models.openai import OpenAIModel, parse_endpoint  # noqa: E402
from recording_server import QuietHandler, send_json  # noqa: E402


def _vault(tmp_path, binding, value):
    from assistant.secrets.vault import Vault

    vault = Vault.create(tmp_path / "vault.enc", "test pass phrase", opslimit=1, memlimit=8 * 1024 * 1024)
    vault.set("SERVER_KEY", value, hosts=[binding])
    return vault


def test_a_trailing_dot_localhost_is_not_loopback_so_the_key_is_not_sent_over_http(tmp_path):
    assert parse_endpoint("http://localhost/v1").loopback
    assert not parse_endpoint("http://localhost./v1").loopback
    vault = _vault(tmp_path, "localhost:8080", "sk-review-dot")
    with pytest.raises(ModelError, match="only sent over https or to loopback"):
        OpenAIModel({"endpoint": "http://localhost.:8080/v1", "api_key": "SERVER_KEY"}, vault=vault, timeout=2)


class _V6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def test_a_key_bound_to_an_ipv6_loopback_is_sent_there(tmp_path):
    seen: list[str] = []

    class H(QuietHandler):
        def do_GET(self):
            seen.append(self.headers.get("Authorization", ""))
            send_json(self, {"data": [{"id": "m", "owned_by": "vllm"}]})

    try:
        httpd = _V6Server(("::1", 0), H)
    except OSError:
        pytest.skip("no IPv6 loopback here")
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        port = httpd.server_address[1]
        vault = _vault(tmp_path, f"[::1]:{port}", "sk-review-v6")
        model = OpenAIModel({"endpoint": f"http://[::1]:{port}/v1", "api_key": "SERVER_KEY"}, vault=vault, timeout=5)
        assert model.model_id == "m"
        assert seen == ["Bearer sk-review-v6"]
    finally:
        httpd.shutdown()
        httpd.server_close()
