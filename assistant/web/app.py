"""The approval page as an ASGI app (Starlette): who may see and answer which request.

Guards "nothing weaker than the CLI path" for answers given from a phone:
- every page and action needs a secret: a per-request link signed for (request id, sha256,
  expiry, action) under the key in state/ (assistant.approvals.links), or a session cookie got
  by presenting the login token `serve` printed. Without one: a refusal page, nothing shown;
- a GET never changes anything and never uses a link up (link previews and scanners fetch
  links); an answer is a POST carrying a CSRF token bound to the request, the action and this
  browser (its login session, else an HttpOnly SameSite=Strict nonce cookie rotated at login),
  so a token from another page, request or browser answers nothing; the answering POST goes
  through assistant.approvals.answering, the same code as `assistant approvals approve/deny`: the answer
  file binds the sha256 shown, and the first answer wins, so a link answers once;
- a tampered, replayed, expired or cross-request link is refused with a clear page and an
  audit line (rate-limited per client and kind of refusal, so a flood cannot fill the log nor
  silence other lines; a login is always written); every comparison of a secret is
  constant-time; every text from a request is escaped (assistant.web.pages);
- bounded: a body is at most MAX_BODY bytes and read within BODY_TIMEOUT seconds; answering
  waits at most for the grants lock's own bound.
The server around it (assistant.web.server) bounds connections and chooses the address.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request as HttpRequest
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from policy.approvals import EXPIRED, PENDING, InboxError, Request, waiter_alive
from policy.audit import AuditError

from assistant.approvals import answering as approving
from assistant.approvals.links import ACTIONS, LinkClaim, LinkSigner, link_expiry, parse_expiry
from assistant.secrets.scanner import Scanner
from assistant.session import policy_files
from assistant.workspace.layout import Workspace
from assistant.web import pages
from assistant.web.audit_budget import AuditBudget
from assistant.web.hosts import HostRule

MAX_HEADERS = 16 * 1024       # all header names and values together
MAX_BODY = 8 * 1024           # an answer is a scope or a reason: a few hundred bytes
BODY_TIMEOUT = 10.0           # seconds to send that body
MAX_REASON = 500
LINK_OWNER_SEARCH = 20        # newest requests checked to name the one a foreign link was made for
SESSION_TTL = 12 * 3600.0
MAX_SESSIONS = 64
AUDIT_PER_MINUTE = 30         # refusal lines per (client, kind); beyond that counted and summed up
SESSION_COOKIE = "assistant_session"
CSRF_COOKIE = "assistant_csrf"
_ID = re.compile(r"^[0-9a-f]{12}$")
_NONCE = re.compile(r"^[A-Za-z0-9_-]{32,64}$")

SECURITY_HEADERS = [
    (b"content-security-policy", f"default-src 'none'; style-src '{pages.CSS_HASH}'; img-src 'self'; "
                                 "form-action 'self'; frame-ancestors 'none'; base-uri 'none'".encode("ascii")),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]


class PageRefused(Exception):
    """A request the page will not serve: status, a title and a text for the person, and why
    (for the audit line; None: not audited)."""

    def __init__(self, status: int, title: str, text: str, why: str | None = None) -> None:
        super().__init__(text)
        self.status, self.title, self.text, self.why = status, title, text, why


@dataclass(frozen=True)
class Access:
    """How a request reached a request: a signed link (with its claim) or a login session."""

    via: str                       # "link" | "login"
    claim: LinkClaim | None = None


class ApprovalApp:
    """The page's state: the workspace, the link signer, the login token, live sessions."""

    def __init__(self, ws: Workspace, signer: LinkSigner, *, login_token: str, prefix: str = "",
                 secure_cookies: bool = False, allowed_hosts: HostRule | None = None,
                 clock: Callable[[], float] = time.time,
                 audit_key: "bytes | Callable[[], bytes] | None" = None, scanner: Scanner | None = None) -> None:
        self.ws = ws
        # the inbox and the audit log from the composition root (no config read), keyed with the
        # vault's audit key got once at start (None: unkeyed lines) and redacted with its scanner
        self.scanner = scanner if scanner is not None else Scanner({})   # the vault's, when unlocked
        self.files = policy_files(ws, audit_key=audit_key, scanner=self.scanner)
        self.signer = signer
        self._login_hash = hashlib.sha256(login_token.encode()).digest()
        self.prefix = prefix.rstrip("/")
        self.secure = secure_cookies
        self.allowed_hosts = allowed_hosts
        self.clock = clock
        self._sessions: dict[bytes, float] = {}     # sha256(cookie) -> expiry
        self._lock = threading.Lock()
        self._audit_budget = AuditBudget(AUDIT_PER_MINUTE, clock=clock)

    # ------------------------------------------------------------ the ASGI app
    def asgi(self) -> Callable:
        routes = [
            Route("/", self.home, methods=["GET"]),
            Route("/login", self.login, methods=["GET"]),
            Route("/r/{rid}", self.view_login, methods=["GET"]),
            Route("/r/{rid}/{action}", self.view_link, methods=["GET"]),
            Route("/r/{rid}/{action}", self.answer, methods=["POST"]),
        ]
        app = Starlette(routes=routes)
        prefix = self.prefix
        hosts = self.allowed_hosts

        async def wrapped(scope, receive, send):
            if scope["type"] != "http":
                return   # no websockets, no lifespan work

            async def send_secure(message):
                if message["type"] == "http.response.start":
                    ours = {k for k, _ in SECURITY_HEADERS}
                    headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in ours]
                    message = dict(message, headers=headers + SECURITY_HEADERS)
                await send(message)

            if sum(len(k) + len(v) for k, v in scope.get("headers", [])) > MAX_HEADERS:
                await HTMLResponse(pages.message_page("Too large", "The request's headers are too large."),
                                   status_code=431)(scope, receive, send_secure)
                return
            if hosts is not None and not hosts.allows(_host_of(scope)):
                await HTMLResponse(pages.message_page("Wrong host", "This server does not answer to that host name."),
                                   status_code=400)(scope, receive, send_secure)
                return
            if prefix and (scope["path"] == prefix or scope["path"].startswith(prefix + "/")):
                scope = dict(scope, path=scope["path"][len(prefix):] or "/")

            await app(scope, receive, send_secure)

        return wrapped

    # ------------------------------------------------------------ helpers
    def url(self, path: str) -> str:
        return f"{self.prefix}{path}"

    def _page(self, body: str, status: int = 200, nonce: str | None = None) -> HTMLResponse:
        resp = HTMLResponse(body, status_code=status)
        if nonce is not None:
            resp.set_cookie(CSRF_COOKIE, nonce, httponly=True, samesite="strict", secure=self.secure,
                            path=self.prefix or "/")
        return resp

    def _refusal(self, request: HttpRequest, exc: PageRefused, *, rid: str | None, action: str | None) -> HTMLResponse:
        if exc.why is not None:
            self._audit(request, exc.why, rid=rid, action=action)
        more = (f"<p><a href=\"{html.escape(self.url('/'), quote=True)}\">Pending approvals</a> "
                "(needs the login link the approval server printed when it started)</p>")
        return self._page(pages.message_page(exc.title, exc.text, more=more), exc.status)

    def _audit(self, request: HttpRequest, why: str, *, rid: str | None, action: str | None,
               verdict: str = "refused") -> None:
        """One audit line per refusal, at most AUDIT_PER_MINUTE a minute for each (client, kind
        of refusal); past that counted and summed up (assistant.web.audit_budget). Allowed
        events (logins) are always written."""
        client = request.client.host if request.client else None
        if verdict == "refused":
            admitted = self._audit_budget.admit(client or "?", why)
            write, notes = admitted.write, admitted.notes
        else:
            write, notes = True, self._audit_budget.sweep()
        records = [{"event": "web", "verdict": "refused", "why": n.why, "kind": n.kind, "client": n.client,
                    **({"suppressed": n.suppressed} if n.suppressed else {})} for n in notes]
        if write:
            records.append({"event": "web", "verdict": verdict, "why": why,
                            "request": rid if rid is not None and _ID.match(rid) else ("(malformed)" if rid else None),
                            "action": action if action in ACTIONS else None, "client": client})
        for record in records:
            try:
                self.files.audit.append(record)
            except AuditError:
                pass     # the refusal stands whether or not it could be logged

    def _session(self, request: HttpRequest) -> bool:
        cookie = request.cookies.get(SESSION_COOKIE, "")
        if not cookie or len(cookie) > 128:
            return False
        key = hashlib.sha256(cookie.encode("utf-8", "replace")).digest()
        with self._lock:
            expiry = self._sessions.get(key)
            if expiry is not None and expiry <= self.clock():
                del self._sessions[key]
                expiry = None
        return expiry is not None

    def _csrf_binding(self, request: HttpRequest, nonce: str | None = None) -> str:
        """What this browser's form tokens are bound to: its login session if it has a live one
        (a secret only that browser holds), else its CSRF cookie nonce ("" = none)."""
        if self._session(request):
            cookie = request.cookies.get(SESSION_COOKIE, "")
            return "session:" + hashlib.sha256(cookie.encode("utf-8", "replace")).hexdigest()
        nonce = request.cookies.get(CSRF_COOKIE, "") if nonce is None else nonce
        return "nonce:" + nonce if _NONCE.match(nonce) else ""

    def _nonce(self, request: HttpRequest) -> tuple[str, bool]:
        """The browser's CSRF nonce (from its cookie), or a new one (True: set the cookie)."""
        nonce = request.cookies.get(CSRF_COOKIE, "")
        if _NONCE.match(nonce):
            return nonce, False
        return secrets.token_urlsafe(32), True

    def _request(self, rid: str) -> Request:
        if not _ID.match(rid):
            raise PageRefused(404, "No such request", "This address names no approval request.", "malformed request id")
        inbox = self.files.inbox
        try:
            raw = inbox.request_bytes(rid)
            if raw is None:
                raise PageRefused(404, "No such request", f"There is no approval request {rid}.", "unknown request")
            return inbox.get(rid)
        except InboxError as exc:
            raise PageRefused(409, "This request cannot be read", str(exc), "unreadable request") from None

    def _check_link(self, req: Request, action: str, exp_text: str, sig: str) -> LinkClaim:
        """The link's claim if its signature is good for this request, its content and its
        expiry; else PageRefused saying which (another request's link is named as such)."""
        exp = parse_expiry(exp_text)
        if exp is None or not sig:
            raise PageRefused(403, "Incomplete link", "This link is missing its expiry or signature. Use the whole "
                          "link from the notification.", "incomplete link")
        claim = LinkClaim(req.id, req.sha256, exp, action)
        if self.signer.check(claim, sig) and exp == link_expiry(req):
            return claim
        other = self._link_owner(req.id, exp, action, sig)
        if other is not None:
            raise PageRefused(403, "Link for another request",
                          f"This link was made for request {other}, not {req.id}. Nothing was done.",
                          f"link for another request ({other})")
        raise PageRefused(403, "Invalid link", "This link's signature does not match this request: it was altered, "
                      "or the request changed since the link was made. Nothing was done.", "bad link signature")

    def _link_owner(self, rid: str, exp: int, action: str, sig: str) -> str | None:
        inbox = self.files.inbox
        try:
            ids = inbox.ids()
        except InboxError:
            return None

        def filed(i: str) -> float:
            try:
                return os.stat(self.ws.approvals_dir / f"{i}.json", follow_symlinks=False).st_mtime
            except OSError:
                return 0.0

        newest = sorted((i for i in ids if i != rid), key=filed)[-LINK_OWNER_SEARCH:]
        for other in newest:           # bounded: a flood of bad links reads few files
            if other == rid:
                continue
            try:
                req = inbox.get(other)
            except InboxError:
                continue
            if self.signer.check(LinkClaim(other, req.sha256, exp, action), sig):
                return other
        return None

    def _state(self, req: Request) -> tuple[str, object]:
        inbox = self.files.inbox
        ans = inbox.answer_of(req.id)
        return inbox.state(req, ans), ans

    def _must_be_open(self, req: Request) -> None:
        state, ans = self._state(req)
        if state == PENDING:
            return
        if ans is not None and getattr(ans, "by", "") != "run" and state != EXPIRED:
            raise PageRefused(409, "Already answered", f"This request was already answered: {pages.answer_words(ans)}. "
                          "A link answers once; nothing was changed.", "already answered (link replayed)")
        raise PageRefused(410, "Expired", f"Request {req.id} is no longer waiting ({state}): it expired at "
                      f"{req.expires_at} or its run gave up, and it was denied. Nothing was changed.",
                      f"request {state}")

    def _authorized(self, request: HttpRequest, rid: str, action: str, exp: str, sig: str) -> tuple[Request, Access]:
        """The request and how this visitor may reach it; PageRefused otherwise. Without any
        credential nothing is read (not even whether the request exists); with a link, an
        unknown or unreadable request is the same refusal as a bad signature (no oracle)."""
        if not _ID.match(rid):
            raise PageRefused(404, "No such request", "This address names no approval request.", "malformed request id")
        if exp or sig:
            try:
                req = self._request(rid)
            except PageRefused as exc:
                raise PageRefused(403, "Invalid link", "This link's signature does not match this request: it was "
                              "altered, or the request changed since the link was made. Nothing was done.",
                              f"link to an {exc.why}") from None
            return req, Access("link", self._check_link(req, action, exp, sig))
        if self._session(request):
            return self._request(rid), Access("login")
        raise PageRefused(401, "Not signed in", "This page needs the signed link from your notification, or the "
                      "login link the approval server printed when it started.", "no link and no login")

    def _forms(self, req: Request, access: Access, action: str, binding: str) -> str:
        def auth_for(act: str) -> pages.FormAuth:
            csrf = self.signer.csrf_token(binding, req.id, act)
            if access.via == "login":
                return pages.FormAuth(csrf)
            exp = link_expiry(req)
            return pages.FormAuth(csrf, str(exp), self.signer.signature(LinkClaim(req.id, req.sha256, exp, act)))

        sha_field = f"<input type=\"hidden\" name=\"sha256\" value=\"{req.sha256}\">"
        out = ""
        if action in ("show", "approve"):
            out += pages.approve_form(req, self.url(f"/r/{req.id}/approve"), auth_for("approve")).replace(
                "</form>", sha_field + "</form>")
        if action in ("show", "deny"):
            out += pages.deny_form(self.url(f"/r/{req.id}/deny"), auth_for("deny")).replace("</form>", sha_field + "</form>")
        return out

    # ------------------------------------------------------------ routes
    async def home(self, request: HttpRequest) -> Response:
        if not self._session(request):
            return self._refusal(request, PageRefused(401, "Not signed in", "Open the login link the approval "
                                 "server printed when it started, or a signed link from a notification."), rid=None, action=None)
        inbox = self.files.inbox
        try:
            everything = await run_in_threadpool(lambda: inbox.list(all=True)) if self.ws.approvals_dir.exists() else []
        except InboxError as exc:
            return self._page(pages.message_page("The inbox cannot be read", str(exc)), 500)
        shown = [e for e in everything if e.state in (PENDING, "corrupt")]
        expired = sum(1 for e in everything if e.state == EXPIRED)
        return self._page(pages.list_page(shown, lambda i: self.url(f"/r/{i}"), expired))

    async def login(self, request: HttpRequest) -> Response:
        token = request.query_params.get("token", "")
        given = hashlib.sha256(token.encode("utf-8", "replace")).digest()
        if not token or not hmac.compare_digest(given, self._login_hash):
            return self._refusal(request, PageRefused(403, "Wrong login link", "This login token is not the one "
                                 "the approval server printed (it changes every time the server starts).",
                                 "wrong login token" if token else "login without a token"), rid=None, action=None)
        cookie = secrets.token_urlsafe(32)
        with self._lock:
            now = self.clock()
            self._sessions = {k: v for k, v in self._sessions.items() if v > now}
            while len(self._sessions) >= MAX_SESSIONS:
                del self._sessions[min(self._sessions, key=self._sessions.__getitem__)]
            self._sessions[hashlib.sha256(cookie.encode()).digest()] = now + SESSION_TTL
        self._audit(request, "login with the serve token", rid=None, action=None, verdict="allowed")
        resp = RedirectResponse(self.url("/"), status_code=303)
        resp.set_cookie(SESSION_COOKIE, cookie, max_age=int(SESSION_TTL), httponly=True, samesite="strict",
                        secure=self.secure, path=self.prefix or "/")
        # a new CSRF nonce at login: one planted before (cookie tossing) is not carried into the session
        resp.set_cookie(CSRF_COOKIE, secrets.token_urlsafe(32), httponly=True, samesite="strict",
                        secure=self.secure, path=self.prefix or "/")
        return resp

    async def view_login(self, request: HttpRequest) -> Response:
        return await self._view(request, request.path_params["rid"], "show", link=False)

    async def view_link(self, request: HttpRequest) -> Response:
        return await self._view(request, request.path_params["rid"], request.path_params["action"], link=True)

    async def _view(self, request: HttpRequest, rid: str, action: str, *, link: bool) -> Response:
        """GET: show one request. Never changes anything, never uses a link up."""
        try:
            if action not in ACTIONS:
                raise PageRefused(404, "No such page", "Links end in /show, /approve or /deny.", "unknown action")
            q = request.query_params
            req, access = await run_in_threadpool(self._authorized, request, rid, action,
                                                  q.get("exp", "") if link else "", q.get("sig", "") if link else "")
            state, ans = await run_in_threadpool(self._state, req)
            if access.via == "link":
                await run_in_threadpool(self._must_be_open, req)
        except PageRefused as exc:
            return self._refusal(request, exc, rid=rid, action=action)
        except InboxError as exc:
            return self._page(pages.message_page("This request cannot be read", str(exc)), 409)
        nonce, fresh = self._nonce(request)
        binding = await run_in_threadpool(self._csrf_binding, request, nonce)
        forms = self._forms(req, access, action, binding) if state == PENDING else ""
        who = await run_in_threadpool(approving.requester, self.ws, req)
        note = ""
        if state == PENDING and req.waiter is not None and waiter_alive(req) is False:
            note = "<p class=\"warn\">The run that asked is gone: nothing waits for this answer now.</p>"
        home = self.url("/") if access.via == "login" else ""
        # the diff is bounded but can still take seconds: off the event loop, so other pages go on
        body = await run_in_threadpool(lambda: pages.request_page(req, state, ans, who, forms=forms,  # type: ignore[arg-type]
                                                                  note=note, home=home))
        return self._page(body, nonce=nonce if fresh else None)

    async def answer(self, request: HttpRequest) -> Response:
        """POST: approve or deny, once, through assistant.approvals.answering."""
        rid, action = request.path_params["rid"], request.path_params["action"]
        try:
            if action not in ("approve", "deny"):
                raise PageRefused(405, "Not an answer", "Only /approve and /deny take an answer.", "post to a non-answer")
            form = await _read_form(request)
            req, access = await run_in_threadpool(self._authorized, request, rid, action, form.get("exp", ""),
                                                  form.get("sig", ""))
            await run_in_threadpool(self._must_be_open, req)   # (an expired link says so first)
            binding = await run_in_threadpool(self._csrf_binding, request)
            if not self.signer.check_csrf(binding, form.get("csrf", ""), rid, action):
                raise PageRefused(403, "Form expired", "This answer did not come from the approval page itself "
                              "(its form token is missing or wrong). Open the link again and answer there.",
                              "missing or wrong CSRF token")
            shown = form.get("sha256", "")
            if not hmac.compare_digest(shown.encode("ascii", "replace"), req.sha256.encode("ascii")):
                raise PageRefused(409, "The content changed", "The answer is not for the content this request holds "
                              "now. Open the request again.", "answer for other content (sha256)")
            if action == "approve":
                remember = form.get("remember", "once")
                done = await run_in_threadpool(lambda: approving.approve(
                    self.files, rid, remember=remember, sha256=req.sha256, by="web", via=access.via))
            else:
                reason = form.get("reason", "").strip()
                if len(reason) > MAX_REASON:
                    raise PageRefused(400, "Reason too long", f"Keep the reason under {MAX_REASON} characters.")
                reason = self.scanner.redact(reason)   # free text: redacted before the inbox or the log keeps it
                done = await run_in_threadpool(lambda: approving.deny(
                    self.files, rid, reason=reason, sha256=req.sha256, by="web", via=access.via))
        except PageRefused as exc:
            return self._refusal(request, exc, rid=rid, action=action)
        except approving.AnswerError as exc:
            why = "already answered (link replayed)" if "already answered" in str(exc) else "answer refused"
            return self._refusal(request, PageRefused(409, "Not answered", str(exc), why), rid=rid, action=action)
        return self._page(_done_page(done))


def _host_of(scope) -> str:
    """The Host header's name part, lower case ("" when missing or unreadable)."""
    for k, v in scope.get("headers", []):
        if k == b"host":
            text = v.decode("latin-1").strip().lower()
            if text.startswith("["):
                return text[1:].split("]", 1)[0]
            return text.rsplit(":", 1)[0] if text.count(":") == 1 else text
    return ""


def _done_page(done: approving.Answered) -> str:
    req, ans = done.request, done.answer
    if ans.verdict == "approved":
        offer = req.offer(ans.remember) or {}
        text = f"Approved {req.kind} {req.target} ({offer.get('label', ans.remember)})."
        if done.grant:
            text += f" Grant recorded: {req.kind} {done.grant} (you can take it back on your computer: assistant grants revoke)."
    else:
        text = f"Denied {req.kind} {req.target}." + (f" Reason: {ans.reason}" if ans.reason else "")
    text += (" The run that asked is gone, so nothing acts on this now." if done.run_gone
             else " The waiting run continues now.")
    if done.warning:
        text += f" Warning: {done.warning}"
    return pages.message_page("Answered", text, bad=False)


async def _read_form(request: HttpRequest) -> dict[str, str]:
    """An application/x-www-form-urlencoded body: at most MAX_BODY bytes, read within
    BODY_TIMEOUT, UTF-8, no field given twice. Anything else is PageRefused."""
    ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        raise PageRefused(415, "Not a form", "Answers are sent by the page's own form.", "post that is not a form")
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise PageRefused(413, "Too large", "This answer is larger than any the page sends.", "body too large")
    body = bytearray()

    async def read() -> None:
        async for chunk in request.stream():
            body.extend(chunk)
            if len(body) > MAX_BODY:
                raise PageRefused(413, "Too large", "This answer is larger than any the page sends.", "body too large")

    try:
        await asyncio.wait_for(read(), BODY_TIMEOUT)
    except asyncio.TimeoutError:
        raise PageRefused(408, "Too slow", "The answer took too long to arrive.", "body too slow") from None
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=16)
    except (UnicodeDecodeError, ValueError):
        raise PageRefused(400, "Unreadable answer", "The answer could not be read.", "malformed form body") from None
    out: dict[str, str] = {}
    for k, v in pairs:
        if k in out:
            raise PageRefused(400, "Unreadable answer", f"The field {k!r} was sent twice.", "field sent twice")
        out[k] = v
    return out


__all__ = ["ApprovalApp", "PageRefused", "MAX_BODY", "BODY_TIMEOUT"]
