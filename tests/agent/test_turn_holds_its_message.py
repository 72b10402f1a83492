"""The rendered prompt of turn N holds message N as its newest user turn (issue 22's chat that
gave the first reply three times): each turn's prompt ends with that turn's message, right
before the generation prompt, and earlier messages only in the history before it."""

from __future__ import annotations

from recall_support import make_ws, scripted, session

from assistant.models.chat_format import render

SAID = ["Ana lives in Porto now.", "My dentist is Dr Lee.", "I prefer tea to coffee."]


def test_the_rendered_prompt_of_turn_n_holds_message_n(tmp_path):
    ws = make_ws(tmp_path)
    model = scripted(tmp_path, [{"reply": f"Reply {i}."} for i in range(len(SAID))])
    with session(ws, kind="chat") as s:
        agent = s.new_agent(model)
        for text in SAID:
            agent.turn(text)
    assert len(model.calls) == len(SAID)
    for n, messages in enumerate(model.calls):
        prompt = render("chatml", messages)
        newest = prompt.rsplit("<|im_start|>user\n", 1)[1]
        assert newest.endswith(f"[the person's message]\n{SAID[n]}<|im_end|>\n<|im_start|>assistant\n")
        for later in SAID[n + 1:]:
            assert later not in prompt
        for earlier in SAID[:n]:
            assert earlier in prompt.rsplit("<|im_start|>user\n", 1)[0]   # in the history, not the newest turn
            assert earlier not in newest
