"""Issue 13 item 6: honest outcomes of `assistant run`. Exit 0 done, 1 error, 2 usage, 3 denied
or expired, 4 a tool call failed; stdout is exactly one line (`done:`, `denied:`, `failed:`
naming the call, `error:`), details on stderr only, nothing printed twice."""

from __future__ import annotations

import subprocess

from run_support import PY, cli, env, make_ws, transcript_events, write_script

NOTE = "Lina, Sam's sister.\n"


def test_a_run_whose_only_write_conflicted_is_failed_exit_4(tmp_path):
    ws = make_ws(tmp_path)
    # the model read the note, then it changed on disk before the write
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/lina.md", "content": "Lina, updated.\n",
                                          "base": "0123456789ab"}},
        {"reply": "Updated."}])
    before = (ws / "memory" / "people" / "lina.md").read_bytes()
    r = cli("-w", str(ws), "run", "--model", f"script:{script}", "update lina")
    assert r.returncode == 4, r.stdout + r.stderr
    assert r.stdout.count("\n") == 1
    assert r.stdout.startswith("failed: memory_write people/lina.md: ")
    assert "changed since you read it" in r.stdout and "Updated." not in r.stdout
    assert "Updated." in r.stderr          # the reply is kept, as a detail
    assert (ws / "memory" / "people" / "lina.md").read_bytes() == before
    [end] = [e for e in transcript_events(ws) if e["event"] == "session_end"]
    assert end["exit_code"] == 4


def test_a_failure_made_good_by_a_later_call_is_done(tmp_path):
    """A conflict the model repaired (write again without the stale base) is not a failed run."""
    from policy.grants import GrantStore

    ws = make_ws(tmp_path)
    GrantStore(ws / "grants.json").add("memory", "people/new.md", note="test")
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/new.md", "content": "x\n", "base": "0123456789ab"}},
        {"tool": "memory_write", "args": {"path": "people/new.md", "content": "x\n"}},
        {"reply": "Saved."}])
    r = cli("-w", str(ws), "run", "--model", f"script:{script}", "save")
    assert (r.returncode, r.stdout) == (0, "done: Saved.\n"), r.stdout + r.stderr
    assert "a later call did the same successfully" in r.stderr


def test_exit_codes_and_one_line_each(tmp_path):
    ws = make_ws(tmp_path)
    ok = write_script(tmp_path, [{"reply": "all good"}], "ok.json")
    r = cli("-w", str(ws), "run", "--model", f"script:{ok}", "hi")
    assert (r.returncode, r.stdout) == (0, "done: all good\n")
    # usage: exit 2, the error once (not again on stderr)
    r = cli("-w", str(ws), "run", "--model", f"script:{ok}", "--approval-timeout", "soon", "hi")
    assert r.returncode == 2 and r.stdout.startswith("error: ") and r.stdout.count("\n") == 1
    assert "--approval-timeout" in r.stdout and "--approval-timeout" not in r.stderr
    r = cli("-w", str(ws), "run")
    assert r.returncode == 2 and r.stdout == ""        # click's own usage error, on stderr
    # error: exit 1
    r = cli("-w", str(ws), "run", "--model", "script:/nonexistent.json", "hi")
    assert r.returncode == 1 and r.stdout.startswith("error: ") and r.stdout.count("\n") == 1
    assert r.stdout.strip() not in r.stderr             # nothing prints twice on a terminal
    # denied: exit 3 (nobody can be asked)
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace('channel = "inbox"', 'channel = "none"'))
    w = write_script(tmp_path, [{"tool": "memory_write", "args": {"path": "n.md", "content": "n\n"}},
                                {"reply": "saved"}], "w.json")
    r = cli("-w", str(ws), "run", "--model", f"script:{w}", "save")
    assert r.returncode == 3 and r.stdout.startswith("denied: memory_write") and r.stdout.count("\n") == 1


def test_run_help_lists_the_exit_codes():
    r = subprocess.run([PY, "-m", "assistant", "run", "--help"], capture_output=True, text=True, env=env(), timeout=60)
    text = " ".join(r.stdout.split())
    for needle in ("done: REPLY 0", "error: WHY 1", "denied: CALL: WHY 3", "failed: CALL: WHY 4", "usage error"):
        assert needle in text, text
