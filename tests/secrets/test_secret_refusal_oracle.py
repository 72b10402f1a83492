"""Issue 10 item 5: a refusal the model gets for a vault value is no oracle. It never names the
secret or where it was; after the first one the turn takes no more tool calls (an unattended
run ends with exit 4 and the notify command is told; in a chat a second one ends the chat);
each is audited. (This reverses issue 4's "tell the model the secret's name".)"""

from __future__ import annotations

import json
import os

from secrets_support import WIFI, audit_events, cli, env, make_ws, transcript_events, vault_env, write_script
from workspaces import notify_with

WORDS = ["apple", "birch", "cedar", WIFI, "delta", "ember", "fjord", "grove"]


def _notify(tmp_path, ws):
    log = tmp_path / "notified.txt"
    notify_with(ws, f'printf "%s\\n" "$*" >> {log}\nenv | grep -c ASSISTANT_VAULT >> {log} || true\n')
    return log


def _model_saw(ws) -> list[str]:
    """Every tool output the model was given (what the transcript records as tool_result)."""
    return [str(e.get("output", "")) for e in transcript_events(ws) if e["event"] == "tool_result"]


def test_unattended_run_refused_secret_names_nothing_ends_the_run_exit_4_and_notifies(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI, "BANK_PIN": "7391-4420-8817"})
    log = _notify(tmp_path, ws)
    half = "\n".join(WORDS[:4]) + "\n"          # a binary-search probe: is the value in this half?
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "probe.md", "content": half}},
        {"tool": "memory_write", "args": {"path": "probe2.md", "content": "\n".join(WORDS[4:]) + "\n"}},
        {"reply": "the password is among the first four"}])
    r = cli("-w", str(ws), "run", "--model", f"script:{script}", "probe", environ=vault_env())
    assert r.returncode == 4, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("failed: memory_write probe.md: refused"), r.stdout
    assert WIFI not in r.stdout + r.stderr
    # what the model saw names neither the secret nor a position
    [seen] = _model_saw(ws)
    assert "WIFI" not in seen and "BANK_PIN" not in seen and "redacted" not in seen and WIFI not in seen
    assert "secret" in seen
    # the turn took no more tool calls: the second probe never ran, nothing was written
    calls = [e for e in transcript_events(ws) if e["event"] == "tool_call"]
    assert [c["args"]["path"] for c in calls] == ["probe.md"]
    assert not (ws / "memory" / "probe.md").exists() and not (ws / "memory" / "probe2.md").exists()
    # audited (the person's log may name the secret), and the notify command was told, without
    # the vault's passphrase in its environment
    [audit] = [a for a in audit_events(ws) if a["event"] == "secret_refused"]
    assert audit["tool"] == "memory_write" and audit["secrets"] == ["WIFI"]
    told = log.read_text()
    assert "vault" in told and WIFI not in told
    assert told.strip().splitlines()[-1] == "0"          # no ASSISTANT_VAULT_* variable
    end = [e for e in transcript_events(ws) if e["event"] == "session_end"][-1]
    assert end["exit_code"] == 4


def test_no_tool_echoes_a_vault_value_back_as_a_redaction_marker(tmp_path):
    """memory_read of a path spelling the value would answer 'no note at [redacted:WIFI]': the
    call is refused before it runs, with the same words whichever tool and argument it was."""
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    for i, call in enumerate([
        {"tool": "memory_read", "args": {"path": f"{WIFI}.md"}},
        {"tool": "file_write", "args": {"path": "x.txt", "content": f"pw {WIFI}"}},
        {"tool": "file_read", "args": {"path": f"a/{WIFI}"}},
    ]):
        script = write_script(tmp_path, [call, {"reply": "ok"}], name=f"s{i}.json")
        r = cli("-w", str(ws), "run", "--model", f"script:{script}", "probe", environ=vault_env())
        assert r.returncode == 4, r.stdout + r.stderr
    seen = _model_saw(ws)
    assert len(seen) == 3 and len(set(seen)) == 1, seen     # one message, whatever was probed
    assert "WIFI" not in seen[0] and "redacted" not in seen[0]
    assert not (ws / "files" / "x.txt").exists()
    assert len([a for a in audit_events(ws) if a["event"] == "secret_refused"]) == 3


def test_a_second_refusal_in_a_chat_ends_the_chat(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "a.md", "content": f"{WIFI}\n"}},
        {"tool": "file_write", "args": {"path": "b.txt", "content": f"{WIFI}"}},
        {"reply": "still chatting"}])
    r = cli("-w", str(ws), "chat", "--model", f"script:{script}",
            input="one\ntwo\nthree\n", environ=vault_env())
    out = r.stdout
    assert WIFI not in out + r.stderr
    # the person is told which secret; the turn ended after the first refusal
    assert out.count("carried your vault secret WIFI") == 2
    assert "a second call carrying a vault secret ends this chat" in out
    assert "the chat ends" in out
    # the second user message's turn was the last: "three" never reached the model
    users = [e["text"] for e in transcript_events(ws) if e["event"] == "user"]
    assert users == ["one", "two"]
    assert "still chatting" not in out
    assert len([a for a in audit_events(ws) if a["event"] == "secret_refused"]) == 2
    seen = _model_saw(ws)
    assert all("WIFI" not in s and "redacted" not in s for s in seen)


def test_the_persons_own_cli_may_name_the_secret(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    r = cli("-w", str(ws), "memory", "write", "w.md", input=f"wifi: {WIFI}\n", environ=vault_env())
    assert r.returncode != 0 and "WIFI" in r.stderr and WIFI not in r.stderr + r.stdout
    assert not (ws / "memory" / "w.md").exists()
