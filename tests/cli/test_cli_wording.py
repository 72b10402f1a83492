"""The CLI speaks to you, in plain words (issue 23, item 18): a secret refused at `memory write`
is "in your vault"; `memory log` shows your own writes as yours, not as the rule for a watched
chat; an approval is "approved when asked", not "approved by the approver"; a denial line does
not say the kind after the tool ("memory_write memory"); a '..' step is not "'..' is '..'"; a
length of one is "1 character" (a URL's parts, a vault value); a name clash says "rename it", not
"have the person rename it"; and Ctrl-C in a chat during a tool call says "interrupted" once."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from assistant.display.terminal import url_parts
from assistant.secrets.vault import Vault
from bounded import wait_for
from e2e_support import make_ws as scripted_ws, write_script
from gate_support import ask_in_thread, unattended_gate, wait_request_file
from held_lock import HeldLock
from tty_harness import Pty

PASS = "wording test pass phrase"
SECRET = "Pq4-wording-secret-77Zx"


def _cli(ws, *args, stdin=None, **env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=60)


def test_a_secret_refused_at_your_cli_is_in_your_vault(vault_ws):
    Vault.create(vault_ws / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024).set("wifi", SECRET)
    r = _cli(vault_ws, "memory", "write", "notes/wifi.md", stdin=f"the wifi is {SECRET}\n",
             ASSISTANT_VAULT_PASSPHRASE=PASS)
    assert r.returncode != 0
    assert "a secret stored in your vault" in r.stderr and "the person" not in r.stderr
    assert SECRET not in r.stderr + r.stdout


def test_memory_log_shows_your_own_write_as_yours(ws):
    assert _cli(ws, "memory", "write", "notes/t.md", stdin="hello\n").returncode == 0
    r = _cli(ws, "memory", "log", "notes/t.md")
    assert r.returncode == 0, r.stderr
    line = r.stdout.splitlines()[0]
    assert "  you  notes/t.md" in line and "your own write" in line
    assert "root policy" not in line and "watched chat" not in line


def test_approved_when_asked_not_by_the_approver(vault_ws):
    t, res = ask_in_thread(unattended_gate(vault_ws))
    req = wait_request_file(vault_ws)
    r = _cli(vault_ws, "approvals", "approve", req["id"])
    assert r.returncode == 0, r.stderr
    t.join(20)
    assert res["d"].allowed and res["d"].reason == "approved when asked (this call only)"


def test_plain_lines_for_a_path_step_and_a_length_of_one(ws):
    r = _cli(ws, "memory", "cat", "../x.md")
    assert r.returncode != 0
    assert "'..' (the parent folder) is never allowed" in r.stderr and "'..' is '..'" not in r.stderr
    shown = url_parts("https://a/?q=1")
    assert "(1 character)" in shown and "(1 characters)" not in shown


def test_ctrl_c_during_a_tool_call_says_interrupted_once(tmp_path):
    ws = scripted_ws(tmp_path)
    script = write_script(tmp_path, [{"tool": "memory_write", "args": {"path": "notes/e.md", "content": "x\n"}},
                                     {"reply": "ok"}])
    t = Pty("-w", str(ws), "chat", "--model", f"script:{script}")
    try:
        t.read_until("you> ")
        with HeldLock(ws / "state" / "memory.lock"):      # the write waits for the writers' lock
            t.send("write it\r")
            t.read_until("-> memory_write")
            time.sleep(0.5)
            t.send("\x03")
            t.read_until("you> ")
        t.send("/quit\r")
        assert t.wait() == 0
    finally:
        t.kill()
    after = t.text[t.text.index("-> memory_write"):]
    assert sum(line.strip().endswith("interrupted") for line in after.splitlines()) == 1, after
    assert wait_for(lambda: not (ws / "memory" / "notes" / "e.md").exists(), 1)


def test_a_one_character_vault_value_is_one_character(vault_ws):
    Vault.create(vault_ws / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024)
    r = _cli(vault_ws, "vault", "set", "pin", stdin="a       \n", ASSISTANT_VAULT_PASSPHRASE=PASS)
    assert r.returncode != 0, r.stdout
    assert "only 1 character besides" in r.stderr and "1 characters" not in r.stderr


def test_a_name_clash_tells_you_to_rename_not_the_person(ws):
    import unicodedata
    nfd = unicodedata.normalize("NFD", "josé.md")
    (ws / "memory" / nfd).write_text("José plays the oud.\n")
    r = _cli(ws, "memory", "write", "josé.md", stdin="x\n")
    assert r.returncode != 0
    assert "already exists" in r.stderr and "assistant memory rename" in r.stderr
    assert "the person" not in r.stderr and "is refused: an entry" not in r.stderr
