"""Findings of the hostile review of the secret-handling and memory-write path.

Each test pins one problem that was found (and fixed): it failed before the fix."""

from __future__ import annotations

import itertools
import json
import string
import threading
import time
from pathlib import Path

import pytest

from assistant.catalog import CatalogSettings, render
from assistant.leak_rules import RULES
from assistant.leaks import Scanner

SECRET = "Zq8#pL2!vN7xR4tW"
GH_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _bounded(fn, limit: float):
    """Run fn in a thread; fail (not hang) if it takes longer than `limit` seconds.

    The limit is generous (linear work takes well under a tenth of it); it only separates
    linear from quadratic, it is not a speed target."""
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("r", fn()), daemon=True)
    t.start()
    t.join(limit)
    assert not t.is_alive(), f"still running after {limit}s: super-linear on hostile input"
    return box.get("r")


# --- 1. private-key rule: quadratic on hostile input ----------------------------------------

def _distinct_begin_lines(size: int) -> str:
    parts, n = [], 0
    for k in itertools.count(1):
        for t in itertools.product(string.ascii_uppercase, repeat=k):
            p = f"-----BEGIN {''.join(t)} PRIVATE KEY-----\n"
            parts.append(p)
            n += len(p)
            if n >= size:
                return "".join(parts)
    raise AssertionError


@pytest.mark.parametrize("text", [
    pytest.param(_distinct_begin_lines(1 << 20), id="distinct-kinds"),
    pytest.param("-----BEGIN RSA PRIVATE KEY-----\n" * (1 << 15), id="same-kind"),
    pytest.param("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n" * (1 << 15), id="same-kind-body"),
])
def test_private_key_rule_is_linear_on_a_mebibyte_of_begin_lines(text):
    scanner = Scanner({})
    found = _bounded(lambda: scanner.find(text), 8.0)
    assert found and all(f.rule == "private-key" for f in found)


def test_private_key_rule_still_pairs_begin_with_its_own_end():
    rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    ec_open = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBB\n"
    text = f"a\n{ec_open}\nprose after\n{rsa}\nz"
    red = Scanner({}).redact(text)
    assert "MIIEowIBAAKCAQEA" not in red and "MHcCAQEEIBB" not in red
    assert red.startswith("a\n[redacted:private-key]") and red.endswith("\nz")
    assert "prose after" in red


# --- 2. vault matching: quadratic when hits overlap ------------------------------------------

@pytest.mark.parametrize("value,text", [
    ("a" * 16, "a" * (1 << 20)),
    ("ab" * 8, "ab" * (1 << 19)),
    ("aaaaaaaa", " a" * (1 << 19)),
])
def test_overlapping_vault_hits_are_linear_and_redacted_once(value, text):
    scanner = Scanner({"x": value})
    red = _bounded(lambda: scanner.redact(text), 20.0)
    assert red.strip() == "[redacted:x]"


def test_overlapping_hits_of_distinct_variants_map_to_exact_spans():
    # The end of one hit is the start of the next (a shared position): spans stay exact.
    text = "pre " + SECRET + SECRET[::-1] + " " + SECRET + " post"
    red = Scanner({"k": SECRET}).redact(text)
    assert red == "pre [redacted:k][redacted:k] [redacted:k] post"


# --- 3. a secret cut by the end of a note's head showed in part in the catalog ---------------

LONG = "Zq8#pL2!vN7xR4tWsecretvalue123456"


@pytest.mark.parametrize("body", [
    pytest.param("\n" * 2030 + LONG + "\n", id="vault-value-body-line"),
    pytest.param(" " * 2020 + GH_TOKEN + "\n", id="shape-token-body-line"),
    pytest.param("---\n" + "k: v\n" * 404 + "description: " + LONG + "\n---\n", id="description"),
    pytest.param("x" * 1000 + "\n" + LONG * 100, id="long-value-after-summary"),
])
def test_catalog_never_shows_part_of_a_secret_cut_by_the_head(tmp_path, body):
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "n.md").write_text(body)
    block = render(mem, CatalogSettings(), Scanner({"k": LONG}))
    for value in (LONG, GH_TOKEN):
        for k in range(6, len(value) + 1):
            assert value[:k] not in block, f"{k} leading characters of a secret in the catalog"


def test_catalog_summary_of_a_huge_one_line_note_is_kept(tmp_path):
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "big.md").write_text("long line of prose " * 2000)
    block = render(mem, CatalogSettings(), Scanner({"k": LONG}))
    assert "- big.md: long line of prose long line of prose" in block


def test_redact_prefix_redacts_a_vault_value_cut_by_the_end_in_any_encoding():
    import base64
    scanner = Scanner({"k": LONG})
    forms = [LONG, LONG.encode().hex().upper(), base64.b64encode(b"user:" + LONG.encode()).decode()]
    for form in forms:
        for keep in (16, 20, len(form) - 1):
            text = "x" * 400 + " " + form[:keep]
            out = scanner.redact_prefix(text)
            assert form[:8] not in out
            assert out.startswith("x" * 80)


def test_redact_prefix_keeps_text_before_the_guard_and_marks_the_cut():
    scanner = Scanner({"k": LONG})
    text = "hello " * 200
    out = scanner.redact_prefix(text)
    assert out.endswith("\u2026") and out.startswith("hello hello")
    assert len(out) < len(text)
    assert scanner.redact_prefix("tiny") == "\u2026"


# --- 4. agent: tool output cut before redaction; changed-note paths unredacted ---------------

def _agent(tmp_path, items, tools):
    from assistant.agent import Agent, Limits
    from assistant.models.scripted import ScriptedModel
    from assistant.prompt import Conversation
    from assistant.tools.base import ToolContext
    from assistant.transcript import Transcript

    p = tmp_path / "script.json"
    p.write_text(json.dumps(items))
    model = ScriptedModel(p)
    scanner = Scanner({"k": LONG})
    ctx = ToolContext(workspace=None, scanner=scanner, gate=None)
    conv = Conversation("You are a test.", tools, "(no notes)")
    tr = Transcript(tmp_path / "tr", "review-session", scanner)
    agent = Agent(model=model, tools=tools, ctx=ctx, conversation=conv, transcript=tr,
                  limits=Limits(max_steps=4, tool_timeout=5, max_tokens=64))
    return agent, model, tr


def test_tool_output_cut_at_the_limit_never_shows_part_of_a_secret(tmp_path):
    from assistant.agent import MAX_TOOL_OUTPUT_CHARS
    from assistant.tools.base import Tool

    def big(args, ctx):   # the secret straddles the cut: 20 characters before it, the rest after
        return "x" * (MAX_TOOL_OUTPUT_CHARS - 20) + LONG + "tail"

    tools = [Tool("big", "B.", {"type": "object", "properties": {}, "additionalProperties": False}, big)]
    agent, model, tr = _agent(tmp_path, [{"tool": "big", "args": {}}, {"reply": "ok"}], tools)
    agent.turn("go")
    tr.close()
    seen = model.calls[1][-1]["content"]
    assert "output cut at" in seen
    assert LONG[:16] not in seen and LONG[:16] not in tr.path.read_text()


def test_changed_note_paths_reach_the_model_redacted(tmp_path):
    agent, model, tr = _agent(tmp_path, [{"reply": "ok"}], [])
    agent.turn("hi", [f"creds/{LONG}.md (changed on disk)"])
    tr.close()
    seen = model.calls[0][-1]["content"]
    assert "creds/[redacted:k].md" in seen and LONG not in seen


def test_file_read_cut_at_its_limit_never_shows_part_of_a_secret(tmp_path):
    from assistant.confine import Root
    from assistant.tools.base import ToolContext
    from assistant.tools.files import MAX_READ_CHARS, file_read

    files = tmp_path / "files"
    files.mkdir()
    (files / "big.txt").write_text("y" * (MAX_READ_CHARS - 20) + LONG + "rest of the file\n")
    with Root(files) as root:
        ctx = ToolContext(workspace=None, scanner=Scanner({"k": LONG}), gate=None, files=root)
        out = file_read({"path": "big.txt"}, ctx)
    assert "truncated" in out and LONG[:12] not in out


# --- 5. encodings and matching the scanner missed ---------------------------------------------

@pytest.mark.parametrize("before,after", [("token ", " more"), ("İ token ", " more"), ("x", "y")])
def test_value_with_a_capital_sigma_is_found_whatever_follows(before, after):
    value = "abcdefghΣ"   # str.lower() gives final sigma alone, medial sigma before a letter
    red = Scanner({"k": value}).redact(before + value + after)
    assert red == before + "[redacted:k]" + after


def test_value_with_only_a_lowercase_final_sigma_lookalike_is_not_a_hit():
    assert Scanner({"k": "abcdefghΣ"}).find("token abcdefghς more") == []


@pytest.mark.parametrize("encoded", [
    # Go's encoding/json escapes <, > and & (json.Marshal's default HTML escaping)
    '{"pw":"p\\u0026ss\\u003cw\\u003erd\\"q\'1"}',
    # PHP json_encode with JSON_HEX_TAG|JSON_HEX_AMP|JSON_HEX_APOS|JSON_HEX_QUOT
    '{"pw":"p\\u0026ss\\u003Cw\\u003Erd\\u0022q\\u00271"}',
])
def test_json_with_html_safe_unicode_escapes_is_found(encoded):
    value = "p&ss<w>rd\"q'1"
    assert Scanner({"k": value}).redact(encoded) == '{"pw":"[redacted:k]"}'


# --- 6. vault: a value that is mostly spaces or backslashes ----------------------------------

@pytest.mark.parametrize("value", ["a b c d e f", "ab\\\\\\\\\\\\\\\\", "x\ty\tz\tw\tv", "\\\\\\\\\\\\\\\\\\\\"])
def test_vault_refuses_a_value_whose_scannable_part_is_too_short(value, tmp_path):
    from assistant.vault import Vault, VaultError
    assert len(value) >= 8
    v = Vault.create(tmp_path / "vault.enc", "pw-for-tests", opslimit=1, memlimit=8 * 1024)
    with pytest.raises(VaultError, match="too short to scan for") as info:
        v.set("weak", value)
    assert value not in str(info.value)
    assert "weak" not in v


def test_vault_accepts_a_value_split_by_spaces_with_enough_characters(tmp_path):
    from assistant.vault import Vault
    v = Vault.create(tmp_path / "vault.enc", "pw-for-tests", opslimit=1, memlimit=8 * 1024)
    v.set("phrase", "correct horse battery")
    assert Scanner(v.secrets()).redact("it is correct horse\nbattery!") == "it is [redacted:phrase]!"


# --- 7. `memory watch` printed note names unredacted -------------------------------------------

def test_memory_watch_redacts_a_secret_in_a_note_name(tmp_path):
    import os
    import subprocess
    import sys

    from assistant.vault import Vault
    from assistant.workspace import init_workspace

    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    Vault.create(ws / "vault.enc", "pw-for-tests", opslimit=1, memlimit=8 * 1024).set("k", LONG)
    env = {**os.environ, "ASSISTANT_VAULT_PASSPHRASE": "pw-for-tests"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant", "-w", str(ws), "memory", "watch", "--json", "--timeout", "8"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(1.5)   # let the watcher start
        (ws / "memory" / f"creds {GH_TOKEN}.md").write_text("x\n")
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        change = json.loads(line)
        assert GH_TOKEN not in change["path"] and change["path"] == "creds [redacted:github-token].md"
    finally:
        proc.kill()
        proc.wait()


# --- 8. vault: a FIFO at vault.enc or at the key file hung the open --------------------------

def test_fifo_at_the_vault_path_is_a_clear_error_not_a_hang(tmp_path):
    import os

    from assistant.vault import Vault, VaultError
    fifo = tmp_path / "vault.enc"
    os.mkfifo(fifo)

    def attempt():
        with pytest.raises(VaultError, match="not a regular file"):
            Vault.open(fifo, "pw-for-tests")
        return True

    assert _bounded(attempt, 5.0)


def test_fifo_as_key_file_is_a_clear_error_not_a_hang(tmp_path):
    import os

    from assistant.vault import VaultError, read_key_file
    from assistant.workspace import init_workspace, open_workspace
    init_workspace(tmp_path / "ws", example=True)
    ws = open_workspace(tmp_path / "ws")
    os.mkfifo(tmp_path / "key", 0o600)
    ws.config = ws.config.updated({"vault": {"key_file": str(tmp_path / "key")}})

    def attempt():
        with pytest.raises(VaultError, match="not a regular file"):
            read_key_file(ws)
        return True

    assert _bounded(attempt, 5.0)


# --- 9. memory: a non-revision base was echoed back cut to 16 characters ---------------------

def test_conflict_message_never_echoes_a_base_that_is_not_a_revision(tmp_path):
    from assistant.memory import Conflict, Memory
    from assistant.workspace import init_workspace, open_workspace
    from policy.gate import Gate

    init_workspace(tmp_path / "ws", example=True)
    ws = open_workspace(tmp_path / "ws")
    ws.ensure_state()
    scanner = Scanner({"k": LONG})
    gate = Gate.for_workspace("watched", run_id="review", config=ws.config, grants_path=ws.grants_path,
                              approvals_dir=ws.approvals_dir, audit_path=ws.audit_path, redact=scanner.redact)
    mem = Memory(ws, scanner, gate)
    mem.write("n.md", "first\n")
    with pytest.raises(Conflict) as info:
        mem.write("n.md", "second\n", base=LONG)
    msg = str(info.value)
    assert "changed since you read it" in msg and LONG[:6] not in msg
    with pytest.raises(Conflict, match="'abcdef123456'"):
        mem.write("n.md", "second\n", base="abcdef123456")


@pytest.mark.parametrize("value", ["pässwörd-ünïcode", "emoji🔑key-12345678", "ΣΑΛΑΜΙ-secret-ΣΣ"])
def test_c_style_byte_escapes_of_a_non_ascii_value_are_found(value):
    escaped = repr(value.encode("utf-8"))          # b'p\xc3\xa4ssw...'
    scanner = Scanner({"k": value})
    assert scanner.redact(f"log: {escaped} end") == "log: b'[redacted:k]' end"
    assert scanner.redact(f"log: {escaped.upper()} end") != f"log: {escaped.upper()} end"


# --- 10. PERSONA.md went into every prompt unredacted ------------------------------------------

def test_persona_is_redacted_before_the_model_sees_it(tmp_path, monkeypatch):
    from assistant.session import open_session
    from assistant.models.scripted import ScriptedModel
    from assistant.vault import Vault
    from assistant.workspace import init_workspace, open_workspace

    init_workspace(tmp_path / "ws", example=True)
    ws = open_workspace(tmp_path / "ws")
    Vault.create(ws.vault_path, "pw-for-tests", opslimit=1, memlimit=8 * 1024).set("wifi", LONG)
    ws.persona_path.write_text(f"You help Sam. The wifi password is {LONG}; never say it.\n")
    monkeypatch.setenv("ASSISTANT_VAULT_PASSPHRASE", "pw-for-tests")
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"reply": "hi"}]))
    model = ScriptedModel(script)
    parts = open_session(ws, "watched", kind="chat", interactive=False)
    try:
        parts.new_agent(model).turn("hello")
    finally:
        parts.close()
    system = model.calls[0][0]["content"]
    assert "You help Sam" in system and LONG not in system and "[redacted:wifi]" in system


# --- 11. `memory edit` handed the vault passphrase to the editor --------------------------------

def test_memory_edit_does_not_pass_the_vault_passphrase_to_the_editor(tmp_path):
    import sys

    from click.testing import CliRunner

    from assistant.cli import main
    from assistant.vault import Vault
    from assistant.workspace import init_workspace

    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    Vault.create(ws / "vault.enc", "pw-for-tests", opslimit=1, memlimit=8 * 1024).set("k", LONG)
    seen = tmp_path / "editor-env.txt"
    script = tmp_path / "editor.py"
    script.write_text(
        "import os, sys, pathlib\n"
        f"pathlib.Path({str(seen)!r}).write_text(os.environ.get('ASSISTANT_VAULT_PASSPHRASE', '<unset>'))\n"
        "p = pathlib.Path(sys.argv[1]); p.write_text(p.read_text() + 'edited\\n')\n")
    r = CliRunner().invoke(main, ["-w", str(ws), "memory", "edit", "people/lina.md"],
                           env={"ASSISTANT_VAULT_PASSPHRASE": "pw-for-tests", "VISUAL": "",
                                "EDITOR": f"{sys.executable} {script}"})
    assert r.exit_code == 0, r.output
    assert seen.read_text() == "<unset>"
    assert (ws / "memory/people/lina.md").read_text().endswith("edited\n")
