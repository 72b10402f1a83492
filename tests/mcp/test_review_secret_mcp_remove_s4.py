"""Review s4 (secrets): an MCP client may not drop a secret it saw only redacted. memory_write
of such a note is refused ("would destroy the secret unseen"), but memory_remove of the same
note, with the revision memory_read gave, removes it: the client saw "[redacted:APITOKEN]" and
the note holding the value is gone from memory/ (in [mcp] mode = "watched" without a question)."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
from pathlib import Path

ASSISTANT = str(Path(sys.executable).parent / "assistant")
SECRET = "tok-9f8e7d6c5b4a3210"


def _mcp(ws: Path, env: dict, calls: list) -> list[dict]:
    proc = subprocess.Popen([ASSISTANT, "-w", str(ws), "mcp", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = []
    try:
        def send(obj: dict) -> None:
            proc.stdin.write((json.dumps(obj) + "\n").encode())
            proc.stdin.flush()

        def recv() -> dict:
            ready, _, _ = select.select([proc.stdout], [], [], 30)
            assert ready, "no answer"
            return json.loads(proc.stdout.readline())
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        recv()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i, (name, args) in enumerate(calls):
            send({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {"name": name, "arguments": args}})
            out.append(recv())
    finally:
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return out


def test_mcp_remove_drops_a_secret_the_client_saw_only_redacted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    subprocess.run([ASSISTANT, "init", "--example", str(ws)], check=True, capture_output=True)
    cfg = ws / "config.toml"
    text = cfg.read_text().replace('mode = "unattended"', 'mode = "watched"')
    text = re.sub(r"(?m)^opslimit = .*$", "opslimit = 1", text)
    text = re.sub(r"(?m)^memlimit_mib = .*$", "memlimit_mib = 8", text)
    cfg.write_text(text)
    env = dict(os.environ, ASSISTANT_VAULT_PASSPHRASE="pw-review-s4")
    subprocess.run([ASSISTANT, "-w", str(ws), "vault", "init"], check=True, capture_output=True, env=env)
    subprocess.run([ASSISTANT, "-w", str(ws), "vault", "set", "APITOKEN"], input=SECRET.encode(), check=True,
                   capture_output=True, env=env)
    note = ws / "memory" / "creds.md"
    note.write_text(f"login: {SECRET}\nother line\n")
    # first learn the revision as the client sees it
    (read,) = _mcp(ws, env, [["memory_read", {"path": "creds.md"}]])
    shown = read["result"]["content"][0]["text"]
    assert "[redacted:APITOKEN]" in shown and SECRET not in shown
    base = re.search(r"revision: (\w+)", shown).group(1)
    write, remove = _mcp(ws, env, [
        ["memory_write", {"path": "creds.md", "content": "other line\n", "base": base}],
        ["memory_remove", {"path": "creds.md", "base": base}],
    ])
    assert write["result"]["isError"], write            # the rewrite is refused (held)
    assert note.exists() and SECRET in note.read_text(), (
        f"an MCP client removed a note holding a vault secret it saw only redacted: {remove}")
