"""Ways the gate or its stores failed open, hung, widened a grant or leaked, each pinned by a
hostile review of policy/ (these were test_policy_review.py's gate findings): FIFOs, forged
offers, answers that predate the request, errors while waiting, secrets in every text field."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from policy.approvals import APPROVED, ApprovalSettings, Inbox, InboxError
from policy.audit import AuditLog
from policy.duration import parse_duration
from policy.gate import Gate
from policy.grants import GrantStore
from policy.kinds import KINDS
from policy.match import match

from gate_support import in_thread, join_past_fifo, run_past_fifo


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "state" / "approvals").mkdir(parents=True)
    return tmp_path


REVIEW_SECRET = "sk-live-REVIEWSECRET0123456789"


def redact(s):
    return s.replace(REVIEW_SECRET, "[REDACTED]")


def make_review_gate(ws, *, timeout="30s", audit_redact=None, **kw):
    return Gate("unattended", run_id="run-r", audit=AuditLog(ws / "state" / "audit.jsonl", redact=audit_redact),
                grants=GrantStore(ws / "grants.json"),
                approvals=ApprovalSettings(timeout=parse_duration(timeout)), inbox=Inbox(ws / "state" / "approvals"),
                **kw)


def wait_for_request(inbox, limit=15.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        ids = inbox.ids()
        if ids:
            return ids[0]
        time.sleep(0.005)
    raise TimeoutError("no request appeared")


def _file_request(inbox, target="people/lina.md"):
    from policy.kinds import offers
    req, _ = inbox.create(run_id="r", kind="memory", target=target, summary="s", reason="why",
                          sha256="0" * 64, content=None, current=None, content_exact=False,
                          offers=offers("memory", target), timeout=60)
    return req


def _rewrite(inbox, rid, edit):
    path = inbox.path / f"{rid}.json"
    body = json.loads(path.read_text())
    edit(body)
    tmp = path.with_name(".forge")
    tmp.write_text(json.dumps(body))
    os.replace(tmp, path)


# review (policy): FIFOs: a hang is not a ruling
def test_answer_fifo_is_a_deny_not_a_hang(ws):
    gate = make_review_gate(ws, timeout="60s")
    inbox = Inbox(ws / "state" / "approvals")
    t, out = in_thread(lambda: gate.authorize("memory", "people/lina.md", content=b"hello"))
    rid = wait_for_request(inbox)
    fifo = inbox.path / f"{rid}.answer.json"
    os.mkfifo(fifo)
    d = join_past_fifo(t, out, fifo, "the waiting run hung opening a FIFO answer")
    assert not d.allowed and "not a regular file" in d.reason


def test_audit_log_fifo_is_a_deny_not_a_hang(ws):
    os.mkfifo(ws / "state" / "audit.jsonl")
    gate = make_review_gate(ws)
    t, out = in_thread(lambda: gate.authorize("file", "a.txt", content=b"x"))
    t.join(15)   # a hang is forever; this bound only has to outlast a busy CI machine
    hung = t.is_alive()
    while t.is_alive():
        try:   # a reader lets a blocked O_WRONLY open return
            fd = os.open(ws / "state" / "audit.jsonl", os.O_RDONLY | os.O_NONBLOCK)
            t.join(0.2)
            os.close(fd)
        except OSError:
            t.join(0.2)
    assert not hung, "authorize() hung opening a FIFO audit log"
    assert not out["value"].allowed


def test_request_fifo_is_listed_as_corrupt_not_a_hang(ws):
    inbox = Inbox(ws / "state" / "approvals")
    fifo = inbox.path / "0123456789ab.json"
    os.mkfifo(fifo)
    [entry] = run_past_fifo(lambda: inbox.list(), fifo, "listing hung on a FIFO request file")
    assert entry.state == "corrupt" and "not a regular file" in entry.error


# review (policy): approving: offers come from the policy, not the file
@pytest.mark.parametrize("scope,forged", [("exact", "people/*"), ("dir", "*/*"), ("dir", "**")])
def test_forged_offer_pattern_never_becomes_a_grant(ws, scope, forged):
    inbox = Inbox(ws / "state" / "approvals")
    store = GrantStore(ws / "grants.json")
    req = _file_request(inbox)

    def edit(body):
        for o in body["offers"]:
            if o["scope"] == scope:
                o["pattern"] = forged
    _rewrite(inbox, req.id, edit)
    with pytest.raises(InboxError, match="offer"):
        inbox.answer(req.id, APPROVED, sha256=req.sha256, remember=scope, grants=store)
    assert store.load() == []
    assert inbox.answer_of(req.id) is None


def test_forged_dir_offer_for_a_root_note_is_refused(ws):
    inbox = Inbox(ws / "state" / "approvals")
    store = GrantStore(ws / "grants.json")
    req = _file_request(inbox, "top.md")
    assert req.offer("dir") is None
    _rewrite(inbox, req.id, lambda b: b["offers"].append({"scope": "dir", "pattern": "*", "label": "x"}))
    with pytest.raises(InboxError):
        inbox.answer(req.id, APPROVED, sha256=req.sha256, remember="dir", grants=store)
    assert store.load() == []


def test_losing_approval_never_records_a_grant(ws):
    """Two answers race: a grant must not exist, even for a moment, for an approval that lost."""
    inbox = Inbox(ws / "state" / "approvals")
    seen = []

    class Spy(GrantStore):
        def add(self, kind, target, note=""):
            seen.append(os.path.exists(inbox.path / f"{req.id}.answer.json"))
            return super().add(kind, target, note)

    store = Spy(ws / "grants.json")
    req = _file_request(inbox)
    inbox.answer(req.id, APPROVED, sha256=req.sha256, remember="exact", grants=store)
    assert seen == [True], "the grant was recorded before the answer won"
    assert [g.target for g in store.load()] == ["people/lina.md"]


# review (policy): answers that predate the request
def test_answer_already_on_file_for_a_new_id_is_refused(ws, monkeypatch):
    """A leftover (or planted) answer whose name a new request happens to get is not its answer."""
    import policy.approvals as approvals
    inbox = Inbox(ws / "state" / "approvals")
    rid = "00aa00aa00aa"
    (inbox.path / f"{rid}.answer.json").write_text(json.dumps(
        {"version": 1, "id": rid, "verdict": "approved", "sha256": approvals.sha256_hex(b"hello"),
         "remember": "exact"}))
    monkeypatch.setattr(approvals.secrets, "token_hex", lambda n: rid[: 2 * n].ljust(2 * n, "0"))
    gate = make_review_gate(ws)
    d = gate.authorize("memory", "people/lina.md", content=b"hello")
    assert not d.allowed
    assert GrantStore(ws / "grants.json").load() == []


# review (policy): errors while waiting close the request
def test_watcher_failure_denies_and_closes_the_request(ws):
    class Broken(Inbox):
        def wait(self, request_id, timeout, **kw):
            raise RuntimeError("inotify watch limit reached")

    gate = Gate("unattended", run_id="run-r", audit=AuditLog(ws / "state" / "audit.jsonl"),
                grants=GrantStore(ws / "grants.json"), approvals=ApprovalSettings(timeout=10),
                inbox=Broken(ws / "state" / "approvals"))
    d = gate.authorize("memory", "people/lina.md", content=b"hello")
    assert not d.allowed and "inotify watch limit" in d.reason
    inbox = Inbox(ws / "state" / "approvals")
    [rid] = inbox.ids()
    # The run gave up: the record says so, and a person can no longer approve it.
    assert inbox.entry(rid).state == "denied"
    with pytest.raises(InboxError, match="already answered"):
        inbox.answer(rid, APPROVED, sha256=inbox.get(rid).sha256, remember="exact",
                     grants=GrantStore(ws / "grants.json"))


def test_interrupt_while_waiting_still_propagates_if_closing_fails(ws):
    class Interrupted(Inbox):
        def wait(self, request_id, timeout, **kw):
            raise KeyboardInterrupt

        def close(self, *a, **kw):
            raise InboxError("disk full")

    gate = Gate("unattended", run_id="run-r", audit=AuditLog(ws / "state" / "audit.jsonl"),
                grants=GrantStore(ws / "grants.json"), approvals=ApprovalSettings(timeout=10),
                inbox=Interrupted(ws / "state" / "approvals"))
    with pytest.raises(KeyboardInterrupt):
        gate.authorize("memory", "people/lina.md", content=b"hello")


# review (policy): secrets: every text field is redacted
@pytest.mark.parametrize("target", [[REVIEW_SECRET], REVIEW_SECRET.encode(), {"p": REVIEW_SECRET}])
def test_non_string_target_carrying_a_secret_is_not_logged(ws, target):
    gate = make_review_gate(ws, redact=redact)    # the audit log itself has no redact: the gate must do it
    d = gate.authorize("memory", target, content=b"x")
    assert not d.allowed
    raw = (ws / "state" / "audit.jsonl").read_text()
    assert raw and REVIEW_SECRET not in raw and REVIEW_SECRET not in d.reason


def test_kind_carrying_a_secret_is_not_logged(ws):
    gate = make_review_gate(ws, redact=redact)
    d = gate.authorize(f"memory{REVIEW_SECRET}", "people/a.md", content=b"x")
    assert not d.allowed
    raw = (ws / "state" / "audit.jsonl").read_text()
    assert raw and REVIEW_SECRET not in raw and REVIEW_SECRET not in d.reason


def test_redactor_that_fails_is_a_deny_not_an_exception(ws):
    def broken(s):
        raise RuntimeError(f"scanner crashed on {s!r}")
    gate = make_review_gate(ws, redact=broken)
    d = gate.authorize("memory", "people/a.md", content=REVIEW_SECRET.encode())
    assert not d.allowed and REVIEW_SECRET not in d.reason


# review (policy): config: notify must be an argv list
def test_notify_as_a_string_is_a_config_error(ws):
    # issue 9: [approvals] is validated once, by assistant.workspace.config, before a Gate is built
    from assistant.workspace.config import ConfigError, parse
    with pytest.raises(ConfigError, match="notify"):
        parse({"approvals": {"channel": "inbox", "notify": "notify-send"}}).approvals


# review (policy): what held up (pinned so it stays)
@pytest.mark.parametrize("target", ["people/*.md", "people/[x].md", "people/a?.md", "p[/x.md", "a/b*/c.md"])
def test_exact_offer_matches_only_that_target(ws, target):
    norm = KINDS["memory"].normalise(target)
    exact = next(o for o in KINDS["memory"].offers(norm) if o.scope == "exact")
    assert match(exact.pattern, target)
    for other in ["people/x.md", "people/a1.md", "people/.md", "people/xx.md", "p[/x.md.md", "a/bz/c.md",
                  "people/lina.md"]:
        if other != target:
            assert not match(exact.pattern, other), (exact.pattern, other)


# review (policy): a way the gate failed open, hung or widened a grant
@pytest.mark.parametrize("kw", [{"content": "a str, not bytes"}, {"content": b"x", "current": "str"},
                                {"content": memoryview(b"x")}])
def test_content_of_the_wrong_type_is_an_audited_deny_not_an_exception(ws, kw):
    gate = Gate("watched", run_id="run-r", audit=AuditLog(ws / "state" / "audit.jsonl"))
    d = gate.authorize("memory", "people/a.md", **kw)     # watched memory would be allowed
    assert not d.allowed and "must be bytes" in d.reason
    assert AuditLog(ws / "state" / "audit.jsonl").read()[-1]["verdict"] == "deny"


def test_dir_offer_escapes_the_folder_name():
    offers = {o.scope: o.pattern for o in KINDS["memory"].offers("p*[x]/a.md")}
    assert offers["exact"] == "p\\*\\[x]/a.md" and offers["dir"] == "p\\*\\[x]/*"
    assert match(offers["dir"], "p*[x]/b.md")
    assert not match(offers["dir"], "pz[x]/b.md") and not match(offers["dir"], "px/b.md")
    assert not match(offers["dir"], "p*[x]/sub/b.md")


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_interrupt_while_waiting_closes_the_request_and_propagates(ws, exc):
    class Interrupted(Inbox):
        def wait(self, request_id, timeout, **kw):
            raise exc()

    gate = Gate("unattended", run_id="run-r", audit=AuditLog(ws / "state" / "audit.jsonl"),
                grants=GrantStore(ws / "grants.json"), approvals=ApprovalSettings(timeout=10),
                inbox=Interrupted(ws / "state" / "approvals"))
    with pytest.raises(exc):
        gate.authorize("memory", "people/lina.md", content=b"hello")
    inbox = Inbox(ws / "state" / "approvals")
    [rid] = inbox.ids()
    assert inbox.entry(rid).state == "denied"
    assert AuditLog(ws / "state" / "audit.jsonl").read()[-1]["verdict"] == "deny"


def test_symlinked_answer_is_a_deny(ws, tmp_path):
    """An answer file that is a symlink to a well-formed approval elsewhere is not an answer."""
    gate = make_review_gate(ws)
    inbox = Inbox(ws / "state" / "approvals")
    t, out = in_thread(lambda: gate.authorize("memory", "people/lina.md", content=b"hello"))
    rid = wait_for_request(inbox)
    real = tmp_path / "elsewhere.json"
    real.write_text(json.dumps({"version": 1, "id": rid, "verdict": "approved",
                                "sha256": inbox.get(rid).sha256, "remember": "exact"}))
    (inbox.path / f"{rid}.answer.json").symlink_to(real)
    t.join(15)
    assert not t.is_alive()
    d = out["value"]
    assert not d.allowed and "unreadable answer" in d.reason
    assert GrantStore(ws / "grants.json").load() == []


def test_racing_answers_one_wins_and_only_a_winning_approval_leaves_a_grant(ws):
    inbox = Inbox(ws / "state" / "approvals")
    for round_ in range(5):
        req = _file_request(inbox, f"people/p{round_}.md")
        barrier = threading.Barrier(6)
        results = []

        def answer(verdict):
            store = GrantStore(ws / "grants.json")
            barrier.wait()
            try:
                inbox.answer(req.id, verdict, sha256=req.sha256,
                             remember="exact" if verdict == APPROVED else "once", grants=store)
                results.append(verdict)
            except InboxError as exc:
                assert "already answered" in str(exc)

        threads = [threading.Thread(target=answer, args=(APPROVED if i % 2 else "denied",)) for i in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(30)
        assert len(results) == 1
        granted = {g.target for g in GrantStore(ws / "grants.json").load()}
        assert (f"people/p{round_}.md" in granted) == (results[0] == APPROVED)
        assert inbox.answer_of(req.id).verdict == results[0]


def test_approvals_typo_is_a_config_error_not_the_default(ws):
    # issue 9: [approvals] is validated once, by assistant.workspace.config, before a Gate is built
    from assistant.workspace.config import ConfigError, parse
    with pytest.raises(ConfigError, match="chanel"):
        parse({"approvals": {"chanel": "none"}}).approvals
