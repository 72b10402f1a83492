"""A reply that claims a save, update or deletion that no tool call made is caught by the harness
(issue 22 item 4): the person sees one line saying nothing was saved, and the transcript records
it. A reply after a real write is not flagged."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from assistant.agent.claims import FALSE_CLAIM, claims_a_change
from assistant.cli import main

from e2e_support import make_ws, memory_files, run_cli, transcripts, write_script

NOTE = "---\ndescription: Ana - Sam's sister, moved to Porto\n---\nAna is Sam's sister. She moved to Porto in November.\n"


@pytest.mark.parametrize("reply", [
    "I've updated Marek's mobile number.", "Sure, I'll save those facts.", "Noted!", "Got it, saved.",
    "I'll remember that Ana lives in Porto.", "Deleted.", "I have saved it to people/ana.md.",
    "That is now saved.", "It has been recorded.", "I\u2019ve noted that.",
])
def test_claims_of_a_change_are_recognised(reply):
    assert claims_a_change(reply)


@pytest.mark.parametrize("reply", [
    "Lina lives in Bristol.", "My notes do not say.", "I have not saved anything.", "Should I save this?",
    "Do you want me to remember that?", "Your notes say the plan was updated on Monday.",
    "I can save that if you like.",
])
def test_answers_and_questions_are_no_claim(reply):
    assert not claims_a_change(reply)


def _chat(ws, script, said):
    return CliRunner().invoke(main, ["-w", str(ws), "chat", "--model", f"script:{script}"],
                              input=said + "\n/quit\n", catch_exceptions=False)


def test_a_claimed_save_with_no_write_is_told_and_recorded(tmp_path):
    ws = make_ws(tmp_path)
    before = memory_files(ws)
    script = write_script(tmp_path, [{"reply": "I've updated Marek's mobile number."}])
    r = _chat(ws, script, "Marek's new mobile is 07700 900123.")
    assert r.exit_code == 0, r.output
    assert "assistant: I've updated Marek's mobile number." in r.stdout
    assert r.stdout.count(FALSE_CLAIM) == 1
    [line] = [ln for ln in r.stdout.splitlines() if FALSE_CLAIM in ln]
    assert line.strip() == f"! {FALSE_CLAIM}"
    assert memory_files(ws) == before
    [events] = transcripts(ws)
    [claim] = [e for e in events if e["event"] == "false_claim"]
    assert claim["message"] == FALSE_CLAIM and claim["reply"] == "I've updated Marek's mobile number."
    kinds = [e["event"] for e in events]
    assert kinds.index("reply") < kinds.index("false_claim")


def test_a_save_that_happened_is_not_flagged(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/ana.md", "content": NOTE}},
        {"reply": "I've saved that Ana moved to Porto."},
    ])
    r = _chat(ws, script, "My sister Ana moved to Porto last month.")
    assert r.exit_code == 0, r.output
    assert (ws / "memory" / "people" / "ana.md").read_text() == NOTE
    assert FALSE_CLAIM not in r.stdout
    [events] = transcripts(ws)
    assert not [e for e in events if e["event"] == "false_claim"]


def test_a_failed_write_then_a_claim_is_flagged(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "../outside.md", "content": NOTE}},
        {"reply": "Saved: Ana moved to Porto."},
    ])
    r = _chat(ws, script, "My sister Ana moved to Porto last month.")
    assert r.exit_code == 0, r.output
    assert r.stdout.count(FALSE_CLAIM) == 1


def test_an_unattended_run_says_it_on_stderr(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"reply": "Noted, I'll remember Ana's new city."}])
    r = run_cli("-w", str(ws), "run", "--model", f"script:{script}", "Ana moved to Porto.")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == "done: Noted, I'll remember Ana's new city."
    assert f"[memory] {FALSE_CLAIM}" in r.stderr
    [events] = transcripts(ws)
    assert [e["event"] for e in events].count("false_claim") == 1
