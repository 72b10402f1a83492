"""Never a dead chat (issue 13 item 5): when the conversation outgrows the model's context the
oldest exchanges are dropped (the stable prefix stays) and the person is told in one line; a
message too large for any context is refused with its size, and the next message works."""

from __future__ import annotations

import pytest

from assistant.models.base import ContextOverflow, StepResult
from assistant.session import open_session
from assistant.workspace.layout import init_workspace
from assistant.agent.events import Notice


class SmallContextModel:
    """A backend with a context of `limit` bytes of conversation (system prompt included), which
    answers every step with a fixed reply: what llama.cpp does with n_ctx, in bytes."""

    name = "small-context"

    def __init__(self, limit: int):
        self.limit = limit
        self.seen: list[list[dict]] = []

    def step(self, messages, schema, *, max_tokens, on_token=None):
        size = sum(len(m["content"].encode()) for m in messages)
        if size > self.limit:
            raise ContextOverflow(f"the conversation no longer fits the model's context (limit {self.limit})")
        self.seen.append([dict(m) for m in messages])
        return StepResult(text='{"reply": "noted"}', prompt_tokens=size, evaluated_tokens=size)


@pytest.fixture
def session(tmp_path):
    init_workspace(tmp_path / "ws", example=True)
    with open_session(tmp_path / "ws", "watched", kind="chat") as s:
        yield s


def test_oldest_exchanges_are_dropped_and_the_person_is_told(session):
    system = len(session.new_agent(SmallContextModel(1)).conversation.system_prompt().encode())
    model = SmallContextModel(system + 3000)
    events = []
    agent = session.new_agent(model, on_event=events.append)
    for i in range(8):
        result = agent.turn(f"message {i}: " + "words " * 100)
        assert result.outcome == "reply", result.message
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices and all("oldest exchange" in m and "persona, tools and catalog stay" in m for m in notices)
    last = model.seen[-1]
    assert last[0]["role"] == "system" and last[0]["content"] == agent.conversation.system_prompt()
    assert "message 7:" in last[1]["content"] or any("message 7:" in m["content"] for m in last)
    assert not any("message 0:" in m["content"] for m in last)


def test_a_message_too_large_for_any_context_is_refused_with_its_size_and_the_chat_goes_on(session):
    system = len(session.new_agent(SmallContextModel(1)).conversation.system_prompt().encode())
    model = SmallContextModel(system + 2000)
    agent = session.new_agent(model)
    assert agent.turn("hello").outcome == "reply"
    huge = agent.turn("x" * 10_000)
    assert huge.outcome == "error"
    assert "too large for the model's context" in huge.message and "bytes" in huge.message
    again = agent.turn("still there?")
    assert again.outcome == "reply", again.message
    assert not any("x" * 100 in m["content"] for m in model.seen[-1])


@pytest.mark.llama
def test_the_embedded_model_keeps_chatting_past_its_context(tmp_path):
    """The same with llama.cpp itself: n_ctx 3072, messages that overflow it after a few turns.
    (n_ctx was 2048 until the prompt stopped showing a placeholder (issue 22): the model now
    reads a note before answering, and one such exchange alone no longer fit beside the prompt.)"""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'assistant[llama]')")
    from assistant.models.loader import load_model
    from assistant.workspace.layout import open_workspace

    root = tmp_path / "ws"
    init_workspace(root, example=True)
    cfg = (root / "config.toml").read_text()
    for old, new in (("n_ctx = 8192", "n_ctx = 3072"), ("max_tokens = 512", "max_tokens = 32"),
                     ("max_steps = 8", "max_steps = 1"),
                     # the JSON-action conversation (the embedded model's default page keeps 3 exchanges)
                     ('protocol = "auto"', 'protocol = "actions"')):
        assert old in cfg
        cfg = cfg.replace(old, new)
    (root / "config.toml").write_text(cfg)
    ws = open_workspace(root)
    model = load_model(None, ws, progress=None)
    events = []
    with open_session(ws, "watched", kind="chat") as s:
        agent = s.new_agent(model, on_event=events.append)
        for i in range(5):
            result = agent.turn(f"Note {i}: " + "the garden needs watering on tuesdays. " * 40)
            assert result.outcome != "error", result.message
    assert any(isinstance(e, Notice) and "oldest exchange" in e.message for e in events)


def test_the_first_overflow_drops_the_older_half_so_the_next_turns_fit_without_another_drop(session):
    """Each drop changes the prompt right after the stable prefix, so llama.cpp evaluates all of
    the rest again: dropping only enough to fit paid that on every step after the first
    overflow. The first overflow frees half of the earlier exchanges instead."""
    system = len(session.new_agent(SmallContextModel(1)).conversation.system_prompt().encode())
    model = SmallContextModel(system + 6000)
    events = []
    agent = session.new_agent(model, on_event=events.append)
    notices_at: list[int] = []
    earlier_before: list[int] = []
    for i in range(12):
        earlier_before.append(agent.conversation.earlier_exchanges() + 1)   # with this message's own
        seen = len(events)
        assert agent.turn(f"message {i}: " + "words " * 100).outcome == "reply"
        if any(isinstance(e, Notice) for e in events[seen:]):
            notices_at.append(i)
    assert notices_at, "the conversation never outgrew the context"
    first = notices_at[0]
    notice = next(e.message for e in events if isinstance(e, Notice))
    half = earlier_before[first] // 2
    assert half >= 2 and f"the {half} oldest exchanges were dropped" in notice
    # the turns right after the first overflow fit without dropping anything more
    assert first + 1 not in notices_at
    assert "message 11:" in model.seen[-1][-2]["content"] or any("message 11:" in m["content"] for m in model.seen[-1])
