"""Colour on a terminal: status words (done, denied, failed, error, ok, PROBLEM), diff lines (+ green,
- red) and the chat's speakers, only when the stream is a terminal and NO_COLOR is unset or empty
(https://no-color.org); never when piped. Colour never carries hostile text: the only SGR codes
on the screen are the palette's own, and a reply's escape sequence is still shown escaped."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest

from assistant.display.colour import STYLES
from assistant.workspace.layout import init_workspace

pexpect = pytest.importorskip("pexpect", reason="pexpect is not installed (pip install 'assistant[dev]')")

SGR = re.compile(rb"\x1b\[([0-9;]*)m")
PALETTE = {c.encode() for c in STYLES.values()} | {b"0"}
GREEN, RED, RESET = b"\x1b[32m", b"\x1b[31m", b"\x1b[0m"
EVIL = "look \x1b[8mhidden\x1b[0m \x1b[2J"


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    init_workspace(root, example=True)
    return root


def env(tmp_path, **extra):
    out = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_") and k != "NO_COLOR"}
    out.update(HOME=str(tmp_path), TMPDIR=str(tmp_path), TERM="xterm-256color", **extra)
    return out


def on_pty(tmp_path, ws, *args, input_lines=(), **extra) -> bytes:
    child = pexpect.spawn(sys.executable, ["-m", "assistant", "-w", str(ws), *args], env=env(tmp_path, **extra),
                          timeout=60, dimensions=(40, 200),
                          preexec_fn=lambda: __import__("signal").signal(2, __import__("signal").SIG_DFL))
    seen = io.BytesIO()
    child.logfile_read = seen            # everything the terminal showed, from the start
    try:
        for line in input_lines:
            child.expect(b"you>")
            child.sendline(line)
        child.expect(pexpect.EOF)
        return seen.getvalue()
    finally:
        child.close(force=True)


def piped(tmp_path, ws, *args, input=None, **extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], input=input,
                          capture_output=True, env=env(tmp_path, **extra), timeout=60)


def only_palette(raw: bytes) -> None:
    codes = set(SGR.findall(raw))
    assert codes <= PALETTE, codes - PALETTE


def script(tmp_path, items) -> str:
    p = tmp_path / "script.json"
    p.write_text(json.dumps(items))
    return f"script:{p}"


def test_run_outcome_word(ws, tmp_path):
    model = script(tmp_path, [{"reply": EVIL}])
    raw = on_pty(tmp_path, ws, "run", "--model", model, "hello")
    assert GREEN + b"done" + RESET + b":" in raw, raw
    only_palette(raw)
    assert b"\\x1b[8mhidden" in raw and b"\x1b[2J" not in raw

    assert b"\x1b[" not in on_pty(tmp_path, ws, "run", "--model", model, "hello", NO_COLOR="1")
    # NO_COLOR set but empty does not turn colour off (no-color.org)
    assert GREEN + b"done" + RESET in on_pty(tmp_path, ws, "run", "--model", model, "hello", NO_COLOR="")
    r = piped(tmp_path, ws, "run", "--model", model, "hello")
    assert r.returncode == 0 and r.stdout.startswith(b"done: ") and b"\x1b[" not in r.stdout + r.stderr

    raw = on_pty(tmp_path, ws, "run", "--model", f"script:{tmp_path / 'missing.json'}", "hello")
    assert RED + b"error" + RESET + b":" in raw, raw


def test_chat_speakers_rulings_and_diff(ws, tmp_path):
    model = script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/lina.md", "content": "Lina likes green tea.\n"}},
        {"reply": "Noted."}])
    # the write needs the note's revision: take it the way the model would, from memory_read
    from assistant.memory import open_memory

    rev = open_memory(ws, mode="watched").read("people/lina.md").revision
    items = json.loads((tmp_path / "script.json").read_text())
    items[0]["args"]["base"] = rev
    (tmp_path / "script.json").write_text(json.dumps(items))
    old_first = (ws / "memory" / "people" / "lina.md").read_text().splitlines()[0]

    raw = on_pty(tmp_path, ws, "chat", "--model", model, input_lines=["remember green tea", "/quit"])
    assert b"\x1b[1;34myou>" + RESET in raw, raw                       # the person
    assert b"\x1b[1;35massistant" + RESET + b": Noted." in raw, raw     # the assistant
    assert b"[" + GREEN + b"allow" + RESET + b"]" in raw, raw           # the ruling
    assert b"   | " + GREEN + b"+Lina likes green tea." + RESET in raw, raw
    assert b"   | " + RED + b"-" + old_first.encode() + RESET in raw, raw
    only_palette(raw)

    (ws / "memory" / "people" / "lina.md").write_text("Lina.\n")
    items[0]["args"]["base"] = open_memory(ws, mode="watched").read("people/lina.md").revision
    (tmp_path / "script.json").write_text(json.dumps(items))
    raw = on_pty(tmp_path, ws, "chat", "--model", model, input_lines=["again", "/quit"], NO_COLOR="1")
    assert b"\x1b[3" not in raw and b"\x1b[1;3" not in raw and b"assistant: Noted." in raw, raw


def test_diffs_doctor_and_errors(ws, tmp_path):
    assert piped(tmp_path, ws, "memory", "write", "n.md", input=b"one\n- a list item\n").returncode == 0
    rev = json.loads(piped(tmp_path, ws, "memory", "cat", "--json", "n.md").stdout)["revision"]
    assert piped(tmp_path, ws, "memory", "write", "n.md", "--base", rev, input=b"two\n").returncode == 0
    first = json.loads(piped(tmp_path, ws, "memory", "log", "n.md", "--json").stdout)[-1]["rev"]

    raw = on_pty(tmp_path, ws, "memory", "diff", "n.md", "--rev", first)
    assert RED + b"-one" + RESET in raw and RED + b"-- a list item" + RESET in raw and GREEN + b"+two" + RESET in raw
    only_palette(raw)
    r = piped(tmp_path, ws, "memory", "diff", "n.md", "--rev", first)
    assert b"-one" in r.stdout and b"\x1b[" not in r.stdout
    assert b"\x1b[" not in on_pty(tmp_path, ws, "memory", "diff", "n.md", "--rev", first, NO_COLOR="1")

    model = script(tmp_path, [{"reply": "hi"}])
    raw = on_pty(tmp_path, ws, "doctor", "--no-notify", "--model", model)
    assert GREEN + b"ok" + RESET in raw
    assert b"\x1b[" not in piped(tmp_path, ws, "doctor", "--no-notify", "--model", model).stdout

    raw = on_pty(tmp_path, ws, "memory", "cat", "nope")
    assert RED + b"error" + RESET + b": no note at nope" in raw, raw
    r = piped(tmp_path, ws, "memory", "cat", "nope")
    assert r.stderr.startswith(b"error: no note at nope")
