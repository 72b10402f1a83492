"""policy: a call nothing but a person's answer may allow (a reflection's proposal, issue 24 item 2).
`Gate.authorize(..., answer_required=WHY)`: a cell or grant that would allow asks instead, offering
only this call; a deny stays a deny; nobody to ask is a deny. A request filed so offers only `once`
and can be approved only once; an edited request offering more is still refused."""

from __future__ import annotations

import hashlib
import json

import pytest

from policy.approvals import ApprovalSettings, Inbox, InboxError
from policy.audit import AuditLog
from policy.engine import Ruling, Session, decide, person_must_answer
from policy.gate import Gate, InlineAnswer
from policy.grants import GrantStore

WHY = "a reflection's proposal is written only on a yes"


def _gate(tmp_path, mode, *, ask=None, policy=None, channel="inbox", timeout=0.2):
    (tmp_path / "state" / "approvals").mkdir(parents=True, exist_ok=True)
    return Gate(mode, run_id="run-1", audit=AuditLog(tmp_path / "state" / "audit.jsonl"),
                grants=GrantStore(tmp_path / "grants.json"), policy=policy,
                approvals=ApprovalSettings(channel, timeout, ()), inbox=Inbox(tmp_path / "state" / "approvals"),
                inline_ask=ask)


def test_an_allowed_cell_asks_and_offers_only_this_call(tmp_path):
    asked = []

    def person(question):
        asked.append(question)
        return InlineAnswer("once", hashlib.sha256(question.content.encode()).hexdigest())

    gate = _gate(tmp_path, "watched", ask=person)
    assert gate.authorize("memory", "people/a.md", content=b"a\n").allowed and asked == []   # as today
    decision = gate.authorize("memory", "people/a.md", content=b"a\n", answer_required=WHY)
    assert decision.allowed and decision.remember == "once"
    [question] = asked
    assert [o.scope for o in question.offers] == ["once"] and WHY in question.reason


def test_a_grant_does_not_allow_without_an_answer_and_a_no_is_a_deny(tmp_path):
    GrantStore(tmp_path / "grants.json").add("memory", "people/*", note="test")
    gate = _gate(tmp_path, "watched", ask=lambda q: InlineAnswer(None, None))
    decision = gate.authorize("memory", "people/a.md", content=b"a\n", answer_required=WHY)
    assert not decision.allowed


def test_a_run_scope_answer_is_not_taken_when_only_once_is_offered(tmp_path):
    gate = _gate(tmp_path, "watched",
                 ask=lambda q: InlineAnswer("run", hashlib.sha256(q.content.encode()).hexdigest()))
    assert not gate.authorize("memory", "people/a.md", content=b"a\n", answer_required=WHY).allowed
    assert not gate.authorize("memory", "people/a.md", content=b"a\n", answer_required=WHY).allowed


def test_a_deny_stays_a_deny_and_nobody_to_ask_is_a_deny():
    session = Session("r", inline=True, policy={"memory_watched": "deny"})
    ruling = decide("memory", "people/a.md", "watched", session)
    assert person_must_answer(ruling, "watched", session, WHY).verdict == "deny"
    nobody = Session("r", inline=False)
    allowed = decide("memory", "people/a.md", "watched", nobody)
    assert allowed.verdict == "allow"
    assert person_must_answer(allowed, "watched", nobody, WHY).verdict == "deny"
    closed = Session("r", channel="none")
    assert person_must_answer(decide("memory", "people/a.md", "unattended", closed), "unattended",
                              closed, WHY).verdict == "deny"
    assert person_must_answer(Ruling("maybe", "?", kind="memory", target="a.md"), "watched",
                              session, WHY).verdict == "deny"


def test_an_unattended_request_offers_once_and_is_approved_only_once(tmp_path):
    gate = _gate(tmp_path, "unattended", timeout=0.3)
    decision = gate.authorize("memory", "people/a.md", content=b"a\n", answer_required=WHY)
    assert not decision.allowed             # nobody answered within the timeout
    inbox = Inbox(tmp_path / "state" / "approvals")
    [entry] = inbox.list(all=True)
    assert [o["scope"] for o in entry.request.offers] == ["once"]


def test_a_once_only_request_cannot_be_approved_for_more_and_an_added_offer_is_refused(tmp_path):
    inbox = Inbox(tmp_path / "approvals")
    (tmp_path / "approvals").mkdir()
    from policy.kinds import offers

    once = tuple(o for o in offers("memory", "people/a.md") if o.scope == "once")
    sha = hashlib.sha256(b"a\n").hexdigest()
    req, _ = inbox.create(run_id="r", kind="memory", target="people/a.md", summary="s", reason="r", sha256=sha,
                          content="a\n", current=None, content_exact=True, offers=once, timeout=60)
    with pytest.raises(InboxError, match="not offered"):
        inbox.answer(req.id, "approved", sha256=sha, remember="exact")
    assert inbox.answer(req.id, "approved", sha256=sha).remember == "once"
    # a request file whose offers were widened by hand is refused
    wide = tuple(o for o in offers("memory", "people/b.md") if o.scope in ("once", "dir"))
    req2, _ = inbox.create(run_id="r", kind="memory", target="people/b.md", summary="s", reason="r", sha256=sha,
                           content="a\n", current=None, content_exact=True, offers=wide, timeout=60)
    path = tmp_path / "approvals" / f"{req2.id}.json"
    data = json.loads(path.read_text())
    data["offers"][1]["pattern"] = "**"
    path.chmod(0o600)
    path.write_text(json.dumps(data))
    with pytest.raises(InboxError, match="offers are not the ones the policy makes"):
        inbox.answer(req2.id, "approved", sha256=sha, remember="dir")
