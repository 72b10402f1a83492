"""Issue 24 item 3 at the policy layer: what the session read tightens the ruling of a memory write.

decide(..., untrusted=True) rules a memory write in a watched chat by the stricter of its cell
and `[policy] watched_after_untrusted` ("ask" by default); it never loosens a cell, touches no
other kind or mode, and a bad value is a PolicyConfigError naming the key. The Gate reads the
session's record before every ruling: a record it cannot read is a deny.
"""

from __future__ import annotations

import pytest

from policy.approvals import Inbox
from policy.audit import AuditLog
from policy.engine import Session, decide
from policy.gate import Gate, InlineAnswer, Question
from policy.grants import GrantStore
from policy.kinds import PolicyConfigError, policy_table


def test_a_memory_write_in_a_watched_chat_is_asked_once_untrusted_content_was_read():
    assert decide("memory", "notes/a.md", "watched").verdict == "allow"
    tainted = decide("memory", "notes/a.md", "watched", untrusted=True)
    assert tainted.verdict == "ask" and tainted.channel == "inline"
    assert "untrusted" in tainted.reason and "watched_after_untrusted" in tainted.reason


@pytest.mark.parametrize("kind,target,mode,verdict", [
    ("file", "out/a.txt", "watched", "allow"),      # file writes: not what persists into prompts
    ("net", "example.com", "watched", "ask"),
    ("memory", "notes/a.md", "unattended", "ask"),  # asked anyway; the request names the sources
])
def test_other_kinds_and_modes_are_ruled_as_before(kind, target, mode, verdict):
    assert decide(kind, target, mode, untrusted=True).verdict == verdict


@pytest.mark.parametrize("policy,verdict", [
    ({"watched_after_untrusted": "allow"}, "allow"),
    ({"watched_after_untrusted": "ask"}, "ask"),
    ({"watched_after_untrusted": "allow", "memory_watched": "allow"}, "allow"),
    ({"watched_after_untrusted": "allow", "memory_watched": "ask"}, "ask"),    # the stricter wins
    ({"watched_after_untrusted": "ask", "memory_watched": "deny"}, "deny"),
    ({"watched_after_untrusted": "allow", "memory_watched": "deny"}, "deny"),
])
def test_the_stricter_of_the_key_and_memory_watched_wins(policy, verdict):
    session = Session("r1", policy=policy, inline=True)
    assert decide("memory", "notes/a.md", "watched", session, untrusted=True).verdict == verdict


def test_allow_does_not_loosen_a_session_that_read_nothing():
    session = Session("r1", policy={"watched_after_untrusted": "allow", "memory_watched": "ask"}, inline=True)
    assert decide("memory", "notes/a.md", "watched", session).verdict == "ask"


@pytest.mark.parametrize("value", ["deny", "Ask", "", 1, True, ["ask"]])
def test_a_bad_value_is_a_config_error_naming_the_key(value):
    with pytest.raises(PolicyConfigError, match=r"policy\.watched_after_untrusted must be \"ask\" or \"allow\""):
        policy_table({"watched_after_untrusted": value})


def test_the_key_is_listed_among_the_known_settings():
    with pytest.raises(PolicyConfigError, match="watched_after_untrusted"):
        policy_table({"memory_whatever": "ask"})


def test_a_durable_grant_allows_only_its_own_target(tmp_path):
    grants = GrantStore(tmp_path / "grants.json")
    grants.add("memory", "notes/kept.md", note="test")
    session = Session("r1", grants=grants, inline=True)
    assert decide("memory", "notes/kept.md", "watched", session, untrusted=True).verdict == "allow"
    assert decide("memory", "notes/other.md", "watched", session, untrusted=True).verdict == "ask"
    assert decide("memory", "people/kept.md", "watched", session, untrusted=True).verdict == "ask"


def _gate(tmp_path, reads, asked: list, policy=None) -> Gate:
    def ask(q: Question):
        asked.append(q)
        return InlineAnswer("once", q.sha256)
    (tmp_path / "state" / "approvals").mkdir(parents=True, exist_ok=True)
    return Gate("watched", run_id="chat-1", audit=AuditLog(tmp_path / "audit.jsonl"), policy=policy,
                inbox=Inbox(tmp_path / "state" / "approvals"), inline_ask=ask,
                redact=lambda s: s.replace("hunter2", "[REDACTED]"), untrusted_reads=reads)


def test_the_gate_asks_naming_what_was_read_redacted(tmp_path):
    asked: list[Question] = []
    read = ["https://example.com/?k=hunter2", "files/report.md"]
    gate = _gate(tmp_path, lambda: tuple(read), asked)
    d = gate.authorize("memory", "notes/a.md", content=b"rule\n", summary="write notes/a.md")
    assert d.allowed and d.remember == "once"
    [q] = asked
    assert q.sources == ("https://example.com/?k=[REDACTED]", "files/report.md")
    audit = (tmp_path / "audit.jsonl").read_text()
    assert "files/report.md" in audit and "hunter2" not in audit


def test_the_gate_allows_silently_when_nothing_was_read(tmp_path):
    asked: list[Question] = []
    gate = _gate(tmp_path, lambda: (), asked)
    assert gate.authorize("memory", "notes/a.md", content=b"fact\n").allowed
    assert asked == []


@pytest.mark.parametrize("reads", [lambda: 1 / 0, lambda: "files/x", lambda: [None]])
def test_a_record_the_gate_cannot_read_is_a_deny(tmp_path, reads):
    asked: list[Question] = []
    gate = _gate(tmp_path, reads, asked)
    d = gate.authorize("memory", "notes/a.md", content=b"fact\n")
    assert not d.allowed and "the gate failed" in d.reason and asked == []
