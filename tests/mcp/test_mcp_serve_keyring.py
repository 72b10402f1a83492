"""`assistant mcp serve` unlocks the vault from the OS keyring (`[vault] unlock = "keyring"`), as a
desktop client starts it: a REAL Secret Service (gnome-keyring-daemon on a private D-Bus session
from dbus-run-session, both started here), no passphrase in the environment, nothing on stdin.
Skipped only where Debian's gnome-keyring / dbus packages are missing (.ci/run installs them)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from mcp_harness import PASSPHRASE, SECRET, add_vault, make_ws

pytestmark = pytest.mark.skipif(
    not (shutil.which("dbus-run-session") and shutil.which("gnome-keyring-daemon")),
    reason="needs Debian's dbus and gnome-keyring (installed by .ci/run)")

DRIVER = """\
import json, os, subprocess, sys
ws, out = sys.argv[1], sys.argv[2]
base = [sys.executable, "-m", "assistant", "-w", ws]
clean = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_VAULT")}
results = []
r = subprocess.run(base + ["vault", "remember"], capture_output=True, text=True, timeout=60,
                   env={**clean, "ASSISTANT_VAULT_PASSPHRASE": sys.argv[3]}, stdin=subprocess.DEVNULL)
results.append([r.returncode, r.stdout, r.stderr])
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "desktop", "version": "1"}}})
call = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "memory_read", "arguments": {"path": "bank.md"}}})
p = subprocess.Popen(base + ["mcp", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True, env=clean)
lines = []
p.stdin.write(init + "\\n"); p.stdin.flush()
lines.append(p.stdout.readline())
p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\\n" + call + "\\n")
p.stdin.flush()
lines.append(p.stdout.readline())
p.stdin.close()
code = p.wait(timeout=60)
results.append([code, "".join(lines) + p.stdout.read(), p.stderr.read()])
with open(out, "w") as f:
    json.dump(results, f)
"""


def test_serve_unlocks_from_the_keyring_without_a_passphrase(tmp_path):
    ws = make_ws(tmp_path)
    add_vault(ws, key_file=False)
    (ws / "memory" / "bank.md").write_text(f"PIN {SECRET}\n")
    home, run_dir = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    run_dir.mkdir(mode=0o700)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    out = tmp_path / "out.json"
    script = (f"printf '%s' login-keyring-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null && "
              f"exec {shlex.quote(sys.executable)} {shlex.quote(str(driver))} {shlex.quote(str(ws))} "
              f"{shlex.quote(str(out))} {shlex.quote(PASSPHRASE)}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSISTANT_", "DBUS_"))}
    env.update(HOME=str(home), XDG_RUNTIME_DIR=str(run_dir), XDG_DATA_HOME=str(home / ".local/share"))
    r = subprocess.run(["dbus-run-session", "--", "sh", "-c", script], env=env, capture_output=True, text=True,
                       timeout=180, start_new_session=True)
    assert out.exists(), r.stderr[-2000:]
    (remember, serve) = json.loads(out.read_text())
    assert remember[0] == 0, remember[2]
    code, stdout, stderr = serve
    assert code == 0, stderr[-2000:]
    replies = [json.loads(line) for line in stdout.splitlines()]      # nothing but JSON-RPC on stdout
    [read] = [m for m in replies if m.get("id") == 2]
    text = read["result"]["content"][0]["text"]
    assert "PIN [redacted" in text and SECRET not in stdout + stderr and PASSPHRASE not in stdout + stderr
