"""The completion protocol (issue 22 item 2): a base model continues a page holding the recalled
notes and the question; it is offered no tools, its reply is checked like any other (a loop, a
placeholder or a copied worked example is refused and asked again with another seed, then a
clear failure), and the page holds no placeholder to copy."""

from __future__ import annotations

import pytest
from e2e_support import make_ws

from assistant.agent.completion import (
    ABSTENTION, WORKED, copies_an_example, instructions, render_page, reply_from,
)
from assistant.agent.usable import MAX_REPLY_TRIES, unusable_reply
from assistant.models.base import ModelError, StepResult
from assistant.models.llama_cpp import llama_protocol
from assistant.workspace.config import ConfigError, parse

LINA = "---\ndescription: Lina Okafor - Sam's sister, lives in Bristol\n---\nLina is Sam's younger sister. She teaches chemistry."


class PageModel:
    """A scripted base model: each complete() returns the next continuation and keeps the page."""

    protocol = "completion"
    name = "script:pages"

    def __init__(self, continuations: list[str]):
        self.continuations = list(continuations)
        self.pages: list[str] = []
        self.attempts: list[int] = []

    def complete(self, page, *, max_tokens, stop, attempt=0):
        self.pages.append(page)
        self.attempts.append(attempt)
        return StepResult(text=self.continuations.pop(0), prompt_tokens=len(page) // 4, evaluated_tokens=1,
                          completion_tokens=5)

    def step(self, *args, **kwargs):   # pragma: no cover - the completion protocol never calls it
        raise AssertionError("step() called on a completion-protocol model")


def test_the_page_holds_the_note_text_and_the_question_and_no_placeholder():
    page = render_page("What does Lina teach?", [("people/lina.md", LINA)])
    assert "Note people/lina.md: Lina Okafor - Sam's sister, lives in Bristol. Lina is Sam's younger sister." in page
    assert "She teaches chemistry." in page
    assert page.endswith("Question: What does Lina teach?\nAnswer:")
    assert "description:" not in page and "---" not in page
    for shape in ("<text>", "<", "{{", '"reply"', "{"):
        assert shape not in page
    # every worked answer is a usable answer itself: nothing on the page is a placeholder
    for _, answer in WORKED:
        assert unusable_reply(answer, "") is None


def test_a_chat_page_keeps_its_earlier_exchanges_and_the_new_message():
    page = render_page("And her birthday?", [("people/lina.md", LINA)],
                       [("What does Lina teach?", "Chemistry.")])
    assert "Question: What does Lina teach?\nAnswer: Chemistry.\n\nQuestion: And her birthday?\nAnswer:" in page


def test_no_recalled_note_says_so_on_the_page():
    page = render_page("When is my dentist appointment?", [])
    assert "(no note matches this question)" in page


def test_the_reply_ends_at_the_end_of_its_line_or_the_next_question():
    assert reply_from(" She teaches chemistry.\n\nQuestion: Where?\nAnswer: x") == "She teaches chemistry."
    assert reply_from(" 2026-11-30.\nNote: Sam is a member of the team") == "2026-11-30."
    assert reply_from(" In Bristol. Question: Who?") == "In Bristol."
    assert reply_from(" " + ABSTENTION) == ABSTENTION


def test_a_copied_worked_example_is_caught_but_the_abstention_is_an_answer():
    assert copies_an_example("Tom keeps bees.")
    assert copies_an_example("tom keeps bees")
    assert not copies_an_example(ABSTENTION)
    assert not copies_an_example("Lina keeps bees.")


@pytest.fixture
def agent_for(tmp_path, sessions):
    def make(model):
        ws = make_ws(tmp_path)
        session = sessions(ws, "watched")
        return session.new_agent(model), ws
    return make


def test_a_turn_answers_from_the_recalled_note_with_no_tool(agent_for):
    model = PageModel([" Lina teaches chemistry in Bristol.\n"])
    agent, ws = agent_for(model)
    before = {p: p.read_bytes() for p in (ws / "memory").rglob("*.md")}
    result = agent.turn("What does Lina teach?")
    assert (result.outcome, result.reply, result.tool_calls) == ("reply", "Lina teaches chemistry in Bristol.", 0)
    [page] = model.pages
    assert "She teaches chemistry in Bristol." in page          # the note's text, from recall
    assert page.endswith("Question: What does Lina teach?\nAnswer:")
    assert {p: p.read_bytes() for p in (ws / "memory").rglob("*.md")} == before


def test_the_second_turn_of_a_chat_holds_the_second_message(agent_for):
    model = PageModel([" Chemistry.", " 14 March."])
    agent, _ = agent_for(model)
    agent.turn("What does Lina teach?")
    agent.turn("When is Lina's birthday?")
    assert model.pages[1].endswith("Question: When is Lina's birthday?\nAnswer:")
    assert "Question: What does Lina teach?\nAnswer: Chemistry." in model.pages[1]


@pytest.mark.parametrize("bad", [
    " 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18",
    " ab ab ab ab ab ab ab ab",
    " Tom keeps bees.",
    " ",
])
def test_an_unusable_continuation_is_asked_again_with_another_seed(agent_for, bad):
    model = PageModel([bad, " Lina teaches chemistry."])
    agent, _ = agent_for(model)
    events = []
    agent.on_event = events.append
    result = agent.turn("What does Lina teach?")
    assert (result.outcome, result.reply) == ("reply", "Lina teaches chemistry.")
    assert model.attempts == [0, 1]
    assert [type(e).__name__ for e in events].count("StepRefused") == 1


def test_no_usable_continuation_fails_with_the_one_line(agent_for):
    model = PageModel([" 7,7,7,7,7,7,7,7,7,7,7,7,7,7"] * MAX_REPLY_TRIES)
    agent, _ = agent_for(model)
    result = agent.turn("What does Lina teach?")
    assert result.outcome == "error" and result.reply is None
    assert result.message == f"the model gave no usable reply after {MAX_REPLY_TRIES} tries"


@pytest.mark.parametrize("text", [
    "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25",
    "10.25.36:48,79,10.25.36:48,79,10.25.36:48,79,10.25.36:48,79,10.25.36:48,79",
    "She teaches chemistry. She teaches chemistry. She teaches chemistry. She teaches chemistry.",
    "1074968235, 1074968247, 1074968253, 1074968263, 1074968271, 1074968280, 1074968291, 1074968301, "
    "1074968311, 1074968321, 1074968331, 1074968341",
])
def test_degenerate_repetition_is_no_answer(text):
    assert unusable_reply(text, instructions()) == "the reply repeated itself (a loop, not an answer)"


@pytest.mark.parametrize("text", [
    "Call Marek on 0117 496 0321 after 14:00 on 2026-12-12.",
    "The boardwalk, the boardwalk and the drainage survey.",
    "- drainage\n- boardwalk\n- budget",
    "hahaha, that is funny",
    "A" * 49 + " and then some",                       # padding of one character is no loop
    "lv-" + "".join(f"{i:03d}Qx" for i in range(40)),  # digits inside one word are no number list
])
def test_repetition_in_a_real_answer_is_still_an_answer(text):
    assert unusable_reply(text, instructions()) is None


def test_the_protocol_setting():
    assert llama_protocol("auto", embedded=True) == "completion"
    assert llama_protocol("auto", embedded=False) == "actions"                         # gemma, llama-3, ...
    assert llama_protocol("auto", embedded=False, chat_format="chatml") == "tools"     # the template we render
    assert llama_protocol("actions", embedded=True) == "actions"
    assert llama_protocol("completion", embedded=False) == "completion"
    with pytest.raises(ModelError, match="model.protocol 'json' is unknown"):
        llama_protocol("json", embedded=True)


def test_a_bad_protocol_in_config_is_a_clear_error():
    with pytest.raises(ConfigError, match=r"model.protocol = 'tools-please'.*e.g. protocol = \"auto\""):
        parse({"model": {"protocol": "tools-please"}}).require("model")
    assert parse({}).model.protocol == "auto"
