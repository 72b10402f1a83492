"""Issue 24 item 2: the reflection turn at the end of a chat, in process on a real session.
Proposals are collected and not executed; at most 5 are kept (the rest counted as dropped); the
time bound keeps what was completed and drops the step being written; nothing that is not a valid
proposal becomes one; and a proposal is written only on a person's yes, this once, even where the
ruling table (memory_watched = "allow") or a durable grant would allow the write silently."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from policy.gate import InlineAnswer
from policy.grants import GrantStore

from assistant.agent.reflection import Proposal, reflect, write_proposal
from assistant.models.base import StepResult
from assistant.models.scripted import ScriptedModel


def _note(name: str) -> dict:
    return {"tool": "memory_write", "args": {"path": f"people/{name}.md",
                                             "content": f"---\ndescription: {name}\n---\n{name} is a friend.\n"}}


def _agent(sessions, ws: Path, tmp_path: Path, items: list, *, answers: list | None = None):
    """A watched session whose person answers each question from `answers` ("y" or "n"), and an
    agent on a scripted model playing `items`, after one exchange of conversation."""
    asked: list = []

    def person(question):
        asked.append(question)
        word = answers.pop(0) if answers else "n"
        return InlineAnswer("once" if word == "y" else None,
                            hashlib.sha256((question.content or "").encode()).hexdigest())

    session = sessions(ws, "watched", inline_ask=person)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(items))
    agent = session.new_agent(ScriptedModel(script))
    agent.conversation.add_user("my friends are Ana, Ben and Cy")
    agent.conversation.add_action(json.dumps({"reply": "Nice to hear about them."}))
    return session, agent, asked


def _memory(ws: Path) -> dict[str, bytes]:
    root = ws / "memory"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_proposals_are_collected_not_written_and_at_most_five_are_kept(sessions, ws, tmp_path):
    names = ["ana", "ben", "cy", "dee", "eli", "fay", "gus"]
    before = _memory(ws)
    _, agent, _ = _agent(sessions, ws, tmp_path, [_note(n) for n in names] + [{"reply": "done"}])
    outcome = reflect(agent)
    assert [p.path for p in outcome.proposals] == [f"people/{n}.md" for n in names[:5]]
    assert outcome.dropped == 2 and outcome.at_bound and outcome.ended == "reply"
    assert _memory(ws) == before        # collected, not executed


class _StallingModel:
    """Plays `items`, then its next step waits (bounded) for `release`: a step still being
    written when the reflection's time bound comes."""

    name = "stalling"

    def __init__(self, items: list) -> None:
        self.items = list(items)
        self.release = threading.Event()
        self.stalled = threading.Event()

    def step(self, messages, schema, *, max_tokens, on_token=None) -> StepResult:
        if self.items:
            return StepResult(json.dumps(self.items.pop(0)))
        self.stalled.set()
        self.release.wait(30)
        return StepResult(json.dumps(_note("late")))


def test_at_the_time_bound_the_completed_proposals_stay_and_the_unfinished_one_is_dropped(sessions, ws, tmp_path):
    session, _, _ = _agent(sessions, ws, tmp_path, [])
    model = _StallingModel([_note("ana"), _note("ben")])
    agent = session.new_agent(model)
    agent.conversation.add_user("Ana and Ben are my friends")
    try:
        outcome = reflect(agent, seconds=0.3)     # a tiny bound: no timing is asserted
    finally:
        model.release.set()
    assert model.stalled.is_set()
    assert [p.path for p in outcome.proposals] == ["people/ana.md", "people/ben.md"]
    assert outcome.ended == "time" and outcome.unfinished and outcome.at_bound


def test_nothing_that_is_not_a_valid_proposal_becomes_one(sessions, ws, tmp_path):
    items = [{"tool": "memory_write", "args": {"path": "people/x.md"}},          # no content
             {"tool": "file_write", "args": {"path": "x.txt", "content": "x"}},  # not offered here
             _note("ana")]
    _, agent, _ = _agent(sessions, ws, tmp_path, items)
    outcome = reflect(agent)
    assert outcome.proposals == [] and outcome.ended == "invalid" and outcome.invalid == 2


def test_a_reply_or_a_model_error_proposes_nothing(sessions, ws, tmp_path):
    _, agent, _ = _agent(sessions, ws, tmp_path, [{"reply": "nothing to keep"}])
    assert reflect(agent).proposals == []
    _, agent, _ = _agent(sessions, ws, tmp_path, [])      # the script is at its end: a ModelError
    outcome = reflect(agent)
    assert outcome.proposals == [] and outcome.ended == "error" and outcome.error


def test_a_new_note_over_an_existing_one_is_not_proposed_the_model_is_told_to_edit(sessions, ws, tmp_path):
    items = [{"tool": "memory_write", "args": {"path": "people/lina.md", "content": "Lina again.\n"}},
             {"reply": "done"}]
    _, agent, _ = _agent(sessions, ws, tmp_path, items)
    outcome = reflect(agent)
    assert outcome.proposals == []
    told = [m["content"] for m in agent.conversation.messages() if "already exists" in m["content"]]
    assert told and "memory_edit" in told[0]


def test_an_edit_proposal_after_a_read_is_asked_with_its_diff_and_written_on_yes(sessions, ws, tmp_path):
    session, _, _ = _agent(sessions, ws, tmp_path, [])
    base = session.memory.read("people/lina.md").revision
    items = [{"tool": "memory_read", "args": {"path": "people/lina.md"}},
             {"tool": "memory_edit", "args": {"path": "people/lina.md", "base": base, "op": "append",
                                              "text": "Birthday: 3 May.\n"}},
             {"reply": "done"}]
    session, agent, asked = _agent(sessions, ws, tmp_path, items, answers=["y"])
    outcome = reflect(agent)
    assert [p.tool for p in outcome.proposals] == ["memory_edit"]
    written = write_proposal(agent, outcome.proposals[0], number=1, total=1)
    assert written.written, written.message
    [question] = asked
    assert question.current is not None and "Birthday: 3 May." in question.content    # the diff's two sides
    assert [o.scope for o in question.offers] == ["once"]
    assert "proposed at the end of the chat (1 of 1)" in question.summary
    assert (ws / "memory" / "people" / "lina.md").read_text().endswith("Birthday: 3 May.\n")


def test_a_proposal_is_asked_even_where_the_table_and_a_grant_allow_and_a_no_writes_nothing(sessions, ws, tmp_path):
    GrantStore(ws / "grants.json").add("memory", "people/*", note="test")   # a durable grant for the folder
    items = [_note("ana"), _note("ben"), {"reply": "done"}]
    session, agent, asked = _agent(sessions, ws, tmp_path, items, answers=["n", "y"])
    outcome = reflect(agent)
    results = [write_proposal(agent, p, number=i, total=2) for i, p in enumerate(outcome.proposals, 1)]
    assert [r.written for r in results] == [False, True]
    assert [q.target for q in asked] == ["people/ana.md", "people/ben.md"]   # each one asked
    assert "ben is a friend." in asked[1].content                            # shown in full
    assert not (ws / "memory" / "people" / "ana.md").exists()
    assert (ws / "memory" / "people" / "ben.md").exists()
    # history and audit as for any memory write: the yes is the person's, in the chat
    audit = [json.loads(line) for line in (ws / "state" / "audit.jsonl").read_text().splitlines()]
    answered = [a for a in audit if a.get("target") == "people/ben.md" and a.get("verdict") == "allow"]
    assert answered and "approved in the chat" in answered[-1]["reason"]


def test_a_proposal_given_up_on_is_denied_without_a_question(sessions, ws, tmp_path):
    from assistant.gating.observed import ProposalCall

    session, agent, asked = _agent(sessions, ws, tmp_path, [], answers=["y"])
    call = ProposalCall("memory_write", agent.gate, "test")
    call.cancel()
    decision = call.authorize("memory", "people/zed.md", content=b"zed\n")
    assert not decision.allowed and asked == []


def test_a_proposal_whose_content_differs_from_what_was_shown_is_denied(sessions, ws, tmp_path):
    """The person's yes is bound to the sha256 of the text shown: a yes to other text is no."""
    def person(question):
        return InlineAnswer("once", hashlib.sha256(b"something else").hexdigest())

    session = sessions(ws, "watched", inline_ask=person)
    agent = session.new_agent(ScriptedModel(_script(tmp_path, [])))
    written = write_proposal(agent, Proposal("memory_write", _note("ana")["args"]), number=1, total=1)
    assert not written.written and not (ws / "memory" / "people" / "ana.md").exists()


def _script(tmp_path: Path, items: list) -> Path:
    p = tmp_path / "empty.json"
    p.write_text(json.dumps(items))
    return p


def test_a_proposal_carrying_a_vault_value_is_refused_counted_and_ends_the_reflection(sessions, ws, tmp_path):
    session = sessions(ws, "watched", vault={"wifi": "tangerine-Dream-4412-xyzzy"})
    script = _script(tmp_path, [{"tool": "memory_write", "args": {"path": "net.md",
                                                                  "content": "wifi: tangerine-Dream-4412-xyzzy\n"}},
                                _note("ana"), {"reply": "done"}])
    agent = session.new_agent(ScriptedModel(script))
    agent.conversation.add_user("remember the wifi")
    outcome = reflect(agent)
    assert outcome.proposals == [] and outcome.ended == "secret"
    assert session.refusals.count == 1
    session.transcript.close()
    text = session.transcript.path.read_text()
    assert "tangerine-Dream-4412-xyzzy" not in text and "reflection_step_refused" in text
