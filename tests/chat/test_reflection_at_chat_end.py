"""Issue 24 item 2 on a real terminal: after /quit, Ctrl-D or the double Ctrl-C that ends a chat,
one reflection turn proposes memory changes. Each is shown in full and answered y/n (never
auto-allowed, although memory_watched is "allow"); a no, or Ctrl-C, writes nothing; `[memory]
reflect = "off"` does nothing; stdin that is not a terminal skips it; the transcript and
`runs show` mark the reflection."""

from __future__ import annotations

import subprocess
import sys

from e2e_support import cli_env, make_ws, memory_files, write_script
from tty_harness import Pty


def _ws(tmp_path, reflect: str):
    ws = make_ws(tmp_path)
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace("[memory]\n", f'[memory]\nreflect = "{reflect}"\n', 1))
    return ws


def _note(name: str, line: str) -> dict:
    return {"tool": "memory_write", "args": {"path": f"people/{name}.md",
                                             "content": f"---\ndescription: {name}\n---\n{line}\n"}}


CHAT = [{"reply": "Nice to meet them."},
        _note("ana", "Ana is my cousin, REFLECTION-ANA."),
        _note("ben", "Ben is my neighbour, REFLECTION-BEN."),
        {"reply": "done"}]


def _chat(tmp_path, reflect: str = "chat", items=CHAT):
    ws = _ws(tmp_path, reflect)
    script = write_script(tmp_path, items)
    return ws, Pty("-w", str(ws), "chat", "--model", f"script:{script}")


def _transcript(ws) -> list[dict]:
    import json

    [path] = list((ws / "state" / "transcripts").glob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_each_proposal_is_shown_in_full_and_only_a_yes_writes_it(tmp_path):
    ws, t = _chat(tmp_path)
    try:
        t.read_until("you> ")
        t.send("my cousin is Ana and my neighbour is Ben\r")
        t.read_until("you> ")
        t.send("/quit\r")
        first = t.read_until("allow?")
        assert "REFLECTION-ANA" in first and "REFLECTION-BEN" not in first     # one at a time, in full
        assert "proposed at the end of the chat (1 of 2)" in first
        assert "[y/N]" in first and "always" not in first.rsplit("people/ana.md", 1)[-1]  # y or no only
        t.send("n\r")
        second = t.read_until("allow?")
        assert "REFLECTION-BEN" in second
        t.send("y\r")
        t.read_until("saved: created people/ben.md")
        assert t.wait() == 0
    finally:
        t.kill()
    files = memory_files(ws)
    assert "people/ana.md" not in files                       # the no wrote nothing
    assert b"REFLECTION-BEN" in files["people/ben.md"]
    events = _transcript(ws)
    kinds = [e["event"] for e in events]
    assert kinds.index("reflection_start") < kinds.index("reflection_end") < kinds.index("session_end")
    written = [e for e in events if e["event"] == "reflection_write"]
    assert [(e["path"], e["written"]) for e in written] == [("people/ana.md", False), ("people/ben.md", True)]
    shown = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "runs", "show",
                            events[0]["session"]], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "[reflection] start" in shown.stdout and "[reflection] written: people/ben.md" in shown.stdout
    assert "[reflection] not written: people/ana.md" in shown.stdout


def test_ctrl_c_at_a_proposal_skips_the_reflection_and_writes_nothing(tmp_path):
    ws, t = _chat(tmp_path)
    before = memory_files(ws)
    try:
        t.read_until("you> ")
        t.send("my cousin is Ana\r")
        t.read_until("you> ")
        t.send("\x04")                     # Ctrl-D ends the chat too
        t.read_until("allow?")
        t.interrupt()
        t.read_until("reflection skipped")
        assert t.wait() == 0
    finally:
        t.kill()
    assert memory_files(ws) == before
    assert "REFLECTION-BEN" not in t.text      # the second proposal was never put
    assert any(e["event"] == "reflection_skipped" for e in _transcript(ws))


def test_the_double_ctrl_c_that_ends_a_chat_reflects_too(tmp_path):
    ws, t = _chat(tmp_path)
    try:
        t.read_until("you> ")
        t.send("my cousin is Ana\r")
        t.read_until("you> ")
        t.interrupt()
        t.read_until("Ctrl-C again")
        t.interrupt()
        t.read_until("allow?")
        t.send("y\r")
        t.read_until("allow?")
        t.send("\r")                       # Enter is no
        t.read_until("not saved")
        assert t.wait() == 0
    finally:
        t.kill()
    files = memory_files(ws)
    assert b"REFLECTION-ANA" in files["people/ana.md"] and "people/ben.md" not in files


def test_reflect_off_does_nothing(tmp_path):
    ws, t = _chat(tmp_path, reflect="off")
    before = memory_files(ws)
    t.one_turn_then_quit("my cousin is Ana", "Nice to meet them.")
    assert "before you go" not in t.text and "allow?" not in t.text
    assert memory_files(ws) == before
    assert not [e for e in _transcript(ws) if e["event"].startswith("reflection")]


def test_stdin_that_is_not_a_terminal_skips_the_reflection(tmp_path):
    ws = _ws(tmp_path, "chat")
    script = write_script(tmp_path, CHAT)
    before = memory_files(ws)
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "chat", "--model", f"script:{script}"],
                       input="my cousin is Ana\n/quit\n", capture_output=True, text=True, env=cli_env(), timeout=60)
    assert r.returncode == 0, r.stderr
    assert "Nice to meet them." in r.stdout and "before you go" not in r.stdout
    assert memory_files(ws) == before
    events = _transcript(ws)
    assert [e["reason"] for e in events if e["event"] == "reflection_skipped"] == ["stdin is not a terminal"]
    assert not any(e["event"] == "reflection_start" for e in events)


def test_the_five_proposal_bound_is_said_on_the_screen(tmp_path):
    items = [{"reply": "Nice."}] + [_note(f"p{i}", f"person {i}") for i in range(7)] + [{"reply": "done"}]
    ws, t = _chat(tmp_path, items=items)
    try:
        t.read_until("you> ")
        t.send("seven people\r")
        t.read_until("you> ")
        t.send("/quit\r")
        said = t.read_until("allow?")
        assert "2 proposals beyond the first 5 were dropped" in said and "5 proposals it completed are shown" in said
        for _ in range(4):
            t.send("n\r")
            t.read_until("allow?")
        t.send("n\r")
        assert t.wait() == 0
    finally:
        t.kill()
    assert t.text.count("allow?") == 5
    assert not any(p.startswith("people/p") for p in memory_files(ws))
