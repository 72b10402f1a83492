"""Issue 24 item 2 after an unattended run: with `[memory] reflect = "always"`, a clean run settles
its outcome (the one line, its exit code) first, then files one approval request per proposal and
waits approvals.timeout for each; nothing is written unanswered, a grant does not allow one, and
the exit code never changes. A run that did not end clean, or reflect = "chat", reflects not."""

from __future__ import annotations

import json
import threading
import time

from policy.approvals import Inbox
from policy.grants import GrantStore

from run_support import cli, make_ws, transcript_events, write_script


def _ws(tmp_path, reflect: str):
    ws = make_ws(tmp_path)
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace("[memory]\n", f'[memory]\nreflect = "{reflect}"\n', 1))
    return ws


def _note(name: str) -> dict:
    return {"tool": "memory_write", "args": {"path": f"people/{name}.md", "content": f"{name} is a friend.\n"}}


RUN = [{"reply": "The list is tidy."}, _note("ana"), _note("ben"), {"reply": "done"}]


def _requests(ws) -> list:
    return [e.request for e in Inbox(ws / "state" / "approvals").list(all=True) if e.request is not None]


def test_after_a_clean_run_each_proposal_is_an_approval_request_and_the_exit_code_stays(tmp_path):
    ws = _ws(tmp_path, "always")
    GrantStore(ws / "grants.json").add("memory", "people/*", note="test")    # would allow a plain write
    script = write_script(tmp_path, RUN)
    r = cli("-w", str(ws), "run", "--approval-timeout", "1s", "--model", f"script:{script}", "tidy the list")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "done: The list is tidy.\n"          # the one line, settled before
    requests = _requests(ws)
    assert sorted(q.target for q in requests) == ["people/ana.md", "people/ben.md"]
    assert all(q.kind == "memory" and "proposed at the end of the run" in q.summary for q in requests)
    assert all([o["scope"] for o in q.offers] == ["once"] for q in requests)
    assert not (ws / "memory" / "people" / "ana.md").exists()     # unanswered: nothing written
    assert "[reflection] not written" in r.stderr
    events = transcript_events(ws)
    [end] = [e for e in events if e["event"] == "session_end"]
    assert end["exit_code"] == 0
    kinds = [e["event"] for e in events]
    assert kinds.index("session_end") < kinds.index("reflection_start")
    # the unanswered proposals are not the run's denials: `runs` still says done, 0 denied
    listed = cli("-w", str(ws), "runs", "--json")
    [run] = json.loads(listed.stdout)
    assert (run["outcome"], run["exit_code"], run["denials"]) == ("done", 0, 0)


def test_an_approved_proposal_is_written(tmp_path):
    ws = _ws(tmp_path, "always")
    script = write_script(tmp_path, [{"reply": "ok"}, _note("ana"), {"reply": "done"}])
    inbox = Inbox(ws / "state" / "approvals")
    stop = threading.Event()

    def approver() -> None:      # the person approving in another terminal, bounded
        end = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < end:
            for entry in inbox.list():
                if entry.request is not None and entry.state == "pending":
                    inbox.answer(entry.id, "approved", sha256=entry.request.sha256)
                    return
            time.sleep(0.05)

    helper = threading.Thread(target=approver, daemon=True)
    helper.start()
    try:
        r = cli("-w", str(ws), "run", "--approval-timeout", "30s", "--model", f"script:{script}", "anything")
    finally:
        stop.set()
        helper.join(5)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "memory" / "people" / "ana.md").read_text() == "ana is a friend.\n"
    assert "[reflection] written: created people/ana.md" in r.stderr


def test_a_run_that_did_not_end_clean_files_no_proposal(tmp_path):
    ws = _ws(tmp_path, "always")
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/lina.md", "content": "x\n", "base": "0123456789ab"}},
        {"reply": "Updated."}, _note("ana"), {"reply": "done"}])
    r = cli("-w", str(ws), "run", "--approval-timeout", "1s", "--model", f"script:{script}", "update lina")
    assert r.returncode == 4, r.stdout + r.stderr
    assert _requests(ws) == []
    assert not any(e["event"].startswith("reflection") for e in transcript_events(ws))


def test_reflect_chat_does_not_reflect_after_a_run(tmp_path):
    ws = _ws(tmp_path, "chat")
    script = write_script(tmp_path, RUN)
    r = cli("-w", str(ws), "run", "--approval-timeout", "1s", "--model", f"script:{script}", "tidy the list")
    assert r.returncode == 0 and _requests(ws) == []
    assert json.dumps(transcript_events(ws)).count("reflection") == 0
