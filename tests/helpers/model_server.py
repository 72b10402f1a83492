"""Test support: a real llama-cpp-python OpenAI-compatible server (`python -m llama_cpp.server`)
on 127.0.0.1 with the embedded Gemma 3 270M, started by the test and torn down after."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass

ALIAS = "gemma-270m"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    log_path: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, n: int = 3000) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        try:
            os.unlink(self.log_path)
        except OSError:
            pass


def start_server(*, api_key: str | None = None, n_ctx: int = 4096, ready_within: float = 120.0,
                 log_dir: str | os.PathLike | None = None, model: str | os.PathLike | None = None) -> Server:
    """The server's log goes to log_dir (the test's own folder: tmp_path / tmp_path_factory), never
    the system's /tmp, since it may hold prompt text. `model`: a GGUF (default the embedded one;
    bench/answers.py serves a person's own)."""
    from assistant.models.llama_cpp import embedded_model_path

    model = model or embedded_model_path()
    port = free_port()
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
            "--port", str(port), "--n_ctx", str(n_ctx), "--model_alias", ALIAS, "--n_threads", "1",
            "--n_threads_batch", "2", "--verbose", "false"]
    if api_key:
        argv += ["--api_key", api_key]
    fd, log_path = tempfile.mkstemp(prefix="llama-server-", suffix=".log", dir=log_dir)
    proc = subprocess.Popen(argv, stdout=fd, stderr=fd, stdin=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(fd)
    server = Server(proc, port, log_path)
    deadline = time.monotonic() + ready_within
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = server.log_tail()
            server.stop()
            raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}: {tail}")
        try:
            req = urllib.request.Request(server.url + "/models", headers=headers)
            with urllib.request.urlopen(req, timeout=2) as resp:
                if json.loads(resp.read()).get("data"):
                    return server
        except OSError:
            time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"llama_cpp.server did not come up within {ready_within:g}s")
