# review (one gated writer, 2026-12-01): disguised vault values (NFKC forms, dash look-alikes, ESC inside) passed the scan; fixed
"""Review (gw): a vault value gets past the gated writer's leak scan when spelled with
characters the scanner does not fold.

- files/ mount (plain_text=False) accepts the value split by an ANSI SGR reset (ESC[m), which
  a terminal renders as the exact secret; memory/ refuses it only because of its control-char
  rule, not because the scan saw the secret.
- both mounts accept the value with its ASCII hyphens spelled U+2011 (non-breaking hyphen) or
  in fullwidth forms (NFKC-equal to the secret); the scanner folds U+200B and U+00AD but not these.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SECRET = "Zq7-Plum-Orbit-9931"
ASSISTANT = [sys.executable, "-m", "assistant"]
ROOT = Path(__file__).resolve().parents[2]


def _env():
    env = dict(os.environ, ASSISTANT_VAULT_PASSPHRASE="pw-test-123")
    env["PYTHONPATH"] = str(ROOT)
    return env


def _run(args, stdin=None, cwd=None):
    return subprocess.run(ASSISTANT + args, input=stdin, capture_output=True, text=True,
                          env=_env(), timeout=120, cwd=cwd)


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    assert _run(["init", str(ws)]).returncode == 0
    assert _run(["-w", str(ws), "vault", "init"]).returncode == 0
    assert _run(["-w", str(ws), "vault", "set", "bank"], stdin=SECRET + "\n").returncode == 0
    return ws


VARIANTS = {
    "ansi_reset_inside": "Zq7-Plum-Or\x1b[mbit-9931",
    "nonbreaking_hyphens": SECRET.replace("-", "\u2011"),
    "fullwidth": "".join(chr(ord(c) + 0xFEE0) for c in SECRET),
}


# Fixed: the scanner's view folds NFKC forms and dash look-alikes and drops terminal escape
# sequences (assistant/secrets/view.py); these were strict xfails until then.


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_file_write_refuses_disguised_vault_value(ws, tmp_path, name):
    script = tmp_path / "s.json"
    script.write_text(json.dumps([
        {"tool": "file_write", "args": {"path": "leak.txt", "content": f"pin: {VARIANTS[name]}\n"}},
        {"reply": "done"},
    ]))
    _run(["-w", str(ws), "chat", "--model", f"script:{script.name}"], stdin="go\n/quit\n", cwd=tmp_path)
    assert not (ws / "files" / "leak.txt").exists(), "a disguised vault value was written to files/"


@pytest.mark.parametrize("name", ["nonbreaking_hyphens", "fullwidth"])
def test_memory_write_refuses_disguised_vault_value(ws, name):
    code = (
        "import sys\n"
        "from assistant.memory import memory_write, NoteError\n"
        "try:\n"
        f"    memory_write('leak.md', 'pin: ' + {VARIANTS[name]!r} + '\\n', workspace={str(ws)!r})\n"
        "    print('WRITTEN')\n"
        "except NoteError as e:\n"
        "    print('REFUSED', type(e).__name__)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=120)
    assert "REFUSED" in r.stdout, r.stdout + r.stderr
