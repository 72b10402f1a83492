"""`assistant run` / `schedule run`: unattended outcomes, answered from another process via the CLI."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner

from assistant.cli import main

from e2e_support import make_ws, memory_files, popen_cli, run_cli, transcripts, write_script

NOTE = "Marek prefers planting plans as PDF.\n"


def _pending(ws, target, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = CliRunner().invoke(main, ["-w", str(ws), "approvals", "list", "--json"])
        if r.exit_code == 0:
            for item in json.loads(r.stdout or "[]"):
                if item["target"] == target and item["state"] == "pending":
                    return item
        time.sleep(0.05)
    raise AssertionError(f"no pending request for {target}")


def _approvals(ws, *args: str):
    """`assistant -w WS approvals ARGS...` in this process; it must succeed."""
    r = CliRunner().invoke(main, ["-w", str(ws), "approvals", *args])
    assert r.exit_code == 0, r.stderr
    return r


def _write_script(tmp_path, name="s.json", path="people/marek-prefs.md", content=NOTE, reply="saved"):
    return write_script(tmp_path, [{"tool": "memory_write", "args": {"path": path, "content": content}},
                                   {"reply": reply}], name)


def test_denied_through_the_cli_exit_3_nothing_written(tmp_path):
    ws = make_ws(tmp_path)
    before = memory_files(ws)
    proc = popen_cli("-w", str(ws), "run", "--model", f"script:{_write_script(tmp_path)}",
                     "--approval-timeout", "60s", "note Marek's preference")
    try:
        req = _pending(ws, "people/marek-prefs.md")
        assert req["summary"].startswith("memory_write people/marek-prefs.md")
        show = CliRunner().invoke(main, ["-w", str(ws), "approvals", "show", req["id"]])
        assert "Marek prefers planting plans as PDF." in show.stdout
        _approvals(ws, "deny", req["id"], "--reason", "not now")
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, out + err
    assert out.startswith("denied: memory_write on people/marek-prefs.md") and "not now" in out
    assert len(out.strip().splitlines()) == 1
    assert memory_files(ws) == before


def test_remember_exact_then_next_run_needs_no_approval(tmp_path):
    ws = make_ws(tmp_path)
    proc = popen_cli("-w", str(ws), "run", "--model", f"script:{_write_script(tmp_path)}",
                     "--approval-timeout", "60s", "note it")
    try:
        req = _pending(ws, "people/marek-prefs.md")
        _approvals(ws, "approve", req["id"], "--remember", "exact")
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and out.strip() == "done: saved"
    assert (ws / "memory" / "people" / "marek-prefs.md").read_text() == NOTE

    # the grant now covers this exact note: a later run replaces it (read first) without asking
    from assistant.notes.frontmatter import revision
    from assistant.secrets.revision_key import load_key

    rev = revision(NOTE.encode(), load_key(ws / "state"))     # keyed (issue 10)
    second = write_script(tmp_path, [
        {"tool": "memory_read", "args": {"path": "people/marek-prefs.md"}},
        {"tool": "memory_write", "args": {"path": "people/marek-prefs.md", "content": "PDF, A3.\n", "base": rev}},
        {"reply": "updated"},
    ], "second.json")
    r = run_cli("-w", str(ws), "run", "--model", f"script:{second}", "--approval-timeout", "1s", "update")
    assert r.returncode == 0 and r.stdout.strip() == "done: updated", r.stdout + r.stderr
    assert (ws / "memory" / "people" / "marek-prefs.md").read_text() == "PDF, A3.\n"
    # ...but not a sibling note
    third = _write_script(tmp_path, "third.json", path="people/other.md")
    r = run_cli("-w", str(ws), "run", "--model", f"script:{third}", "--approval-timeout", "0.5s", "other")
    assert r.returncode == 3 and "expired" in r.stdout
    assert not (ws / "memory" / "people" / "other.md").exists()


def test_expired_request_stays_listed(tmp_path):
    ws = make_ws(tmp_path)
    r = run_cli("-w", str(ws), "run", "--model", f"script:{_write_script(tmp_path)}",
                "--approval-timeout", "0.3s", "note it")
    assert r.returncode == 3 and r.stdout.startswith("denied:") and "expired" in r.stdout
    listed = CliRunner().invoke(main, ["-w", str(ws), "approvals", "list", "--all", "--json"])
    [item] = json.loads(listed.stdout)
    assert item["state"] == "expired" and item["target"] == "people/marek-prefs.md"


def test_run_needs_no_terminal_and_logs_progress_to_stderr(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"tool": "file_list", "args": {"path": ""}}, {"reply": "two\nlines"}])
    r = run_cli("-w", str(ws), "run", "--model", f"script:{script}", "list", "my", "files")
    assert r.returncode == 0
    assert r.stdout == "done: two lines\n"                  # one line, whatever the reply
    assert "[tool] file_list" in r.stderr and "transcript: state/transcripts/" in r.stderr
    [events] = transcripts(ws)
    assert events[0]["event"] == "session_start" and events[0]["task"] == "list my files"
    assert events[0]["mode"] == "unattended"


def test_schedule_run_uses_the_configured_task(tmp_path):
    ws = make_ws(tmp_path, channel="none")
    script = write_script(tmp_path, [{"reply": "nothing needs attention"}])
    r = run_cli("-w", str(ws), "schedule", "run", "morning-review", "--model", f"script:{script}")
    assert r.returncode == 0 and r.stdout.strip() == "done: nothing needs attention"
    [events] = transcripts(ws)
    assert events[0]["task"].startswith("Look over my notes on ongoing projects")
    assert events[0]["label"] == "schedule morning-review"


def test_empty_task_is_refused(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"reply": "x"}])
    r = run_cli("-w", str(ws), "run", "--model", f"script:{script}", "   ")
    # issue 13 item 6: a usage error exits 2, and its one line is on stdout only (not twice)
    assert r.returncode == 2 and r.stdout == "error: the task is empty\n" and "task is empty" not in r.stderr


def test_every_failure_before_the_turn_still_prints_its_one_error_line_on_stdout(tmp_path):
    """docs/usage.md: the outcome is one line on stdout, whatever failed (a cron job or a
    script reading stdout must not get an empty line for a locked vault or a bad script)."""
    ws = make_ws(tmp_path)
    good = write_script(tmp_path, [{"reply": "x"}])
    bad = write_script(tmp_path, [{"bogus": 1}], name="bad.json")
    cases = [   # issue 13 item 6: usage errors exit 2, other errors 1
        (["--model", f"script:{good}", "   "], "task is empty", 2),
        (["--model", f"script:{good}", "--approval-timeout", "5x", "hi"], "--approval-timeout", 2),
        (["--model", f"script:{bad}", "hi"], "script item 1", 1),
        (["--model", "weird:thing", "hi"], "--model", 1),
    ]
    for args, needle, code in cases:
        r = CliRunner().invoke(main, ["-w", str(ws), "run", *args])
        assert r.exit_code == code, (args, r.output)
        lines = r.stdout.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], (args, r.stdout)
    (ws / "vault.enc").write_bytes(b"not a vault")
    r = CliRunner().invoke(main, ["-w", str(ws), "run", "--model", f"script:{good}", "hi"],
                           env={"ASSISTANT_VAULT_PASSPHRASE": None})
    assert r.exit_code == 1 and len(r.stdout.splitlines()) == 1 and r.stdout.startswith("error: "), r.stdout


import signal

import pytest
import os
import subprocess
from acceptance_support import ASSISTANT, SECRET, _env, _set_config, cli, pending_files, script, sub, with_vault


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_does_not_leave_its_request_pending(tmp_path, sig):
    """Ctrl-C (SIGINT) on a run waiting for an approval: the request is closed as denied, so
    nobody approves a request no run will act on, and `approvals list` stays truthful. SIGTERM
    (systemd stopping the unit, a timeout) is handled the same way."""

    ws = make_ws(tmp_path)
    script = _write_script(tmp_path)
    p = popen_cli("-w", str(ws), "run", "--model", f"script:{script}", "--approval-timeout", "2m", "note it")
    try:
        item = _pending(ws, "people/marek-prefs.md")
        p.send_signal(sig)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 1 and out.startswith("error: interrupted"), out + err
    r = CliRunner().invoke(main, ["-w", str(ws), "approvals", "list", "--all", "--json"])
    [row] = [x for x in json.loads(r.stdout) if x["id"] == item["id"]]
    assert row["state"] == "denied", row
    r = CliRunner().invoke(main, ["-w", str(ws), "approvals", "approve", item["id"]])
    assert r.exit_code == 1 and "already answered" in r.output
    assert "people/marek-prefs.md" not in memory_files(ws)
    audit = [json.loads(l) for l in (ws / "state" / "audit.jsonl").read_text().splitlines()]
    assert any(a.get("request") == item["id"] and a.get("verdict") == "denied" and "interrupted" in a.get("reason", "")
               for a in audit)


def test_model_chosen_text_in_the_progress_log_and_outcome_is_escaped(tmp_path):
    """A bidi override or escape sequence chosen by the model must not reorder or repaint what
    the person reads in the run's log (the chat already escapes these)."""
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [
        {"tool": "file_write", "args": {"path": "notes\u202etxt.md", "content": "x\u202ey"}},
        {"reply": "done \u202e reversed \x1b[2J"}])
    r = CliRunner().invoke(main, ["-w", str(ws), "run", "--model", f"script:{script}", "go"])
    for ch in ("\u202e", "\x1b"):
        assert ch not in r.stdout and ch not in r.stderr, (r.stdout, r.stderr)
    assert "\\u202e" in r.stderr


def test_a_failed_tool_call_is_flagged_even_when_the_reply_claims_success(tmp_path):
    """If a tool call failed on the way (a note that already exists), the reply's 'Saved.' is
    not taken at face value: issue 13 item 6 makes it `failed: CALL: WHY` with exit 4 (it was
    'done: Saved.' with a warning on stderr and exit 0)."""
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/lina.md", "content": "Lina.\n"}},
        {"reply": "Saved."}])
    r = CliRunner().invoke(main, ["-w", str(ws), "run", "--model", f"script:{script}", "note it"])
    assert r.exit_code == 4 and r.stdout.startswith("failed: memory_write people/lina.md: "), r.stdout
    assert len(r.stdout.splitlines()) == 1 and "already exists" in r.stdout
    assert "Saved." in r.stderr and "Saved." not in r.stdout


def _start_run(ws, tmp_path, steps, task="remember", extra_env=None):
    m = script(tmp_path, steps, f"s{time.time_ns()}.json")
    e = dict(os.environ)
    e.update(_env(ws, **(extra_env or {})))
    return subprocess.Popen([str(ASSISTANT), "run", task, "--model", m], env=e,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_request(ws, timeout=20) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = cli(ws, "approvals", "list", "--json")
        data = json.loads(r.output)
        items = data if isinstance(data, list) else (data.get("requests") or data.get("items") or [])
        for it in items:
            if it.get("state", it.get("status", "pending")) == "pending":
                return it["id"]
        time.sleep(0.2)
    raise AssertionError("no approval request appeared")


# acceptance (issue 6: the assistant), written from the words
def test_run_reply_one_line_outcome(vault_ws, tmp_path):
    m = script(tmp_path, [{"reply": "All good today."}])
    r = sub(vault_ws, "run", "check things", "--model", m)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.strip().splitlines()) == 1
    assert "All good today." in r.stdout


def test_run_script_errors_are_clear(vault_ws, tmp_path):
    exhausted = script(tmp_path, [{"tool": "memory_list", "args": {}}], "ex.json")
    r = sub(vault_ws, "run", "t", "--model", exhausted)
    assert r.returncode not in (0,)
    assert "script" in (r.stdout + r.stderr).lower()
    bad = tmp_path / "bad.json"
    bad.write_text('[{"nope": 1}]')
    r2 = sub(vault_ws, "run", "t", "--model", f"script:{bad}")
    assert r2.returncode != 0 and "Traceback" not in r2.stderr
    notjson = tmp_path / "nj.json"
    notjson.write_text("{{{")
    r3 = sub(vault_ws, "run", "t", "--model", f"script:{notjson}")
    assert r3.returncode != 0 and "Traceback" not in r3.stderr


def test_run_channel_none_denies_memory_write(vault_ws, tmp_path):
    _set_config(vault_ws, "approvals", "channel", '"none"')
    m = script(tmp_path, [{"tool": "memory_write", "args": {"path": "x/new.md", "content": "hi\n"}},
                          {"reply": "done"}])
    r = sub(vault_ws, "run", "remember hi", "--model", m)
    assert not (vault_ws / "memory/x/new.md").exists()
    # a reply run for comparison: done vs denied vs error are distinct
    ok = sub(vault_ws, "run", "t", "--model", script(tmp_path, [{"reply": "ok"}], "ok.json"))
    err = sub(vault_ws, "run", "t", "--model", script(tmp_path, [], "empty.json"))
    assert ok.returncode == 0
    assert r.returncode != 0 and err.returncode != 0
    assert len({ok.returncode, r.returncode, err.returncode}) == 3, (ok.returncode, r.returncode, err.returncode)


def test_run_asks_then_approved_writes_exact_text(vault_ws, tmp_path):
    text = "---\ndescription: Lina\n---\nLina prefers mornings.\n"
    proc = _start_run(vault_ws, tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/new-lina.md", "content": text}},
        {"reply": "noted"}])
    try:
        rid = _wait_request(vault_ws)
        assert not (vault_ws / "memory/people/new-lina.md").exists()
        cli(vault_ws, "approvals", "approve", rid)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert (vault_ws / "memory/people/new-lina.md").read_text() == text


def test_run_asks_then_denied_nothing_written(vault_ws, tmp_path):
    proc = _start_run(vault_ws, tmp_path, [
        {"tool": "memory_write", "args": {"path": "d.md", "content": "nope\n"}},
        {"reply": "ok"}])
    try:
        rid = _wait_request(vault_ws)
        cli(vault_ws, "approvals", "deny", rid)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not (vault_ws / "memory/d.md").exists()
    assert proc.returncode != 0


def test_run_approval_timeout_nothing_written(vault_ws, tmp_path):
    _set_config(vault_ws, "approvals", "timeout", '"1s"')
    r = sub(vault_ws, "run", "t", "--model", script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "t.md", "content": "late\n"}},
        {"reply": "ok"}]))
    assert r.returncode != 0
    assert not (vault_ws / "memory/t.md").exists()


def test_run_secret_blocked_before_any_request(vault_ws, tmp_path):
    with_vault(vault_ws)
    r = sub(vault_ws, "run", "t", "--model", script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "s.md", "content": f"pin {SECRET}\n"}},
        {"reply": "ok"}]), timeout=30)
    assert not (vault_ws / "memory/s.md").exists()
    assert pending_files(vault_ws) == []
    assert SECRET not in r.stdout + r.stderr
    for t in (vault_ws / "state").rglob("*"):
        if t.is_file():
            assert SECRET.encode() not in t.read_bytes(), t


def test_overwrite_without_base_refused_in_run(vault_ws, tmp_path):
    # watched chat: allowed by policy, but creating over an existing note without base is refused
    m = script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/lina.md", "content": "clobbered\n"}},
        {"reply": "ok"}])
    before = (vault_ws / "memory/people/lina.md").read_bytes()
    sub(vault_ws, "chat", "--model", m, input="overwrite lina\n/quit\n")
    assert (vault_ws / "memory/people/lina.md").read_bytes() == before


def test_runaway_model_is_stopped(vault_ws, tmp_path):
    _set_config(vault_ws, "limits", "max_steps", "3")
    steps = [{"tool": "memory_list", "args": {}}] * 10 + [{"reply": "never"}]
    r = sub(vault_ws, "run", "loop", "--model", script(tmp_path, steps))
    assert r.returncode != 0
    assert "never" not in r.stdout
    assert (r.stdout + r.stderr).strip()


def test_model_option_before_or_after_the_command(vault_ws, tmp_path):
    m = script(tmp_path, [{"reply": "from the group option"}])
    r = sub(vault_ws, "--model", m, "run", "t")
    assert r.returncode == 0 and "from the group option" in r.stdout, r.stderr
    r = sub(vault_ws, "run", "t", "--model", m)
    assert r.returncode == 0 and "from the group option" in r.stdout, r.stderr


def test_missing_or_bad_model_file_is_a_clear_error(vault_ws, tmp_path):
    r = sub(vault_ws, "run", "t", "--model", str(tmp_path / "nope.gguf"))
    assert r.returncode not in (0, 3) and "Traceback" not in r.stderr
    assert "nope.gguf" in r.stdout + r.stderr
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(os.urandom(2048))
    r = sub(vault_ws, "run", "t", "--model", str(bad))
    assert r.returncode not in (0, 3) and "Traceback" not in r.stderr
    assert "bad.gguf" in r.stdout + r.stderr


def test_invalid_script_step_is_not_executed(vault_ws, tmp_path):
    r = sub(vault_ws, "run", "t", "--model", script(tmp_path, [
        {"tool": "no_such_tool", "args": {}},
        {"tool": "memory_write", "args": {"path": "half.md"}},   # no content
        {"reply": "end"}]))
    assert "Traceback" not in r.stderr
    assert not (vault_ws / "memory/half.md").exists()
