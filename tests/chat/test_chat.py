"""`assistant chat` driven through stdin: inline asks for `net`, live display, redacted transcript."""

from __future__ import annotations

from click.testing import CliRunner

from assistant.cli import main

from e2e_support import Site, make_ws, transcripts, write_script


def chat(ws, script, text):
    return CliRunner().invoke(main, ["-w", str(ws), "chat", "--model", f"script:{script}"], input=text,
                              catch_exceptions=False)


def test_net_asks_inline_yes_fetches_no_sends_nothing(tmp_path):
    with Site({"/news": (200, {"Content-Type": "text/plain"}, b"Today: rain in Leeds.")}) as site:
        ws = make_ws(tmp_path)
        script = write_script(tmp_path, [
            {"tool": "web_fetch", "args": {"url": site.url("/news")}},
            {"reply": "It will rain."},
            {"tool": "web_fetch", "args": {"url": site.url("/news")}},
            {"reply": "I was not allowed to look."},
        ])
        # the line after each message answers the inline question
        r = chat(ws, script, "what is the weather?\ny\nand again?\n\n/quit\n")
        assert r.exit_code == 0, r.stdout + r.stderr
        assert len(site.seen_headers) == 1               # the second fetch was declined: nothing sent
    out = r.stdout
    assert out.count(f"? net {site.target}") == 2
    first_ask = out.index(f"? net {site.target}")
    assert out.index("-> web_fetch") < first_ask < out.index(f"[allow] net {site.target}")
    assert "<- Today: rain in Leeds." in out
    assert f"[deny] net {site.target}: declined in the chat" in out
    assert "assistant: It will rain." in out and "assistant: I was not allowed to look." in out
    [events] = transcripts(ws)
    rulings = [(e["target"], e["allowed"]) for e in events if e["event"] == "ruling"]
    assert rulings == [(site.target, True), (site.target, False)]


def test_net_rest_of_chat_answer_is_not_asked_again(tmp_path):
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"ok page")}) as site:
        ws = make_ws(tmp_path)
        script = write_script(tmp_path, [
            {"tool": "web_fetch", "args": {"url": site.url("/")}},
            {"tool": "web_fetch", "args": {"url": site.url("/")}},
            {"reply": "fetched twice"},
        ])
        r = chat(ws, script, "fetch twice\nr\n/quit\n")
        assert r.exit_code == 0
        assert r.stdout.count("? net") == 1 and len(site.seen_headers) == 2
    assert "(for the rest of this run)" in r.stdout or "[allow] net" in r.stdout


def test_transcript_and_display_never_show_a_vault_secret(tmp_path):
    from assistant.vault import Vault

    secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    ws = make_ws(tmp_path)
    v = Vault.create(ws / "vault.enc", "chat pass phrase", opslimit=1, memlimit=8 * 1024 * 1024)
    v.set("GITHUB_TOKEN", secret)
    (ws / "files" / "env.txt").write_text(f"TOKEN={secret}\n")
    script = write_script(tmp_path, [
        {"tool": "file_read", "args": {"path": "env.txt"}},
        {"tool": "memory_write", "args": {"path": "creds.md", "content": f"token {secret}\n"}},
        {"reply": "done"},
    ])
    r = CliRunner().invoke(main, ["-w", str(ws), "chat", "--model", f"script:{script}"],
                           input=f"my token is {secret}, keep it\n/quit\n",
                           env={"ASSISTANT_VAULT_PASSPHRASE": "chat pass phrase"}, catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    assert secret not in r.stdout and "[redacted:GITHUB_TOKEN]" in r.stdout
    assert not (ws / "memory" / "creds.md").exists()
    raw = "".join(p.read_text() for p in (ws / "state").rglob("*.jsonl"))
    assert secret not in raw and "[redacted:GITHUB_TOKEN]" in raw


def test_chat_with_locked_vault_refuses_to_start(tmp_path):
    from assistant.vault import Vault

    ws = make_ws(tmp_path)
    Vault.create(ws / "vault.enc", "chat pass phrase", opslimit=1, memlimit=8 * 1024 * 1024)
    script = write_script(tmp_path, [{"reply": "hi"}])
    r = CliRunner().invoke(main, ["-w", str(ws), "chat", "--model", f"script:{script}"], input="hi\n")
    assert r.exit_code == 1 and "locked" in r.stderr and "assistant: hi" not in r.stdout


def test_chat_step_limit_message_and_continues(tmp_path):
    ws = make_ws(tmp_path)
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace("max_steps = 8", "max_steps = 1"))
    script = write_script(tmp_path, [
        {"tool": "memory_list", "args": {}},
        {"tool": "memory_list", "args": {}},
        {"reply": "second turn works"},
    ])
    r = chat(ws, script, "loop\nnext\n/quit\n")
    assert r.exit_code == 0
    assert "stopped: the model asked for more than 1 tool calls" in r.stdout
    assert "assistant: second turn works" in r.stdout


def test_note_edited_during_chat_reaches_the_next_turn_tail(tmp_path):
    """Through the real CLI process: a hand edit between two turns is named in the next turn."""
    import select
    import subprocess
    import time

    from e2e_support import PY, cli_env

    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"reply": "first answer"}, {"reply": "second answer"}])
    proc = subprocess.Popen([PY, "-m", "assistant", "-w", str(ws), "chat", "--model", f"script:{script}"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=cli_env(), bufsize=1)
    try:
        proc.stdin.write("hello\n")
        proc.stdin.flush()
        line = ""
        deadline = time.monotonic() + 20
        while "first answer" not in line and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            if ready:
                line = proc.stdout.readline()
        assert "first answer" in line
        (ws / "memory" / "people" / "lina.md").write_text("---\ndescription: Lina moved to Leeds\n---\n")
        (ws / "memory" / "preferences.md").unlink()
        time.sleep(0.3)      # the watcher's debounce
        out, err = proc.communicate("and now?\n/quit\n", timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    [events] = transcripts(ws)
    users = [e for e in events if e["event"] == "user"]
    assert users[0]["changed_notes"] == []
    assert users[1]["changed_notes"] == ["people/lina.md (changed on disk)", "preferences.md (deleted)"]


def test_inline_question_escapes_control_characters(capsys):
    """A model-chosen URL cannot repaint the inline prompt with terminal escapes."""
    import io
    from types import SimpleNamespace

    from assistant.cli.chat import ChatUI

    ui = ChatUI(stdin=io.StringIO("n\n"))
    q = SimpleNamespace(kind="net", target="evil.example\x1b[2K", offers=(),
                        summary="fetch http://evil.example/\x1b[1A\x1b[2Kallow? [y/N] (already approved)")
    assert ui.inline_ask(q) is None
    shown = capsys.readouterr().out
    assert "evil.example" in shown
    assert "\x1b" not in shown and "\\x1b" in shown
