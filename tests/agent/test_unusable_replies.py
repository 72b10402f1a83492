"""A reply that is no answer (a placeholder, an echo of the format or the persona, nothing) is an
invalid step: retried with a corrective message, then a clear failure. The person never sees it
as the answer (issue 22 item 2)."""

from __future__ import annotations

import json

import pytest
from e2e_support import make_ws, run_cli, transcripts, write_script

from assistant.agent.prompt import Conversation
from assistant.agent.usable import MAX_REPLY_TRIES, unusable_reply

PERSONA = ("You are Robin, Sam's personal assistant. You are concise and warm, and you answer from "
           "your notes.\n")


@pytest.mark.parametrize("text", [
    "", "   \n", "<text>", " <answer to the person> ", "{{answer}}", "${reply}", "text", "Reply.",
    "your answer", "...", '{"reply": "<text>"}', 'Sure: {"tool": "memory_read", "args": {}}',
])
def test_placeholders_and_echoes_are_no_answer(text):
    assert unusable_reply(text, PERSONA) is not None


def test_a_repeat_of_the_persona_or_the_rules_is_no_answer():
    conv = Conversation(PERSONA, [], "- people/lina.md: Lina Okafor - Sam's sister, lives in Bristol")
    said = conv.instructions()
    assert unusable_reply("You are Robin, Sam's personal assistant. You are concise and warm.", said)
    assert unusable_reply("Every message you send is exactly one JSON object, nothing else.", said)


@pytest.mark.parametrize("text", [
    "Lina teaches chemistry in Bristol.",
    "My notes don't say when your dentist appointment is.",
    "Lina Okafor - Sam's sister, lives in Bristol",          # quoting a note (the catalog) is an answer
    "Yes.", "14 March", "<3 happy birthday to Lina!",
])
def test_real_answers_pass(text):
    conv = Conversation(PERSONA, [], "- people/lina.md: Lina Okafor - Sam's sister, lives in Bristol")
    assert unusable_reply(text, conv.instructions()) is None


def test_the_instructions_hold_no_literal_placeholder():
    conv = Conversation(PERSONA, [], "")
    for shape in ("<text>", "<name>", "{...}", '"<'):
        assert shape not in conv.system_prompt()


def test_a_run_retries_an_unusable_reply_then_answers(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"reply": "<text>"}, {"reply": ""},
                                     {"reply": "Lina teaches chemistry in Bristol."}])
    r = run_cli("-w", str(ws), "run", "--model", f"script:{script}", "What does Lina teach?")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == "done: Lina teaches chemistry in Bristol."
    assert "<text>" not in r.stdout
    [events] = transcripts(ws)
    refused = [e for e in events if e.get("event") == "invalid"]
    assert len(refused) == 2 and "placeholder" in refused[0]["error"] and "empty" in refused[1]["error"]


def test_a_run_that_never_gets_an_answer_fails_clearly(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"reply": "<text>"}] * MAX_REPLY_TRIES)
    r = run_cli("-w", str(ws), "run", "--model", f"script:{script}", "What does Lina teach?")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == f"error: the model gave no usable reply after {MAX_REPLY_TRIES} tries"
    assert "<text>" not in r.stdout + r.stderr


def test_the_retry_tells_the_model_why(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"reply": "<text>"}, {"reply": "She teaches chemistry."}])
    r = run_cli("-w", str(ws), "run", "--model", f"script:{script}", "What does Lina teach?")
    assert r.returncode == 0, r.stdout + r.stderr
    [events] = transcripts(ws)
    steps = [e for e in events if e.get("event") == "step"]
    assert [json.loads(s["action"])["reply"] for s in steps] == ["<text>", "She teaches chemistry."]


def test_a_chat_prints_the_one_line_and_goes_on(tmp_path):
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"reply": "<text>"}] * MAX_REPLY_TRIES + [{"reply": "Hello, Sam."}])
    r = run_cli("-w", str(ws), "chat", "--model", f"script:{script}", input="What does Lina teach?\nhi\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"error: the model gave no usable reply after {MAX_REPLY_TRIES} tries" in r.stdout
    assert "Hello, Sam." in r.stdout
    assert "<text>" not in r.stdout
