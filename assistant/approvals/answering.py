"""Answering an approval request: the one code path behind `assistant approvals approve/deny`
and the approval page's POST (`assistant approvals serve`).

Guards that every door answers the same way: the answer file is written by
policy.approvals.Inbox.answer (bound to the request's sha256, first answer wins, a durable scope
recorded in grants.json only by the winner), then one audit line names who answered ("cli" or
"web"), the scope and the sha256, never the content. The inbox, grants and audit log come from
the composition root (assistant.session.policy_files), never built here. What the person is shown of a request (the
full escaped diff, every line that holds a redaction marker marked as such, the warning above a
proposed text that reads like instructions to the assistant) is made here too, so the chat, the
terminal and the page show the same text.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Iterable, Iterator

from policy.approvals import APPROVED, DENIED, Answer, Inbox, InboxError, Request, waiter_alive
from policy.audit import AuditError, AuditLog
from policy.fileio import open_regular, read_upto
from policy.grants import GrantStore

from assistant.display.terminal import unified_diff
from assistant.notes.flagging import flag_reason, warning_line
from assistant.secrets.scanner import MARKER_RE
from assistant.secrets.budget import RefusalBudget
from assistant.workspace.layout import Workspace

REDACTED_MARK = "   <<< redacted: this line's real text is not shown and may differ"
_RUN_ID = re.compile(r"^[0-9]{8}T[0-9]{6}Z-[a-z]{1,16}-[0-9a-f]{6}$")


class AnswerError(Exception):
    """The answer was not written: unknown, corrupt, expired, already answered, other content,
    a scope not offered. The message says which."""


@dataclass(frozen=True)
class PolicyFiles:
    """A workspace's approvals inbox, grants.json and audit log, for a door that lists or answers
    requests without a session (`assistant approvals`, `grants`, the approval page). Built only
    by assistant.session.policy_files: no config section read, no vault unlocked; the audit log
    scans every line for credential shapes."""

    inbox: Inbox
    grants: GrantStore
    audit: AuditLog
    # the workspace's secret-refusal budget (state/secret_refusals.json): its block is shown and
    # lifted without a session (`approvals list`, `approvals ack`, `doctor`); counting is a session's
    refusals: RefusalBudget


@dataclass(frozen=True)
class Answered:
    """An answer as written: the request, the answer file, the grant pattern recorded (an
    `exact` or `dir` approval) and a warning if the audit line could not be written."""

    request: Request
    answer: Answer
    grant: str | None
    warning: str | None

    @property
    def run_gone(self) -> bool:
        return waiter_alive(self.request) is False


def audit_answer(files: PolicyFiles, req: Request, verdict: str, *, remember: str | None, reason: str,
                 by: str = "cli", via: str | None = None) -> str | None:
    """One audit line per answer given by a person, even if the run that asked has died
    meanwhile (the run writes its own line when it acts on the answer). Never the content: its
    sha256. The line goes to `files.audit` (keyed when the door unlocked the vault without asking:
    session.policy_files). Returns a warning if the line could not be written (the answer stands)."""
    record = {"event": "approval", "by": by, "request": req.id, "run": req.run_id, "kind": req.kind,
              "target": req.target, "verdict": verdict, "remember": remember, "reason": reason,
              "sha256": req.sha256}
    if via is not None:
        record["via"] = via
    try:
        files.audit.append(record)
    except AuditError as exc:
        return f"answer recorded, but the audit log could not be written: {exc}"
    return None


def approve(files: PolicyFiles, request_id: str, *, remember: str = "once", sha256: str | None = None,
            by: str = "cli", via: str | None = None) -> Answered:
    """Approve request_id for exactly the content whose sha256 is given (None: the request's
    own, as `approvals approve` without --sha256 does). AnswerError says why not."""
    inbox = files.inbox
    try:
        req = inbox.get(request_id)
        ans = inbox.answer(request_id, APPROVED, sha256=req.sha256 if sha256 is None else sha256,
                           remember=remember, grants=files.grants, by=by)
    except InboxError as exc:
        raise AnswerError(str(exc)) from None
    warning = audit_answer(files, req, APPROVED, remember=ans.remember, reason="", by=by, via=via)
    offer = req.offer(ans.remember) or {}
    grant = offer.get("pattern") if ans.remember in ("exact", "dir") else None
    return Answered(req, ans, grant, warning)


def deny(files: PolicyFiles, request_id: str, *, reason: str = "", sha256: str | None = None,
         by: str = "cli", via: str | None = None) -> Answered:
    """Deny request_id (bound to its sha256, or the one given). AnswerError says why not."""
    inbox = files.inbox
    try:
        req = inbox.get(request_id)
        ans = inbox.answer(request_id, DENIED, sha256=req.sha256 if sha256 is None else sha256,
                           reason=reason, by=by)
    except InboxError as exc:
        raise AnswerError(str(exc)) from None
    warning = audit_answer(files, req, DENIED, remember=None, reason=reason, by=by, via=via)
    return Answered(req, ans, None, warning)


# ------------------------------------------------------------------ what the person is shown

def diff_text(req: Request) -> str:
    """The full escaped diff of a request (or the note that it has no content); every line
    holding a [redacted:NAME] marker is marked (issue 10 item 8)."""
    if req.content is None:
        return "(no content: this request is about reaching the target, not writing to it)\n"
    lines = unified_diff(req.current, req.content, req.target).splitlines(keepends=True)
    return "".join(line if kind in ("header", "hunk") else mark_redacted(line)
                   for kind, line in diff_line_kinds(lines))


def diff_line_kinds(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """Each line of a unified diff with what it is: "header" (only the `---`/`+++` file lines
    before the first `@@`), "hunk" (`@@`), "add", "del", "note" (`\\ No newline...`) or
    "context". Decided by position, not by prefix alone: a deleted line `----` or an added line
    `++ b/x.md` inside a hunk is a deletion / addition, never a file header."""
    in_header = True
    for line in lines:
        if line.startswith("@@"):
            in_header = False
            yield "hunk", line
        elif in_header and line.startswith(("---", "+++")):
            yield "header", line
        elif line.startswith("\\"):
            yield "note", line
        elif in_header:
            yield "context", line          # text before any hunk (e.g. "(no change: ...)")
        elif line.startswith("+"):
            yield "add", line
        elif line.startswith("-"):
            yield "del", line
        else:
            yield "context", line


def mark_redacted(line: str) -> str:
    """A diff line holding a [redacted:...] marker is marked as such: two real lines that differ
    only in a secret would otherwise show as one unchanged line (issue 10). The caller passes
    content lines only (diff_line_kinds tells them from the header)."""
    if not MARKER_RE.search(line):
        return line
    body, nl = (line[:-1], "\n") if line.endswith("\n") else (line, "")
    return f"{body}{REDACTED_MARK}{nl}"


def added_text(current: str | None, content: str) -> str:
    """The lines of `content` that `current` does not hold (all of it for a new note): what a
    write adds, so a note that was already flagged does not flag every later edit of it."""
    if current is None:
        return content
    kept = set(current.splitlines())
    return "\n".join(line for line in content.splitlines() if line not in kept)


def flag_of(current: str | None, content: str | None) -> str | None:
    """Why the text a write adds reads like instructions to the assistant (notes.flagging), or None."""
    return None if content is None else flag_reason(added_text(current, content))


def flag_warning(current: str | None, content: str | None) -> str:
    """The warning line shown above the approval question when the text a write adds reads like
    instructions to the assistant, or "". A flag is advice: the question is asked as ever."""
    return "" if content is None else warning_line(added_text(current, content))


@dataclass(frozen=True)
class Requester:
    """Who asked: the door (run, schedule, MCP client, ...), its label and task as the run's
    transcript recorded them (redacted there), or only the door when there is no transcript."""

    door: str
    label: str = ""
    task: str = ""

    def describe(self) -> str:
        words = {"run": "an unattended run", "schedule": "a scheduled run", "mcp": "an MCP client",
                 "chat": "a chat", "api": "a program using the Python API", "cli": "an assistant command"}
        text = words.get(self.door, f"a {self.door} session")
        if self.label and self.label not in ("run", self.door):
            text += f" ({self.label})"
        return text


_TRANSCRIPT_HEAD = 64 * 1024


def requester(ws: Workspace, req: Request) -> Requester:
    """Who filed req, from its run id and the first line of that run's transcript (bounded read,
    no link followed). Display only."""
    if not _RUN_ID.match(req.run_id):
        return Requester("unknown")
    door = req.run_id.split("-")[1]
    try:
        fd, _st = open_regular(os.path.join(ws.transcripts_dir, f"{req.run_id}.jsonl"), max_bytes=None)
    except (OSError, ValueError):
        return Requester(door)
    try:
        head = read_upto(fd, _TRANSCRIPT_HEAD)
    except OSError:
        return Requester(door)
    finally:
        os.close(fd)
    first = head.split(b"\n", 1)[0]
    try:
        event = json.loads(first.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return Requester(door)
    if not isinstance(event, dict) or event.get("event") != "session_start":
        return Requester(door)
    label = event.get("label") if isinstance(event.get("label"), str) else ""
    task = event.get("task") if isinstance(event.get("task"), str) else ""
    if label and label != "run" and door == "run":
        door = "schedule"
    return Requester(door, label, task)


__all__ = ["AnswerError", "Answered", "PolicyFiles", "REDACTED_MARK", "Requester", "added_text", "approve",
           "audit_answer", "deny", "diff_line_kinds", "diff_text", "flag_of", "flag_warning", "mark_redacted",
           "requester"]
