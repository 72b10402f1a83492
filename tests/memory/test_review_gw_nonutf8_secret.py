# review (one gated writer, 2026-12-01): a file_write could destroy a vault value held in a non-UTF-8 file
"""Review (gw): file_write destroys a vault secret held by a non-UTF-8 file, unseen.

GatedWriter.secrets_in returns an empty set when the current bytes are not UTF-8, so
check_keeps_secrets never fires: the model reads the file (decoded with 'replace' and
redacted), writes back what it saw, and the vault value on disk is replaced by its
"[redacted:...]" marker. The watched chat even shows "no change".
"""
import json
import os
import subprocess
import sys
from pathlib import Path

SECRET = "Zq7-Plum-Orbit-9931"
ASSISTANT = [sys.executable, "-m", "assistant"]


def _run(args, env, stdin=None, cwd=None):
    return subprocess.run(ASSISTANT + args, input=stdin, capture_output=True, text=True,
                          env=env, timeout=120, cwd=cwd)


def test_file_write_keeps_secret_of_non_utf8_file(tmp_path: Path):
    env = dict(os.environ, ASSISTANT_VAULT_PASSPHRASE="pw-test-123")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    ws = tmp_path / "ws"
    assert _run(["init", str(ws)], env).returncode == 0
    assert _run(["-w", str(ws), "vault", "init"], env).returncode == 0
    assert _run(["-w", str(ws), "vault", "set", "bank"], env, stdin=SECRET + "\n").returncode == 0
    original = b"caf\xe9 latin1 file\nkey: " + SECRET.encode() + b"\n"
    (ws / "files" / "old.txt").write_bytes(original)
    script = tmp_path / "s.json"
    script.write_text(json.dumps([
        {"tool": "file_read", "args": {"path": "old.txt"}},
        {"tool": "file_write", "args": {"path": "old.txt",
                                        "content": "caf\ufffd latin1 file\nkey: [redacted:bank]\n"}},
        {"reply": "done"},
    ]))
    _run(["-w", str(ws), "chat", "--model", f"script:{script.name}"], env, stdin="go\n/quit\n", cwd=tmp_path)
    after = (ws / "files" / "old.txt").read_bytes()
    # the secret the model only saw redacted must not have been destroyed
    assert SECRET.encode() in after, after
