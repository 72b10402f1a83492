"""The out-of-band approval inbox: state/approvals/<id>.json requests and <id>.answer.json answers.

Guards "what is written is what was shown" and "a queue nobody can see is a defect":
- A request holds the run id, kind, target, the proposed content and its sha256, the current
  content (for a diff), the offers, created/expiry times, and what the session had read from
  untrusted places before it asked (`sources`: URLs, files/<path>, flagged notes). It is
  written once, atomically (temp file + link, never replacing anything).
- An answer names the request id and the content sha256 it approves; `answer()` refuses a
  hash that differs from the request's. The answer file is created with link(2), which never
  replaces: the first answer wins, a second is "already answered". The waiting run records an
  expiry (or an unreachable approver) the same way, so the record and the run always agree.
- State is derived, never stored twice: the answer's verdict, else `expired` once past the
  expiry time (even if the run that asked has died), else `pending`. Expired requests stay
  listed.
- `wait()` watches the folder with watchfiles (inotify), so an answer is noticed at once.
- Every unreadable or inconsistent file is an `InboxError`: the caller denies.

The model has no tool that reaches this folder: it lives under state/, beside the file mount.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from policy.audit import timestamp
from policy.fileio import (
    FileTooLargeError, LinkedFolder, NotRegularFile, StopEvent, open_folder, read_regular, watch_dir,
    write_atomic,
)
from policy.grants import GrantsError, GrantStore
from policy.kinds import DURABLE, KINDS, SCOPES, Offer, TargetError

VERSION = 1
PENDING, APPROVED, DENIED, EXPIRED = "pending", "approved", "denied", "expired"
STATES = (PENDING, APPROVED, DENIED, EXPIRED)
_ID = re.compile(r"^[0-9a-f]{12}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_MAX_FILE = 64 * 1024 * 1024


class InboxError(Exception):
    """The inbox, a request or an answer is missing, unreadable, inconsistent or not answerable."""


@dataclass(frozen=True)
class ApprovalSettings:
    """[approvals] as the gate uses it, already validated (assistant/workspace/config.py does that once):
    channel "inbox" (ask out of band) or "none" (nobody to ask: an ask is a deny), how long a
    request waits (seconds), and the notify argv ({summary} is filled in; () for none).
    web_url: where `assistant approvals serve` is reached ("" = no signed links; with it the
    notify argv also gets {show_url}, {approve_url}, {deny_url}); push: apprise URLs a request
    is pushed to, with those links (() = none)."""

    channel: str = "inbox"
    timeout: float = 900.0
    notify: tuple[str, ...] = ()
    web_url: str = ""
    push: tuple[str, ...] = ()


def sha256_hex(data: bytes | None) -> str:
    return hashlib.sha256(data or b"").hexdigest()


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


@dataclass(frozen=True)
class Request:
    id: str
    run_id: str
    kind: str
    target: str
    summary: str
    reason: str
    created_at: str
    expires_at: str
    sha256: str                 # of the exact proposed content (b"" when there is none)
    content: str | None         # the proposed content as shown (redacted if content_exact is False)
    current: str | None         # what is there now, for the diff
    content_exact: bool         # True if content is exactly the bytes sha256 binds
    offers: tuple[dict[str, str], ...]
    version: int = VERSION
    # The process waiting for the answer: {"pid", "host", "start"} (start = its start time in
    # clock ticks since boot, where /proc tells; it tells a reused pid from the original).
    waiter: dict[str, Any] | None = None
    # Who asked, when it was not this workspace's own model: "mcp:<client name>" for an MCP
    # client (shown as "requested by <client> over MCP"). Absent from the file when None.
    requester: str | None = None
    # What the session had read from untrusted places before it asked (redacted display names:
    # URLs, files/<path>, flagged notes), oldest first. Absent from the file when empty.
    sources: tuple[str, ...] = ()

    @property
    def expires(self) -> float:
        return _epoch(self.expires_at)

    def offer(self, scope: str) -> dict[str, str] | None:
        return next((o for o in self.offers if o.get("scope") == scope), None)

    def to_json(self) -> bytes:
        d = asdict(self)
        d["offers"] = list(self.offers)
        if d["requester"] is None:
            del d["requester"]
        if self.sources:
            d["sources"] = list(self.sources)
        else:
            del d["sources"]
        return (json.dumps(d, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


@dataclass(frozen=True)
class Answer:
    id: str
    verdict: str                # approved | denied | expired
    sha256: str
    remember: str = "once"
    reason: str = ""
    answered_at: str = ""
    by: str = "cli"             # "cli" or "web" (a person: terminal, approval page) or "run" (expiry / unreachable)
    version: int = VERSION

    def to_json(self) -> bytes:
        return (json.dumps(asdict(self), ensure_ascii=False, indent=2) + "\n").encode("utf-8")


@dataclass(frozen=True)
class Entry:
    """One request as listed: its state, and its answer if any. `error` for an unreadable file."""

    id: str
    state: str
    request: Request | None = None
    answer: Answer | None = None
    error: str = ""


def _need(d: dict[str, Any], key: str, typ: type | tuple[type, ...], where: str) -> Any:
    value = d.get(key)
    if not isinstance(value, typ) or isinstance(value, bool) and typ is not bool:
        raise InboxError(f"{where}: field {key!r} is missing or of the wrong type")
    return value


def _proc_start(pid: int) -> int | None:
    """A process's start time in clock ticks since boot (Linux /proc), or None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat_line = f.read().decode("ascii", "replace")
        return int(stat_line.rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def this_waiter() -> dict[str, Any]:
    return {"pid": os.getpid(), "host": os.uname().nodename, "start": _proc_start(os.getpid())}


def _waiter(value: object) -> dict[str, Any] | None:
    if (isinstance(value, dict) and isinstance(value.get("pid"), int) and not isinstance(value.get("pid"), bool)
            and isinstance(value.get("host"), str)):
        start = value.get("start")
        return {"pid": value["pid"], "host": value["host"], "start": start if isinstance(start, int) else None}
    return None


def waiter_alive(req: "Request") -> bool | None:
    """Is the run that filed `req` still waiting? None when this machine cannot tell (no record,
    another host). Display only: the answer files, not this guess, decide what a run does."""
    w = req.waiter
    if w is None or w["host"] != os.uname().nodename or w["pid"] <= 0:
        return None
    try:
        os.kill(w["pid"], 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass   # exists, owned by someone else
    start = _proc_start(w["pid"])
    if w["start"] is not None and start is not None and start != w["start"]:
        return False   # the pid was reused by another process
    return True


def _load_versioned(raw: bytes, where: str) -> dict[str, Any]:
    """A request or answer file's JSON object, of our version, or InboxError."""
    try:
        d = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InboxError(f"{where} is corrupt (not valid JSON: {exc})") from None
    if not isinstance(d, dict) or d.get("version") != VERSION:
        raise InboxError(f"{where} is corrupt or of an unknown version")
    return d


def _sources(value: object, where: str) -> tuple[str, ...]:
    """A request's `sources`: absent is none; anything but a list of strings is corrupt."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise InboxError(f"{where}: field 'sources' is of the wrong type")
    return tuple(value)


def parse_request(raw: bytes, where: str) -> Request:
    d = _load_versioned(raw, where)
    sources = _sources(d.get("sources"), where)
    try:
        req = Request(
            id=_need(d, "id", str, where), run_id=_need(d, "run_id", str, where),
            kind=_need(d, "kind", str, where), target=_need(d, "target", str, where),
            summary=_need(d, "summary", str, where), reason=_need(d, "reason", str, where),
            created_at=_need(d, "created_at", str, where), expires_at=_need(d, "expires_at", str, where),
            sha256=_need(d, "sha256", str, where),
            content=d.get("content") if isinstance(d.get("content"), str) else None,
            current=d.get("current") if isinstance(d.get("current"), str) else None,
            content_exact=_need(d, "content_exact", bool, where),
            offers=tuple(_need(d, "offers", list, where)),
            waiter=_waiter(d.get("waiter")),
            requester=d.get("requester") if isinstance(d.get("requester"), str) else None,
            sources=sources,
        )
        req.expires
        _epoch(req.created_at)
    except (ValueError, TypeError) as exc:
        raise InboxError(f"{where} is corrupt ({exc})") from None
    if req.kind not in KINDS or not _HEX64.match(req.sha256) or not _ID.match(req.id):
        raise InboxError(f"{where} is corrupt (bad kind, id or sha256)")
    if not all(isinstance(o, dict) and o.get("scope") in SCOPES and isinstance(o.get("pattern"), str)
               for o in req.offers):
        raise InboxError(f"{where} is corrupt (bad offers)")
    if req.content_exact and sha256_hex(req.content.encode("utf-8") if req.content is not None else None) != req.sha256:
        raise InboxError(f"{where} is corrupt: its content does not match its sha256")
    return req


def parse_answer(raw: bytes, where: str) -> Answer:
    d = _load_versioned(raw, where)
    ans = Answer(
        id=_need(d, "id", str, where), verdict=_need(d, "verdict", str, where),
        sha256=_need(d, "sha256", str, where), remember=_need(d, "remember", str, where),
        reason=d.get("reason") if isinstance(d.get("reason"), str) else "",
        answered_at=d.get("answered_at") if isinstance(d.get("answered_at"), str) else "",
        by=d.get("by") if isinstance(d.get("by"), str) else "",
    )
    if ans.verdict not in (APPROVED, DENIED, EXPIRED) or ans.remember not in SCOPES:
        raise InboxError(f"{where} is corrupt (verdict {ans.verdict!r}, remember {ans.remember!r})")
    return ans


AUTO_PRUNE_AFTER = 365 * 86400.0   # seconds after its end that an answered or expired request is kept


class Inbox:
    """The approvals folder (state/approvals/)."""

    def __init__(self, path: str | os.PathLike[str], *, clock=time.time) -> None:
        self.path = Path(path)
        self.clock = clock

    # ------------------------------------------------------------ files, by descriptor
    def _dirfd(self) -> int:
        """The inbox folder, reached from its grandparent (the workspace of state/approvals)
        one component at a time without following a link: a link planted at state/ or at
        state/approvals is refused with the fix, never followed."""
        base = self.path.parent.parent
        try:
            return open_folder(base, f"{self.path.parent.name}/{self.path.name}")
        except FileNotFoundError:
            raise InboxError(f"approval inbox {self.path} does not exist") from None
        except LinkedFolder as exc:
            raise InboxError(f"approval inbox refused: {exc.strerror}") from None
        except OSError as exc:
            raise InboxError(f"cannot open approval inbox {self.path}: {exc.strerror or exc}") from None

    def _read(self, name: str) -> bytes | None:
        dfd = self._dirfd()
        try:
            return read_regular(name, dir_fd=dfd, max_bytes=_MAX_FILE, shown=str(self.path / name))
        except FileNotFoundError:
            return None
        except NotRegularFile:
            raise InboxError(f"{self.path / name} is not a regular file") from None
        except FileTooLargeError:
            raise InboxError(f"{self.path / name} is larger than {_MAX_FILE} bytes") from None
        except OSError as exc:
            raise InboxError(f"cannot read {self.path / name}: {exc.strerror or exc}") from None
        finally:
            os.close(dfd)

    def _create(self, name: str, data: bytes) -> None:
        """Write name atomically, never replacing an existing file (FileExistsError if present)."""
        dfd = self._dirfd()
        try:
            write_atomic(name, data, dir_fd=dfd, replace=False)
        except FileExistsError:
            raise
        except OSError as exc:
            raise InboxError(f"cannot write {self.path / name}: {exc.strerror or exc}") from None
        finally:
            os.close(dfd)

    # ------------------------------------------------------------ requests
    def create(self, *, run_id: str, kind: str, target: str, summary: str, reason: str,
               sha256: str, content: str | None, current: str | None, content_exact: bool,
               offers: Sequence[Offer], timeout: float,
               requester: str | None = None, sources: Sequence[str] = ()) -> tuple[Request, bytes]:
        """File a request; returns it and the exact bytes written (to detect later tampering).
        `requester`: who asked when it is not the workspace's own model ("mcp:<client name>").
        `sources`: what the session had read from untrusted places (already redacted)."""
        now = self.clock()
        req = Request(
            id=secrets.token_hex(6), run_id=run_id, kind=kind, target=target, summary=summary,
            reason=reason, created_at=timestamp(now), expires_at=timestamp(now + timeout),
            sha256=sha256, content=content, current=current, content_exact=content_exact,
            offers=tuple(o.as_dict() for o in offers), waiter=this_waiter(), requester=requester,
            sources=tuple(sources),
        )
        data = req.to_json()
        # An answer already on file under this new id (left over, or planted) predates the
        # question: it cannot be its answer. Checked before the request appears (nobody can know
        # the id sooner), so an answer seen later was written after the request was filed.
        if self._read(f"{req.id}.answer.json") is not None:   # (InboxError if odd or unreadable)
            raise InboxError(f"an answer to {req.id} was on file before the request was filed; not asking")
        self._create(f"{req.id}.json", data)
        # Nobody has to remember `approvals prune`: each new request takes out what ended more
        # than a year ago (never a pending one). Best effort: the request is filed already, and a
        # folder that cannot be tidied must not turn it into a failure (prune names it by hand).
        try:
            self.prune(AUTO_PRUNE_AFTER)
        except InboxError:
            pass
        return req, data

    def _check_id(self, request_id: str) -> None:
        if not isinstance(request_id, str) or not _ID.match(request_id):
            raise InboxError(f"unknown approval id {request_id!r} (ids are 12 hex characters; see `assistant approvals list`)")

    def request_bytes(self, request_id: str) -> bytes | None:
        self._check_id(request_id)
        return self._read(f"{request_id}.json")

    def get(self, request_id: str) -> Request:
        raw = self.request_bytes(request_id)
        if raw is None:
            raise InboxError(f"unknown approval id {request_id!r} (see `assistant approvals list --all`)")
        req = parse_request(raw, f"approval request {request_id}")
        if req.id != request_id:
            raise InboxError(f"approval request {request_id} is corrupt: it names id {req.id!r}")
        return req

    def answer_of(self, request_id: str) -> Answer | None:
        self._check_id(request_id)
        raw = self._read(f"{request_id}.answer.json")
        return None if raw is None else parse_answer(raw, f"answer to {request_id}")

    def state(self, req: Request, answer: Answer | None) -> str:
        if answer is not None:
            return answer.verdict
        return EXPIRED if self.clock() >= req.expires else PENDING

    def entry(self, request_id: str) -> Entry:
        try:
            req = self.get(request_id)
            ans = self.answer_of(request_id)
        except InboxError as exc:
            return Entry(request_id, "corrupt", error=str(exc))
        return Entry(request_id, self.state(req, ans), req, ans)

    def ids(self) -> list[str]:
        dfd = self._dirfd()
        try:
            names = os.listdir(dfd)
        finally:
            os.close(dfd)
        return sorted(n[:-5] for n in names if n.endswith(".json") and not n.endswith(".answer.json")
                      and _ID.match(n[:-5]))

    def list(self, *, all: bool = False) -> list[Entry]:
        """Pending (and corrupt) requests, oldest first; with all=True every request."""
        entries = [self.entry(i) for i in self.ids()]
        if not all:
            entries = [e for e in entries if e.state in (PENDING, "corrupt")]
        return sorted(entries, key=lambda e: (e.request.created_at if e.request else "", e.id))

    def prune(self, older_than: float) -> list[Entry]:
        """Remove every answered or expired request that ended more than `older_than` seconds
        ago (its request file first, so it leaves every listing at once, then its answer);
        never a pending or a corrupt one. The audit log is not touched: their lines stay.
        Returns the entries removed, oldest first."""
        cutoff = self.clock() - older_than
        gone: list[Entry] = []
        for entry in self.list(all=True):
            ended = ended_at(entry)
            if ended is None or ended > cutoff:
                continue
            dfd = self._dirfd()
            try:
                for name in (f"{entry.id}.json", f"{entry.id}.answer.json"):
                    try:
                        os.unlink(name, dir_fd=dfd)
                    except FileNotFoundError:
                        pass
            except OSError as exc:
                raise InboxError(f"cannot remove approval {entry.id} from {self.path}: "
                                 f"{exc.strerror or exc}") from None
            finally:
                os.close(dfd)
            gone.append(entry)
        return gone

    # ------------------------------------------------------------ answers
    def answer(self, request_id: str, verdict: str, *, sha256: str, remember: str = "once",
               reason: str = "", grants: GrantStore | None = None, by: str = "cli") -> Answer:
        """A person's answer (the CLI). Refuses unknown, corrupt, expired, answered, mismatched."""
        if verdict not in (APPROVED, DENIED):
            raise InboxError(f"an answer is approved or denied, not {verdict!r}")
        req = self.get(request_id)
        existing = self.answer_of(request_id)
        if existing is not None:
            raise InboxError(f"approval {request_id} was already answered ({existing.verdict})")
        if self.clock() >= req.expires:
            raise InboxError(f"approval {request_id} expired at {req.expires_at}; the run was denied")
        if sha256 != req.sha256:
            raise InboxError(
                f"sha256 {sha256[:16]}... does not match approval {request_id} ({req.sha256[:16]}...); "
                "what is written must be what was shown"
            )
        pattern = None
        if verdict == APPROVED:
            offered = _policy_offers(req)
            if req.offer(remember) is None or remember not in offered:
                names = ", ".join(o["scope"] for o in req.offers)
                raise InboxError(f"--remember {remember} is not offered for {req.target} (offered: {names})")
            pattern = offered[remember]
        else:
            remember = "once"
        ans = Answer(request_id, verdict, sha256, remember, reason, timestamp(self.clock()), by)
        # The answer first, the grant after: link(2) decides which of two racing answers wins, and
        # only the winner records a grant (a loser's grant never exists, not even for a moment).
        try:
            self._create(f"{request_id}.answer.json", ans.to_json())
        except FileExistsError:
            current = self.answer_of(request_id)
            raise InboxError(
                f"approval {request_id} was already answered ({current.verdict if current else 'unknown'})"
            ) from None
        if pattern is not None and remember in DURABLE and grants is not None:
            try:
                grants.add(req.kind, pattern, note=f"approval {request_id}")
            except GrantsError as exc:
                raise InboxError(f"approved, but the grant could not be recorded: {exc} "
                                 "(a waiting run records it itself, and denies if it cannot)") from None
        return ans

    def close(self, request_id: str, verdict: str, reason: str, *, sha256: str) -> Answer:
        """The run records that nobody answered (expired) or nobody could be asked (denied).

        Returns the answer on file: this one, or one a person wrote first (the first wins).
        Works on a request file that has since been damaged: the run knows what it asked.
        """
        self._check_id(request_id)
        ans = Answer(request_id, verdict, sha256, "once", reason, timestamp(self.clock()), "run")
        try:
            self._create(f"{request_id}.answer.json", ans.to_json())
        except FileExistsError:
            existing = self.answer_of(request_id)
            if existing is None:
                raise InboxError(f"answer to {request_id} vanished") from None
            return existing
        return ans

    # ------------------------------------------------------------ waiting
    def wait(self, request_id: str, timeout: float, *, stop_event: StopEvent | None = None,
             safety_poll: float = 2.0) -> Answer | None:
        """Block until the request has an answer file (returned, parsed) or timeout (None).

        inotify via watchfiles (policy.fileio.watch_dir) wakes us as soon as anything in the
        folder changes; the answer file is checked before watching, once the watch is live (its
        first batch: no lost wake-up) and after every wake-up or tick. The tick (at most
        `safety_poll`, at most 0.1 s) also keeps the deadline.
        """
        self._check_id(request_id)
        deadline = time.monotonic() + timeout
        ans = self.answer_of(request_id)
        if ans is not None:
            return ans
        tick = max(0.01, min(safety_poll, 0.1))
        for _ in watch_dir(self.path, stop_event=stop_event, tick=tick, recursive=False):
            ans = self.answer_of(request_id)
            if ans is not None:
                return ans
            if time.monotonic() >= deadline:
                return None
        return None   # stopped (stop_event)

    def follow(self, *, stop_event: StopEvent | None = None, timeout: float | None = None,
               seen: Iterable[str] | None = None) -> Iterator[Entry]:
        """Yield each request not in `seen` (default: those on file now), as it is filed.

        A caller that listed the inbox first passes the ids it listed, so a request filed between
        its listing and this call is still yielded (none falls into the gap).
        """
        seen = set(self.ids()) if seen is None else set(seen)
        deadline = None if timeout is None else time.monotonic() + timeout

        def filed() -> Iterator[Entry]:
            for i in self.ids():
                if i not in seen:
                    seen.add(i)
                    yield self.entry(i)

        yield from filed()
        tick = 0.5 if timeout is None else max(0.01, min(0.5, timeout))
        for _ in watch_dir(self.path, stop_event=stop_event, tick=tick, recursive=False):
            yield from filed()
            if deadline is not None and time.monotonic() >= deadline:
                return


def ended_at(entry: Entry) -> float | None:
    """When a request stopped waiting (epoch seconds): when it was answered (by a person, or by
    the run recording an expiry), else its expiry time once past; None while pending or corrupt."""
    if entry.request is None or entry.state in (PENDING, "corrupt"):
        return None
    if entry.answer is not None:
        try:
            return _epoch(entry.answer.answered_at)
        except ValueError:
            return entry.request.expires
    return entry.request.expires


def _policy_offers(req: Request) -> dict[str, str]:
    """scope -> grant pattern of the request's offers, each as the policy offers it for its target.

    The request file is data, not authority: its offers must be what kinds.offers() gives for
    its target, or some of them (a request that may only be approved once offers just `once`),
    each with the policy's own pattern, so an edited file cannot turn `exact` into `people/*`
    or add a `dir` offer for a root note.
    """
    spec = KINDS[req.kind]
    try:
        norm = spec.normalise(req.target)
    except TargetError as exc:
        raise InboxError(f"approval request {req.id} is corrupt: {exc}") from None
    policy = {o.scope: o.pattern for o in spec.offers(norm)}
    on_file = {o.get("scope"): o.get("pattern") for o in req.offers}
    if (norm != req.target or not on_file or len(on_file) != len(req.offers)
            or any(scope not in policy or policy[scope] != pattern for scope, pattern in on_file.items())):
        raise InboxError(f"approval request {req.id} is corrupt: its offers are not the ones the policy "
                         f"makes for {req.target!r}; not approving")
    return {scope: policy[scope] for scope in on_file}


def requested_by(req: "Request | str | None") -> str | None:
    """Who asked (a request's requester), in words ("Claude Desktop over MCP"), or None for the
    workspace's own model."""
    who = req.requester if isinstance(req, Request) else req
    if who is None:
        return None
    if who.startswith("mcp:"):
        return f"{who[4:]} over MCP"
    return who


def read_before(sources: Sequence[str], who: str = "this chat") -> str:
    """The words that name what a session read before it proposed a call:
    "this chat read https://a.example/x and files/report.md before proposing this"."""
    names = list(sources)
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{who} read {listed} before proposing this"


def as_json(entry: Entry) -> dict[str, Any]:
    """A listing row for --json (content and current left out; `approvals show` has them)."""
    out: dict[str, Any] = {"id": entry.id, "state": entry.state}
    if entry.error:
        out["error"] = entry.error
    if entry.request is not None:
        r = entry.request
        out.update(run_id=r.run_id, kind=r.kind, target=r.target, summary=r.summary, reason=r.reason,
                   created_at=r.created_at, expires_at=r.expires_at, sha256=r.sha256,
                   offers=[o["scope"] for o in r.offers])
        if r.requester is not None:
            out["requester"] = r.requester
        if r.sources:
            out["sources"] = list(r.sources)
        if entry.state == PENDING:
            out["run_alive"] = waiter_alive(r)
    if entry.answer is not None:
        a = entry.answer
        out["answer"] = {"verdict": a.verdict, "remember": a.remember, "reason": a.reason,
                         "answered_at": a.answered_at, "by": a.by}
    return out


__all__ = ["Inbox", "InboxError", "Request", "Answer", "Entry", "ApprovalSettings", "sha256_hex", "as_json", "ended_at", "read_before", "requested_by", "waiter_alive",
           "PENDING", "APPROVED", "DENIED", "EXPIRED"]
