"""Review s5: the person's `assistant memory write` (the gated writer) stores a note holding a
vault value in a spelling every reader decodes or renders as the value: one JSON `\\u` escape
inside it, or its NFD (decomposed) form. The plain spelling is refused (checked first).
"""

from __future__ import annotations

import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ASSISTANT = str(Path(sys.executable).with_name("assistant"))
PASS = "review-s5-pass"


def run(*args, input=None, ws=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env["ASSISTANT_VAULT_PASSPHRASE"] = PASS
    env["NO_COLOR"] = "1"
    return subprocess.run([ASSISTANT, *args], input=input, capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    assert run("init", str(ws)).returncode == 0
    assert run("vault", "init", "-w", str(ws)).returncode == 0
    assert run("vault", "set", "bank", "-w", str(ws), input="Zq7-Plum-Orbit-9931").returncode == 0
    assert run("vault", "set", "cafe", "-w", str(ws), input="café-Secret-77").returncode == 0
    plain = run("memory", "write", "-w", str(ws), "notes/plain.md", input="k: Zq7-Plum-Orbit-9931\n")
    assert plain.returncode != 0 and "vault" in plain.stderr
    return ws


@pytest.mark.parametrize("content", [
    '{"k": "Zq7\\u002dPlum-Orbit-9931"}\n',
    "k: " + unicodedata.normalize("NFD", "café-Secret-77") + "\n",
], ids=["json-one-u-escape", "nfd"])
def test_memory_write_refuses_the_disguised_value(ws, content):
    proc = run("memory", "write", "-w", str(ws), "notes/x.md", input=content)
    assert proc.returncode != 0, "stored: " + proc.stdout
    assert not (ws / "memory" / "notes" / "x.md").exists()
