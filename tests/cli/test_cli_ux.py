"""What a person at a terminal sees: the chat in a real pseudo-terminal (Ctrl-C, Ctrl-D, error
lines), and the small CLI contracts a careful user relies on (-w everywhere, clear refusals)."""

from __future__ import annotations

import time

from click.testing import CliRunner

from assistant.cli import main

from e2e_support import make_ws, write_script
from tty_harness import Pty


def _chat(tmp_path, items):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, items)
    return ws, Pty("-w", str(ws), "chat", "--model", f"script:{script}")


def test_ctrl_c_at_the_prompt_clears_the_line_and_the_chat_goes_on(tmp_path):
    ws, t = _chat(tmp_path, [{"reply": "still here"}])
    t.read_until("you> ")
    t.send("half a thought")
    t.interrupt()
    t.read_until("Ctrl-D or /quit to leave")
    t.send("hello\r")
    t.read_until("assistant: still here")
    t.send("/quit\r")
    assert t.wait() == 0


def test_ctrl_c_twice_at_the_prompt_ends_the_chat(tmp_path):
    ws, t = _chat(tmp_path, [])
    for _ in range(2):
        t.read_until("you> ")
        t.send("x")
        t.interrupt()
    assert t.text.count("to leave)") == 1
    assert t.wait() == 0


def test_ctrl_d_ends_the_chat_on_a_fresh_line(tmp_path):
    ws, t = _chat(tmp_path, [])
    t.read_until("you> ")
    t.send("\x04")
    assert t.wait() == 0
    # the shell's prompt must not be glued to ours: the terminal output ends with a newline
    assert t.text.endswith("you> \n"), repr(t.text[-40:])


def test_a_model_error_is_shown_once(tmp_path):
    ws, t = _chat(tmp_path, [])     # an empty script: the first step is an exhausted-script error
    t.read_until("you> ")
    t.send("hello\r")
    t.read_until("exhausted", timeout=30)
    t.quit_at_prompt()
    assert t.text.count("is exhausted") == 1, t.text


def _cli(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env or {"ASSISTANT_WORKSPACE": None})


def test_init_takes_w_like_every_command_and_says_how_to_reach_the_new_workspace(tmp_path, monkeypatch):
    monkeypatch.delenv("ASSISTANT_WORKSPACE", raising=False)
    dest = tmp_path / "ws"
    r = _cli("init", "-w", str(dest))
    assert r.exit_code == 0, r.output
    assert (dest / "config.toml").is_file()
    # the next steps name this workspace: a bare `assistant chat` would look in the default one
    assert f"assistant -w {dest} vault init" in r.output
    assert f"assistant -w {dest} chat" in r.output


def test_init_refuses_two_different_folders(tmp_path):
    r = _cli("-w", str(tmp_path / "a"), "init", str(tmp_path / "b"))
    assert r.exit_code == 1
    assert "two different workspaces" in r.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_init_in_the_selected_workspace_gives_plain_next_steps(tmp_path):
    dest = tmp_path / "ws"
    r = _cli("init", env={"ASSISTANT_WORKSPACE": str(dest)})
    assert r.exit_code == 0, r.output
    assert "`assistant vault init`" in r.output and "`assistant chat`" in r.output


def test_schedule_install_refuses_contradictory_flags(tmp_path):
    ws = make_ws(tmp_path)
    for flags in (["--cron", "--systemd"], ["--print", "--write"]):
        r = _cli("-w", str(ws), "schedule", "install", *flags)
        assert r.exit_code == 2, (flags, r.output)
        assert "not both" in r.output, r.output
    r = _cli("-w", str(ws), "schedule", "install", "--systemd")
    assert r.exit_code == 0 and "[Timer]" in r.output
    r = _cli("-w", str(ws), "schedule", "install")
    assert r.exit_code == 0 and " run " in r.output and "[Timer]" not in r.output


def test_a_note_edited_mid_chat_is_shown_as_noticed_before_the_next_turn(tmp_path):
    ws, t = _chat(tmp_path, [{"reply": "first answer"}, {"reply": "second answer"}])
    t.read_until("you> ")
    t.send("hello\r")
    t.read_until("assistant: first answer")
    t.read_until("you> ")
    (ws / "memory" / "people" / "lina.md").write_text("---\ndescription: Lina moved to Leeds\n---\n")
    time.sleep(0.5)        # the watcher's debounce
    t.send("and now?\r")
    t.read_until("assistant: second answer")
    shown = t.text[t.text.index("and now?"):]
    assert "people/lina.md (changed on disk)" in shown.split("assistant: second answer")[0], shown
    t.send("/quit\r")
    assert t.wait() == 0


def test_the_assistants_own_write_is_not_shown_as_noticed_but_a_later_hand_edit_is(tmp_path):
    ws, t = _chat(tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/bo.md", "content": "Bo.\n"}}, {"reply": "saved"},
        {"reply": "second"}, {"reply": "third"}])
    t.read_until("you> ")
    t.send("remember bo\r")
    t.read_until("assistant: saved")
    t.read_until("you> ")
    time.sleep(0.5)         # the watcher has seen our own write
    t.send("next\r")
    t.read_until("assistant: second")
    t.read_until("you> ")
    (ws / "memory" / "people" / "bo.md").write_text("Bo, edited by hand.\n")
    time.sleep(0.5)
    t.send("again\r")
    t.read_until("assistant: third")
    t.send("/quit\r")
    assert t.wait() == 0
    second = t.text[t.text.index("next"):t.text.index("assistant: second")]
    third = t.text[t.text.index("again"):t.text.index("assistant: third")]
    assert "noticed" not in second, second
    assert "noticed: people/bo.md (changed on disk)" in third, third


def test_a_terminal_sees_a_thinking_line_until_the_first_output_and_then_it_is_erased(tmp_path):
    """The first turn on a real model can take many seconds before a token: say so, then
    erase the status line so it never mixes with the reply."""
    ws, t = _chat(tmp_path, [{"reply": "an answer"}])
    t.read_until("you> ")
    t.send("hello\r")
    t.read_until("assistant: an answer")
    t.send("/quit\r")
    assert t.wait() == 0
    raw = t.text[t.text.index("hello"):]
    assert "(thinking...)" in raw
    status_at = raw.index("(thinking...)")
    assert raw.index("\r\x1b[K", status_at) < raw.index("assistant: an answer")


def test_no_thinking_line_when_the_output_is_not_a_terminal(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"reply": "an answer"}])
    r = CliRunner().invoke(main, ["-w", str(ws), "chat", "--model", f"script:{script}"], input="hello\n/quit\n")
    assert r.exit_code == 0 and "assistant: an answer" in r.stdout
    assert "thinking" not in r.stdout and "\x1b" not in r.stdout


def test_init_with_an_empty_dir_argument_is_refused_not_the_default_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    r = _cli("init", "")
    assert r.exit_code != 0 and "empty" in r.output
    assert not (tmp_path / "home").exists()


def test_init_failure_names_the_folder_not_an_internal_temp_name(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = _cli("init", str(blocker / "ws"))
    assert r.exit_code == 1
    assert f"cannot create the workspace {blocker / 'ws'}" in r.output, r.output
    assert ".init-" not in r.output


def test_init_prints_the_absolute_folder_it_made(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = _cli("init", "rel")
    assert r.exit_code == 0 and f"created workspace {tmp_path / 'rel'}:" in r.output


def test_an_empty_w_is_a_usage_error_not_the_default_workspace(tmp_path):
    ws = make_ws(tmp_path)
    for args in (["-w", "", "memory", "ls"], ["memory", "-w", "", "ls"], ["memory", "ls", "-w", ""]):
        r = _cli(*args, env={"ASSISTANT_WORKSPACE": str(ws)})
        assert r.exit_code == 2 and "empty" in r.output, (args, r.output)


def test_ctrl_c_ends_follow_and_watch_cleanly_on_a_fresh_line(tmp_path):
    ws = make_ws(tmp_path)
    for args, ready in ((["approvals", "list", "--follow"], "no pending approvals"),
                        (["memory", "watch"], "Ctrl-C to stop")):
        t = Pty("-w", str(ws), *args)
        t.read_until(ready)
        t.interrupt()
        assert t.wait() == 0, t.text
        assert t.text.endswith("\n") and "Traceback" not in t.text and "Aborted" not in t.text, repr(t.text[-60:])
