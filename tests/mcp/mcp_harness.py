"""Shared helpers for the MCP server tests (no tests here): a workspace, `assistant mcp serve`
as a real subprocess driven by the SDK's own stdio_client + ClientSession or spoken to in raw
bytes (RawServer), and bounded waits on the approvals inbox."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from assistant.workspace.layout import init_workspace
from policy.approvals import Entry, Inbox
from workspaces import bare_ws, cheap_kdf

PY = sys.executable
PASSPHRASE = "mcp test pass phrase"
SECRET = "Xq7-vault-value-93kd-P2mz"       # stored in the test vault; never printed by a test
WAIT = 30.0                                # every wait in these tests is bounded by this
PIN_PASS = "review-mcp-pass"               # the vault made through the CLI (pin_vault_ws) and its one secret
PIN_NAME, PIN_VALUE = "bank_pin", "Tr0ub4dor-zeta-9931"


def make_ws(tmp_path: Path, *, timeout: str = "60s", mode: str | None = None, extra: str = "") -> Path:
    """The example workspace, its approval timeout set (and [mcp] mode when given)."""
    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    cfg = ws / "config.toml"
    text = cfg.read_text().replace('timeout = "15m"', f'timeout = "{timeout}"')
    if mode is not None:
        text = text.replace('mode = "unattended"', f'mode = "{mode}"')
    cfg.write_text(text + extra)
    return ws


def add_vault(ws: Path, *, key_file: bool = True) -> None:
    """A vault holding SECRET, made with a cheap KDF (as the other tests do); unlocked for
    `mcp serve` through [vault] key_file when key_file is set."""
    from assistant.secrets.vault import Vault

    Vault.create(ws / "vault.enc", PASSPHRASE, opslimit=1, memlimit=8 * 1024 * 1024).set("bank", SECRET)
    if key_file:
        key = ws / "vault.key"
        key.write_text(PASSPHRASE)
        key.chmod(0o600)
        cfg = ws / "config.toml"
        cfg.write_text(cfg.read_text().replace('key_file = ""', 'key_file = "vault.key"'))


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    out.update(extra)
    return out


def pin_vault_ws(tmp_path: Path) -> Path:
    """A bare workspace (as `init` makes it) whose vault, cheap KDF, holds PIN_NAME = PIN_VALUE,
    made through the real CLI; `pin_server_params` unlocks it for `mcp serve` by the environment."""
    root = cheap_kdf(bare_ws(tmp_path))
    for args, stdin in ((("vault", "init"), None), (("vault", "set", PIN_NAME), PIN_VALUE + "\n")):
        r = subprocess.run([PY, "-m", "assistant", "-w", str(root), *args], input=stdin, capture_output=True,
                           text=True, env=env(ASSISTANT_VAULT_PASSPHRASE=PIN_PASS), timeout=90,
                           start_new_session=True)
        assert r.returncode == 0, r.stderr
    return root


def pin_server_params(ws: Path) -> StdioServerParameters:
    """How the SDK's stdio_client starts `assistant mcp serve` on a pin_vault_ws, unlocked by the env."""
    return StdioServerParameters(command=PY, args=["-m", "assistant", "-w", str(ws), "mcp", "serve"],
                                 env=env(ASSISTANT_VAULT_PASSPHRASE=PIN_PASS))


@asynccontextmanager
async def serve(ws: Path, *, name: str = "Test Client", extra_env: dict[str, str] | None = None,
                errlog: Path | None = None) -> AsyncIterator[ClientSession]:
    """`assistant -w WS mcp serve` as a subprocess, initialized through the SDK's client."""
    params = StdioServerParameters(command=PY, args=["-m", "assistant", "-w", str(ws), "mcp", "serve"],
                                   env=env(**(extra_env or {})))
    log_path = errlog or Path(tempfile.mkstemp(prefix="mcp-serve-", suffix=".log", dir=ws.parent)[1])
    with open(log_path, "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write, client_info=types.Implementation(name=name, version="9.9")) as s:
                with anyio.fail_after(WAIT):
                    await s.initialize()
                yield s


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def inbox(ws: Path) -> Inbox:
    return Inbox(ws / "state" / "approvals")


def entries(ws: Path) -> list[Entry]:
    try:
        return inbox(ws).list(all=True)
    except Exception:
        return []


async def wait_pending(ws: Path, count: int = 1) -> list[Entry]:
    """The pending requests once `count` exist (bounded)."""
    with anyio.fail_after(WAIT):
        while True:
            pending = [e for e in entries(ws) if e.state == "pending"]
            if len(pending) >= count:
                return pending
            await anyio.sleep(0.05)


async def wait_state(ws: Path, request_id: str, states: tuple[str, ...]) -> Entry:
    with anyio.fail_after(WAIT):
        while True:
            found = [e for e in entries(ws) if e.id == request_id]
            if found and found[0].state in states:
                return found[0]
            await anyio.sleep(0.05)


def cli(ws: Path, *args: str, timeout: float = WAIT) -> subprocess.CompletedProcess:
    """The real `assistant` CLI in a subprocess."""
    return subprocess.run([PY, "-m", "assistant", "-w", str(ws), *args], capture_output=True, text=True,
                          env=env(), timeout=timeout, stdin=subprocess.DEVNULL)


class RawServer:
    """`assistant -w WS mcp serve` as a subprocess spoken to in raw bytes; every read is bounded,
    stderr is kept (self.stderr), and leaving the `with` block closes stdin and reaps it."""

    def __init__(self, ws: Path, **extra_env: str) -> None:
        self.proc = subprocess.Popen([PY, "-m", "assistant", "-w", str(ws), "mcp", "serve"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env(**extra_env))
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.append(self.proc.stderr.read()), daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, id_: object, method: str, params: dict | None = None) -> None:
        msg = {"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params is not None else {})}
        self.send(json.dumps(msg).encode() + b"\n")

    def notify(self, method: str, params: dict | None = None) -> None:
        msg = {"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})}
        self.send(json.dumps(msg).encode() + b"\n")

    def call(self, id_: int, tool: str, arguments: dict) -> None:
        self.request(id_, "tools/call", {"name": tool, "arguments": arguments})

    def next(self) -> dict:
        line = self.lines.get(timeout=WAIT)
        assert line, "the server closed stdout"
        return json.loads(line)          # every line on stdout is JSON-RPC, nothing else

    def handshake(self, client: str = "raw\x1b[31m client") -> None:
        """initialize (as `client`, by default a name with an escape sequence that must never
        reach a log raw) and notifications/initialized."""
        self.request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": client, "version": "0"}})
        reply = self.next()
        assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "assistant-memory"
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def close(self) -> int:
        """Close stdin and wait for the exit code (killed after WAIT seconds)."""
        try:
            self.proc.stdin.close()
        except OSError:                  # it is gone already: its exit code says how
            pass
        try:
            return self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=WAIT)

    def __enter__(self) -> "RawServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def cli_async(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return await anyio.to_thread.run_sync(lambda: cli(ws, *args))


async def call_answered(ws: Path, s: ClientSession, tool: str, args: dict, verb: str,
                        *answer: str) -> tuple[types.CallToolResult, Entry]:
    """Call `tool` (which files one approval request and waits), answer that request with the
    real `assistant approvals VERB ID *answer`, and return (the call's result, the request)."""
    result: dict = {}

    async def call() -> None:
        result["r"] = await s.call_tool(tool, args)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        [pending] = await wait_pending(ws)
        r = await cli_async(ws, "approvals", verb, pending.id, *answer)
        assert r.returncode == 0, r.stderr
    return result["r"], pending


def history_rows(ws: Path, path: str) -> list[dict]:
    r = cli(ws, "memory", "log", path, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def audit_lines(ws: Path) -> list[dict]:
    lines = (ws / "state" / "audit.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def run_async(fn, *args) -> object:
    """Run an async test body with an overall bound."""
    async def bounded():
        with anyio.fail_after(4 * WAIT):
            return await fn(*args)

    return anyio.run(bounded)


def wait_for(predicate, what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
