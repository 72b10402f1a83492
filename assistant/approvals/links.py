"""Signed per-request approval links, and the other MACs of the approval page (state/approval_links.key).

Guards "nothing without a secret" for `assistant approvals serve` and the links in notifications:
- a link names one request, one action (show, approve, deny) and an expiry, and carries an
  HMAC-SHA256 under a 32-byte key kept in state/ (0600, made atomically on first use, never
  replacing a key another process made first: assistant.secrets.revision_key.load_key). The MAC covers
  the request id, the sha256 of the request's exact content, the expiry (the request's own) and
  the action, so a link cannot be moved to another request, another content, a later time or
  another action; checking it is constant-time (hmac.compare_digest);
- the same key, under other domain labels, makes the page's CSRF tokens (see `csrf_token`: bound
  to the browser's session, the request and the action):
  one key file, every label separate, so no MAC of one kind is ever valid as another.
Losing the key costs only a re-sent link (links in notifications stop working); nothing is
stored that a new key cannot replace.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from dataclasses import dataclass
from typing import Mapping, Protocol
from urllib.parse import quote

from assistant.secrets.revision_key import load_key

KEY_FILE = "approval_links.key"
ACTIONS = ("show", "approve", "deny")
_SIG = re.compile(r"^[A-Za-z0-9_-]{43}$")
_EXP = re.compile(r"^[0-9]{1,12}$")


class RequestLike(Protocol):
    """What a link is made from: policy.approvals.Request is one."""

    @property
    def id(self) -> str: ...

    @property
    def sha256(self) -> str: ...

    @property
    def expires(self) -> float: ...


def mac(key: bytes, label: str, *parts: str) -> bytes:
    """HMAC-SHA256 over a domain label and the parts, each length-prefixed (no two different
    part lists give the same message)."""
    msg = bytearray(label.encode("ascii") + b"\0")
    for p in parts:
        b = p.encode("utf-8")
        msg += len(b).to_bytes(4, "big") + b
    return hmac.new(key, bytes(msg), hashlib.sha256).digest()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def link_expiry(req: RequestLike) -> int:
    """A link's expiry: the request's own, in whole seconds (never later than the request)."""
    return int(req.expires)


@dataclass(frozen=True)
class LinkClaim:
    """What a link says: request id, the sha256 it was made for, its expiry (epoch s), action."""

    request_id: str
    sha256: str
    expires: int
    action: str


class LinkSigner:
    """Makes and checks the signed links of one workspace. `base_url` is [approvals] web_url
    ("" = links are only paths, for the page's own use)."""

    def __init__(self, key: bytes, base_url: str = "") -> None:
        if len(key) < 32:
            raise ValueError("the approval-link key must be at least 32 bytes")
        self._key = key
        self.base_url = base_url.rstrip("/")

    # ------------------------------------------------------------ links
    def signature(self, claim: LinkClaim) -> str:
        if claim.action not in ACTIONS:
            raise ValueError(f"a link's action is one of {', '.join(ACTIONS)}, not {claim.action!r}")
        return _b64(mac(self._key, "assistant-approval-link-v1", claim.request_id, claim.sha256,
                        str(claim.expires), claim.action))

    def check(self, claim: LinkClaim, signature: str) -> bool:
        """Is `signature` the link signature of `claim`? Constant-time; False for any malformed input."""
        if not isinstance(signature, str) or not _SIG.match(signature) or claim.action not in ACTIONS:
            return False
        return hmac.compare_digest(self.signature(claim).encode("ascii"), signature.encode("ascii"))

    def query(self, req: RequestLike, action: str) -> str:
        exp = link_expiry(req)
        sig = self.signature(LinkClaim(req.id, req.sha256, exp, action))
        return f"exp={exp}&sig={quote(sig)}"

    def path(self, request_id: str, action: str) -> str:
        return f"/r/{request_id}/{action}"

    def url(self, req: RequestLike, action: str) -> str:
        return f"{self.base_url}{self.path(req.id, action)}?{self.query(req, action)}"

    def urls(self, req: RequestLike) -> Mapping[str, str]:
        """{show_url, approve_url, deny_url} for the notify template and push (needs base_url)."""
        if not self.base_url:
            return {}
        return {f"{a}_url": self.url(req, a) for a in ACTIONS}

    # ------------------------------------------------------------ the page's other MACs
    def csrf_token(self, binding: str, request_id: str = "", action: str = "") -> str:
        """The form token for one answer (request id and action) in one browser session:
        `binding` is what ties it to that browser (the approval page passes its login session,
        or without one the browser's CSRF cookie nonce, which is rotated at login). A token got
        from any other page (another request, another action, another session) is no good here."""
        return _b64(mac(self._key, "assistant-approval-csrf-v2", binding, request_id, action))

    def check_csrf(self, binding: str, token: str, request_id: str = "", action: str = "") -> bool:
        if not binding or not isinstance(token, str) or not _SIG.match(token):
            return False
        return hmac.compare_digest(self.csrf_token(binding, request_id, action).encode("ascii"),
                                   token.encode("ascii"))


def parse_expiry(text: str) -> int | None:
    return int(text) if isinstance(text, str) and _EXP.match(text) else None


def load_signer(state_dir: str | os.PathLike[str], base_url: str = "") -> LinkSigner:
    """The workspace's signer; the key is created (0600) on first use. RevisionKeyError (an
    OSError) if state/ cannot hold it."""
    return LinkSigner(load_key(state_dir, name=KEY_FILE, what="approval-link key"), base_url)


__all__ = ["ACTIONS", "KEY_FILE", "LinkClaim", "LinkSigner", "link_expiry", "load_signer", "mac", "parse_expiry"]
