"""The gate: the one call every gated tool makes before it acts.

Guards fail-closed authorisation end to end:
    ruling (engine.decide) -> audit line -> allow | deny | ask
    ask, watched chat:     the inline_ask callback answers (no callback -> deny); it is shown
                           the full content / current text / URL, and for content its answer
                           must be an InlineAnswer carrying the sha256 of the text shown
    ask, unattended run:   file a request in the inbox -> notify (the command, then the push;
                           both get the request's signed links) -> wait (watchfiles) ->
                           check the answer (same request, same sha256, request file unchanged)
                           -> apply its remember scope -> audit line
What the session has read from untrusted places (`untrusted_reads`, the session's record of
fetched pages, files of the mount and flagged notes) goes into the ruling (engine.decide's
`untrusted`: a memory write in a watched chat is asked) and is named, redacted, in the inline
question and in the approval request (`sources`). A record that cannot be read is a deny.
Every exception, unreadable file, unreachable approver or timeout is a deny with the reason,
and nothing is allowed that was not audited first: if the audit line cannot be written, the
answer is deny.

The approval binds the sha256 of the exact (unredacted) content; the caller must write exactly
the bytes it passed in (Decision.sha256 says which). `redact` is applied to every text that
leaves this process (request file, audit line, notification); a target that would need
redacting is denied outright.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

from policy.approvals import (
    APPROVED, DENIED, EXPIRED, Answer, ApprovalSettings, Inbox, InboxError, Request, requested_by,
)
from policy.audit import AuditLog
from policy.engine import Ruling, Session, decide, person_must_answer
from policy.grants import GrantsError, GrantStore
from policy.kinds import ALLOW, DENY, DURABLE, EXACT, ONCE, RUN, Offer
from policy.notify import run_notify, summary_line


NOTIFY_SUMMARY_CHARS = 300   # the notify command gets one line; `approvals show` has the rest


@dataclass(frozen=True)
class Decision:
    allowed: bool
    verdict: str                  # "allow" | "deny"
    reason: str
    sha256: str | None            # of the content the decision binds (None if no content)
    remember: str | None = None   # once | run | exact | dir, when a person approved
    request_id: str | None = None


@dataclass(frozen=True)
class Question:
    """What an inline asker (a watched chat) is shown. The answer is an offer scope, or None;
    for a question with content, an InlineAnswer bound to the sha256 of the content shown."""

    kind: str
    target: str
    summary: str
    reason: str
    offers: tuple[Offer, ...]
    sha256: str | None
    content: str | None = None    # the proposed text (redacted), to be shown in full
    current: str | None = None    # the text it replaces (redacted), for the diff
    url: str | None = None        # what a net call would fetch (redacted), to be shown in full
    # what this session had read from untrusted places before the call (redacted): URLs,
    # files/<path>, flagged notes; the asker names them ("this chat read ... before proposing this")
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class InlineAnswer:
    """A person's inline answer to a question with content: the scope chosen and the sha256 of
    the exact text that was shown. The gate allows only if it is the sha256 of the content."""

    scope: str | None
    sha256: str | None


class GateConfig(Protocol):
    """The two config sections a Gate reads (assistant.workspace.config.Config is one)."""

    @property
    def policy(self) -> Mapping[str, object]: ...

    @property
    def approvals(self) -> ApprovalSettings: ...


class Gate:
    """Constructed once per run; `authorize()` per gated call."""

    def __init__(
        self,
        mode: str,
        *,
        run_id: str,
        audit: AuditLog,
        grants: GrantStore | None = None,
        policy: Mapping[str, object] | None = None,
        approvals: ApprovalSettings = ApprovalSettings(),
        inbox: Inbox | None = None,
        inline_ask: Callable[[Question], object] | None = None,
        redact: Callable[[str], str] | None = None,
        notify_timeout: float = 10.0,
        on_request: Callable[[Request], None] | None = None,
        links: Callable[[Request], Mapping[str, str]] | None = None,
        push: Callable[[str, Mapping[str, str]], str | None] | None = None,
        requester: str | None = None,
        untrusted_reads: Callable[[], Sequence[str]] | None = None,
    ) -> None:
        self.mode = mode
        # Who asks through this gate when it is not the workspace's own model: "mcp:<client
        # name>" for an MCP session. Named in every audit line and approval request it files.
        self.requester = requester
        self.run_id = run_id
        self.audit = audit
        self.grants = grants
        self.inbox = inbox
        self.inline_ask = inline_ask
        self.redact = redact or (lambda s: s)
        self.channel = approvals.channel
        self.timeout = approvals.timeout
        self.notify = list(approvals.notify)
        self.notify_timeout = notify_timeout
        # Told the moment a request is filed and waited on (so a run can say which id to answer).
        # Display only: whatever it does or raises cannot change the ruling.
        self.on_request = on_request
        # The request's signed web links ({show_url}, {approve_url}, {deny_url}) for the notify
        # command and the push; the push (apprise) is a second notifier: its failure, like the
        # notify command's, makes the approver unreachable (deny at once).
        self.links = links
        self.push = push
        # Requests this gate filed and has not yet seen answered or closed: close_open() denies
        # them when the run is interrupted in another thread (the gate runs in a tool thread).
        self._open: dict[str, tuple[str, str, str]] = {}   # request id -> (sha256, kind, target)
        self._open_lock = threading.Lock()
        # What the session has read from untrusted places, as display names, oldest first (the
        # session's own record; None: this gate's door is not marked, e.g. an MCP client's).
        self.untrusted_reads = untrusted_reads
        self.session = Session(run_id, grants=grants, policy=policy,
                               channel=self.channel if inbox is not None else "none",
                               inline=inline_ask is not None)

    @classmethod
    def for_workspace(cls, mode: str, *, run_id: str, config: GateConfig, grants_path: Path,
                      approvals_dir: Path, audit_path: Path,
                      redact: Callable[[str], str] | None = None, **kw: Any) -> "Gate":
        """Convenience: the workspace's paths and its validated [policy] and [approvals]."""
        return cls(mode, run_id=run_id, audit=AuditLog(audit_path, redact=redact),
                   grants=GrantStore(grants_path), policy=config.policy,
                   approvals=config.approvals, inbox=Inbox(approvals_dir), redact=redact, **kw)

    # ------------------------------------------------------------ the one call
    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None,
                  answer_required: str | None = None, device: str | None = None) -> Decision:
        """The ruling on one call. `answer_required` (a reason, e.g. "a proposal at the end of a
        chat is never allowed without a yes"): nothing but a person's answer, this once, allows
        it (engine.person_must_answer); a table cell or a grant that would allow asks instead.
        `device`: the enrolled device whose signed sync change this is (its signature checked by
        the caller, assistant/sync/): ruled by engine step 3b."""
        sha = None
        try:
            if content is not None and not isinstance(content, bytes):
                raise TypeError(f"content must be bytes, got {type(content).__name__}")
            if current is not None and not isinstance(current, bytes):
                raise TypeError(f"current must be bytes, got {type(current).__name__}")
            sha = hashlib.sha256(content).hexdigest() if content is not None else None
            return self._authorize(kind, target, content, current, summary, sha, url, answer_required, device)
        except Exception as exc:    # every error path is a deny
            reason = self._text(f"denied: the gate failed ({type(exc).__name__}: {exc})")
            try:
                self._log("error", kind, target, DENY, reason, sha)
            except Exception:
                pass
            return Decision(False, DENY, reason, sha)

    def _text(self, s: str) -> str:
        """s as it may leave this process. A redactor that fails withholds the text (never raises)."""
        try:
            out = self.redact(s)
        except Exception:
            return "[withheld: the redactor failed]"
        return out if isinstance(out, str) else "[withheld: the redactor failed]"

    def _log(self, event: str, kind: object, target: object, verdict: str, reason: str, sha: str | None,
             **extra: object) -> dict[str, object]:
        # Every text field goes through redact, whatever the audit log itself does: kind and
        # target come from the caller (a non-string target is logged as its redacted repr).
        record = {"event": event, "run": self.run_id, "mode": self.mode, "kind": str(kind),
                  "target": str(target), "verdict": verdict, "reason": reason, "sha256": sha, **extra}
        if self.requester is not None:
            record["requester"] = self.requester
        return self.audit.append({k: self._text(v) if isinstance(v, str) else v for k, v in record.items()})

    def _sources(self) -> tuple[str, ...]:
        """What the session has read from untrusted places, redacted for display. Raises (and
        the call is denied) if the record is not a sequence of strings."""
        if self.untrusted_reads is None:
            return ()
        read = self.untrusted_reads()
        if isinstance(read, str) or not all(isinstance(x, str) for x in read):
            raise TypeError("the session's record of untrusted reads is not a list of names")
        return tuple(self._text(x) for x in read)

    def _authorize(self, kind: str, target: str, content: bytes | None, current: bytes | None,
                   summary: str, sha: str | None, url: str | None = None,
                   answer_required: str | None = None, device: str | None = None) -> Decision:
        if self._text(str(target)) != str(target) or self._text(str(kind)) != str(kind):
            reason = "denied: the kind or target contains a secret value (or could not be checked)"
            self._log("ruling", kind, target, DENY, reason, sha)
            return Decision(False, DENY, reason, sha)
        sources = self._sources()
        ruling = decide(kind, target, self.mode, self.session, untrusted=bool(sources), device=device)
        if answer_required is not None:
            ruling = person_must_answer(ruling, self.mode, self.session, str(answer_required))
        shown_target = ruling.target or str(target)
        extra = {"sources": list(sources)} if sources else {}
        logged = self._log("ruling", kind, shown_target, ruling.verdict, ruling.reason, sha, **extra)
        line = logged.get("seq") if isinstance(logged, dict) else None   # its place in the chain
        if ruling.verdict == ALLOW:
            return Decision(True, ALLOW, ruling.reason, sha)
        if ruling.verdict == DENY:
            return Decision(False, DENY, ruling.reason, sha)
        if ruling.channel == "inline":
            return self._ask_inline(ruling, summary, sha, content, current, url, sources)
        return self._ask_out_of_band(ruling, summary, content, current, sha, line, sources)

    # ------------------------------------------------------------ watched chat
    def _ask_inline(self, ruling: Ruling, summary: str, sha: str | None, content: bytes | None = None,
                    current: bytes | None = None, url: str | None = None,
                    sources: tuple[str, ...] = ()) -> Decision:
        def text(b: bytes | None) -> str | None:
            return self._text(b.decode("utf-8", "replace")) if b is not None else None

        q = Question(ruling.kind, ruling.target, self._text(summary), ruling.reason, ruling.offers, sha,
                     content=text(content), current=text(current),
                     url=self._text(url) if url is not None else None, sources=sources)
        try:
            reply = self.inline_ask(q) if self.inline_ask else None
        except Exception as exc:
            reply, why = None, f"the inline approver failed ({type(exc).__name__})"
        else:
            why = "declined in the chat"
        if isinstance(reply, InlineAnswer):
            if reply.scope is not None and reply.sha256 != sha:
                return self._answered(ruling, sha, DENY, "the answer in the chat approves other content than "
                                      "would be written (sha256 mismatch, or it was shown redacted)", None,
                                      by="inline")
            reply = reply.scope
        elif content is not None and reply is not None:
            # what is written must be what was shown: a bare yes cannot stand for content
            return self._answered(ruling, sha, DENY, "the answer in the chat is not bound to the content "
                                  "shown (no sha256)", None, by="inline")
        scope = ONCE if reply is True else reply
        offer = next((o for o in ruling.offers if o.scope == scope), None)
        if offer is None:
            return self._answered(ruling, sha, DENY, why, None, by="inline")
        return self._remember(ruling, sha, offer, None, by="inline")

    # ------------------------------------------------------------ unattended run
    def _ask_out_of_band(self, ruling: Ruling, summary: str, content: bytes | None,
                         current: bytes | None, sha: str | None, line: int | None = None,
                         sources: tuple[str, ...] = ()) -> Decision:
        if self.inbox is None:   # the engine already denies this; never rely on it alone
            return self._answered(ruling, sha, DENY, "no approval inbox to ask through", None)
        bound = sha or hashlib.sha256(b"").hexdigest()
        shown = content.decode("utf-8", "replace") if content is not None else None
        shown_redacted = self._text(shown) if shown is not None else None
        exact = content is None or (shown_redacted == shown and shown.encode("utf-8") == content)
        summary = self._text(summary or f"{ruling.kind} {ruling.target}")
        try:
            req, written = self.inbox.create(
                run_id=self.run_id, kind=ruling.kind, target=ruling.target, summary=summary,
                reason=self._text(ruling.reason), sha256=bound, content=shown_redacted,
                current=self._text(current.decode("utf-8", "replace")) if current is not None else None,
                content_exact=exact, offers=ruling.offers, timeout=self.timeout,
                requester=self._text(self.requester) if self.requester is not None else None,
                sources=sources)
        except (InboxError, FileExistsError) as exc:
            return self._answered(ruling, sha, DENY, f"could not file the approval request: {exc}", None)
        with self._open_lock:
            self._open[req.id] = (req.sha256, req.kind, req.target)
        # From here on this call owns a request file: whatever happens (the notify command
        # interrupted by Ctrl-C, an exception anywhere), it is closed as denied before we leave,
        # so nobody can approve (and remember) a request no run will act on.
        try:
            return self._notify_and_wait(ruling, summary, sha, req, written, line)
        except BaseException as exc:
            with self._open_lock:
                self._open.pop(req.id, None)
            why = (f"the run that asked was interrupted ({type(exc).__name__})"
                   if not isinstance(exc, Exception) else f"the gate failed ({type(exc).__name__})")
            for record in (lambda: self.inbox.close(req.id, DENIED, why, sha256=req.sha256),
                           lambda: self._answered(ruling, sha, DENY, why, req.id)):
                try:
                    record()
                except Exception:
                    pass     # the interrupt itself must reach the caller
            if isinstance(exc, Exception):
                return Decision(False, DENY, self._text(f"denied: {why}"), sha, None, req.id)
            raise
        finally:
            with self._open_lock:
                self._open.pop(req.id, None)

    def close_open(self, reason: str) -> list[str]:
        """Close, as denied, every request this gate filed that is still open (the run was
        interrupted while a tool thread was asking). An answer a person wrote first stands.
        Also any pending request of this run on file (one filed an instant before it was
        recorded here). Returns the ids closed by this call. Never raises."""
        with self._open_lock:
            todo = dict(self._open)
            self._open.clear()
        try:
            for entry in self.inbox.list() if self.inbox is not None else []:
                if entry.request is not None and entry.request.run_id == self.run_id and entry.state == "pending":
                    r = entry.request
                    todo.setdefault(entry.id, (r.sha256, r.kind, r.target))
        except Exception:
            pass
        return [req_id for req_id, entry in todo.items() if self._close(req_id, entry, reason)]

    def close_request(self, req_id: str, reason: str) -> bool:
        """Close, as denied, one request this gate filed and is still waiting on (its caller gave
        up on that one call: an MCP client cancelled it or went away). An answer a person wrote
        first stands. True if this call closed it. Never raises."""
        with self._open_lock:
            entry = self._open.pop(req_id, None)
        return entry is not None and self._close(req_id, entry, reason)

    def _close(self, req_id: str, entry: tuple[str, str, str], reason: str) -> bool:
        bound, kind, target = entry
        try:
            ans = self.inbox.close(req_id, DENIED, self._text(reason), sha256=bound)
        except Exception:
            return False
        if not (ans.by == "run" and ans.reason == self._text(reason)):
            return False
        try:
            record = {"event": "approval", "by": "run", "request": req_id, "run": self.run_id,
                      "kind": kind, "target": self._text(target), "verdict": DENIED,
                      "reason": self._text(reason), "sha256": bound}
            if self.requester is not None:
                record["requester"] = self._text(self.requester)
            self.audit.append(record)
        except Exception:
            pass
        return True

    def _notify_and_wait(self, ruling: Ruling, summary: str, sha: str | None, req: Request,
                         written: bytes, line: int | None = None) -> Decision:
        brief = summary if len(summary) <= NOTIFY_SUMMARY_CHARS else (
            f"{summary[:NOTIFY_SUMMARY_CHARS]}… ({len(summary):,} characters in all)")
        place = f"; audit line {line}" if line else ""
        by = requested_by(req.requester)
        asker = f"{by} asks: " if by else ""
        message = f"assistant: {asker}approve {brief}? (assistant approvals show {req.id}{place})"
        links = dict(self.links(req)) if self.links is not None else {}
        unreachable = run_notify(self.notify, message, timeout=self.notify_timeout, links=links)
        if not unreachable and self.push is not None:
            unreachable = self.push(summary_line(self._text(message)), links)
        if unreachable:
            reason = f"approver unreachable: {unreachable}"
            try:
                self.inbox.close(req.id, DENIED, self._text(reason), sha256=req.sha256)
            except (InboxError, OSError) as exc:
                reason += f" (and the request could not be closed: {exc})"
            return self._answered(ruling, sha, DENY, reason, req.id)
        if self.on_request is not None:
            try:
                self.on_request(req)
            except Exception:
                pass
        try:
            answer = self.inbox.wait(req.id, self.timeout)
            if answer is None:
                answer = self.inbox.close(req.id, EXPIRED, f"no answer within {self.timeout:g}s", sha256=req.sha256)
        except InboxError as exc:
            reason = f"unreadable answer: {exc}"
            try:   # the run gives up: the record must say so, or a person could still approve it
                self.inbox.close(req.id, DENIED, self._text(reason), sha256=req.sha256)
            except Exception:
                pass
            return self._answered(ruling, sha, DENY, reason, req.id)
        except Exception as exc:
            # The watcher failed (inotify limits, the folder vanished...): the run gives up, so the
            # record must say so too, or a person could still "approve" a request nobody waits for.
            reason = f"waiting for the answer failed ({type(exc).__name__}: {exc})"
            try:
                self.inbox.close(req.id, DENIED, self._text(reason), sha256=req.sha256)
            except Exception as close_exc:
                reason += f" (and the request could not be closed: {close_exc})"
            return self._answered(ruling, sha, DENY, reason, req.id)
        return self._check_answer(ruling, sha, req.id, req.sha256, written, answer)

    def _check_answer(self, ruling: Ruling, sha: str | None, req_id: str, bound: str,
                      written: bytes, answer: Answer) -> Decision:
        if answer.id != req_id:
            return self._answered(ruling, sha, DENY, f"the answer names another request ({answer.id!r})", req_id)
        if answer.sha256 != bound:
            return self._answered(ruling, sha, DENY,
                                  "the answer approves different content (sha256 mismatch); "
                                  "what is written must be what was shown", req_id)
        try:
            on_disk = self.inbox.request_bytes(req_id)
        except InboxError:
            on_disk = None
        if on_disk != written:
            return self._answered(ruling, sha, DENY,
                                  "the request file was changed or removed after it was filed", req_id)
        if answer.verdict == EXPIRED:
            return self._answered(ruling, sha, DENY, f"expired: {answer.reason}", req_id, state=EXPIRED)
        if answer.verdict != APPROVED:
            why = "denied by the run" if answer.by == "run" else "denied when asked"
            return self._answered(ruling, sha, DENY, f"{why}: {answer.reason}" if answer.reason else why, req_id)
        offer = next((o for o in ruling.offers if o.scope == answer.remember), None)
        if offer is None:
            return self._answered(ruling, sha, DENY, f"the answer remembers {answer.remember!r}, which was not offered",
                                  req_id)
        return self._remember(ruling, sha, offer, req_id, by="approver")

    # ------------------------------------------------------------ outcome
    def _remember(self, ruling: Ruling, sha: str | None, offer: Offer, req_id: str | None, *, by: str) -> Decision:
        if offer.scope == RUN:
            self.session.grant_for_run(ruling.kind, ruling.target)
        elif offer.scope in DURABLE:
            if self.grants is None:
                return self._answered(ruling, sha, DENY, f"approved ({offer.scope}), but there is no grant store",
                                      req_id)
            try:
                self.grants.add(ruling.kind, offer.pattern,
                                note=f"approval {req_id}" if req_id else f"approved inline in run {self.run_id}")
            except GrantsError as exc:
                return self._answered(ruling, sha, DENY,
                                      f"approved ({offer.scope}), but the grant could not be recorded: {exc}", req_id)
        scope_text = {ONCE: "this call only", RUN: "for the rest of this run", EXACT: f"always {offer.pattern}"}
        reason = f"approved {'in the chat' if by == 'inline' else 'when asked'} " \
                 f"({scope_text.get(offer.scope, f'always {offer.pattern}')})"
        return self._answered(ruling, sha, ALLOW, reason, req_id, remember=offer.scope)

    def _answered(self, ruling: Ruling, sha: str | None, verdict: str, reason: str, req_id: str | None,
                  *, remember: str | None = None, by: str | None = None, state: str | None = None) -> Decision:
        extra: dict[str, object] = {"request": req_id}
        if remember:
            extra["remember"] = remember
        if state:
            extra["state"] = state
        if by:
            extra["by"] = by
        self._log("answer", ruling.kind, ruling.target, verdict, reason, sha, **extra)
        return Decision(verdict == ALLOW, verdict, self._text(reason), sha, remember, req_id)


__all__ = ["Gate", "Decision", "Question", "InlineAnswer"]
