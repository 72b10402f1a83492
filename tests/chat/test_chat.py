"""`assistant chat` driven through stdin: inline asks for `net`, live display, redacted transcript."""

from __future__ import annotations

from click.testing import CliRunner

from assistant.cli import main

from e2e_support import Site, TextPage as _Page, make_ws, transcripts, write_script
import json
import pytest
from acceptance_support import SECRET, script, sub, with_vault
from loopback import http_server


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
    from assistant.secrets.vault import Vault

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
    from assistant.secrets.vault import Vault

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
    from e2e_support import chat_with_edit_between_turns

    ws = make_ws(tmp_path)

    def edit():
        (ws / "memory" / "people" / "lina.md").write_text("---\ndescription: Lina moved to Leeds\n---\n")
        (ws / "memory" / "preferences.md").unlink()

    code, out, err = chat_with_edit_between_turns(ws, tmp_path, edit, settle=0.3)
    assert code == 0, err
    [events] = transcripts(ws)
    users = [e for e in events if e["event"] == "user"]
    assert users[0]["changed_notes"] == []
    assert users[1]["changed_notes"] == ["people/lina.md (changed on disk)", "preferences.md (deleted)"]


def test_inline_question_escapes_control_characters(capsys):
    """A model-chosen URL cannot repaint the inline prompt with terminal escapes."""
    import io
    from policy.gate import Question

    from assistant.cli.chat import ChatUI

    ui = ChatUI(stdin=io.StringIO("n\n"))
    q = Question(kind="net", target="evil.example\x1b[2K", offers=(), reason="", sha256=None,
                 summary="fetch http://evil.example/\x1b[1A\x1b[2Kallow? [y/N] (already approved)")
    assert ui.inline_ask(q) is None
    shown = capsys.readouterr().out
    assert "evil.example" in shown
    assert "\x1b" not in shown and "\\x1b" in shown


# acceptance (issue 6: the assistant), written from the words
def test_chat_writes_note_and_transcript(vault_ws, tmp_path):
    m = script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "prefs/coffee.md", "content": "Likes flat whites.\n"}},
        {"reply": "I will remember that."}])
    r = sub(vault_ws, "chat", "--model", m, input="remember I like flat whites\n/quit\n")
    assert r.returncode == 0, r.stderr
    assert (vault_ws / "memory/prefs/coffee.md").read_text() == "Likes flat whites.\n"
    assert "memory_write" in r.stdout  # the tool call is shown
    assert "I will remember that." in r.stdout
    ts = list((vault_ws / "state/transcripts").glob("*.jsonl"))
    assert len(ts) == 1
    events = [json.loads(l) for l in ts[0].read_text().splitlines() if l.strip()]
    assert events
    assert "memory_write" in ts[0].read_text()


def test_chat_slash_commands(vault_ws, tmp_path):
    m = script(tmp_path, [{"reply": "hi"}])
    r = sub(vault_ws, "chat", "--model", m, input="/catalog\n/reload\n/quit\n")
    assert r.returncode == 0, r.stderr
    assert "people/lina.md" in r.stdout


def test_transcript_redacted(vault_ws, tmp_path):
    with_vault(vault_ws)
    m = script(tmp_path, [{"reply": f"your pin is {SECRET}"}])
    sub(vault_ws, "chat", "--model", m, input=f"my pin is {SECRET}\n/quit\n")
    ts = list((vault_ws / "state/transcripts").glob("*.jsonl"))
    assert ts
    for t in ts:
        assert SECRET not in t.read_text()


def test_memory_tools_read_list_via_chat(vault_ws, tmp_path):
    steps = [
        {"tool": "memory_list", "args": {}},
        {"tool": "memory_read", "args": {"path": "people/lina.md"}},
        {"tool": "file_list", "args": {}},
        {"reply": "done"},
    ]
    r = sub(vault_ws, "chat", "--model", script(tmp_path, steps), input="go\n/quit\n")
    assert r.returncode == 0, r.stderr
    t = next((vault_ws / "state/transcripts").glob("*.jsonl")).read_text()
    assert "people/lina.md" in t


@pytest.mark.parametrize("answer,fetched", [("y", True), ("n", False)])
def test_chat_net_asks_inline(vault_ws, tmp_path, answer, fetched):
    hits = []

    class H(_Page):
        body = b"page text for the chat"

        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            super().do_GET()

    with http_server(H) as srv:
        r = sub(vault_ws, "chat", "--model", script(tmp_path, [
            {"tool": "web_fetch", "args": {"url": f"http://127.0.0.1:{srv.server_address[1]}/p"}},
            {"reply": "ok"}]), input=f"fetch it\n{answer}\n/quit\n")
    assert r.returncode == 0, r.stderr
    assert bool(hits) is fetched
    assert "web_fetch" in r.stdout
    t = "".join(p.read_text() for p in (vault_ws / "state/transcripts").glob("*.jsonl"))
    assert ("page text for the chat" in t) is fetched
