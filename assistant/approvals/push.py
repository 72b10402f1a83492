"""Pushing an approval request to a phone: [approvals] push, a list of apprise URLs.

Guards "unreachable means deny" and "links open, never answer" for the built-in push:
- apprise (one maintained library for ntfy, Pushover, Telegram, Matrix, e-mail, Slack, desktop
  notifications...) sends each URL's notification; every URL must succeed, within a bounded
  time, or the push reports why (a reason string, never raised) and the gate denies at once,
  exactly as for a failing notify command;
- the body is the gate's one-line summary (already redacted: never a vault value, never the
  note's content; made one escaped line by policy.notify.summary_line, exactly as the notify
  command's {summary}: no line separator, control or bidi character of the model's) and the three signed links. Where the service has "open a URL" actions
  (ntfy's click and view actions, Pushover's supplementary URL), the links become those; an
  action that would answer by itself (ntfy's http action) is never made: answering is the
  page's POST, after the person has seen the diff;
- a failure names the service by its scheme and position only: push URLs often carry the
  service's token, so they are never echoed into a reason, a log or the audit.
"""

from __future__ import annotations

import inspect
import threading
from dataclasses import dataclass
from typing import Mapping, Sequence
from urllib.parse import quote, urlsplit

TITLE = "assistant: approval needed"
PUSH_TIMEOUT = 15.0


def scheme_of(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else "?"


def _has_param(url: str, name: str) -> bool:
    query = urlsplit(url).query
    return any(p.split("=", 1)[0].lower() == name for p in query.split("&") if p)


def _with_params(url: str, params: Mapping[str, str]) -> str:
    add = [f"{k}={quote(v, safe='')}" for k, v in params.items() if not _has_param(url, k)]
    if not add:
        return url
    base, sep, frag = url.partition("#")
    joiner = "&" if "?" in base else "?"
    return base + joiner + "&".join(add) + (sep + frag)


def with_open_actions(url: str, links: Mapping[str, str]) -> str:
    """The apprise URL with the links as the service's "open" actions, where it has them
    (settings the person wrote in the URL win)."""
    show = links.get("show_url")
    if not show:
        return url
    scheme = scheme_of(url)
    if scheme in ("ntfy", "ntfys"):
        actions = "; ".join(f"view, {label}, {links[key]}" for label, key in
                            (("Review", "show_url"), ("Approve", "approve_url"), ("Deny", "deny_url"))
                            if links.get(key))
        # (headers are latin-1: ASCII labels; image=no: no icon URL for the server to fetch)
        return _with_params(url, {"click": show, "actions": actions, "image": "no"})
    if scheme in ("pover", "pushover"):
        return _with_params(url, {"url": show, "url_title": "Review the request"})
    return url


def body_text(summary: str, links: Mapping[str, str]) -> str:
    lines = [summary]
    if links.get("show_url"):
        lines += ["", f"Review: {links['show_url']}", f"Approve: {links.get('approve_url', '')}",
                  f"Deny: {links.get('deny_url', '')}",
                  "(Each link opens the request; nothing is answered until you press a button there.)"]
    else:
        lines += ["", "Answer with `assistant approvals show` / `approve` / `deny` on the machine that asked."]
    return "\n".join(lines)


@dataclass(frozen=True)
class Pusher:
    """Sends one request's notification to every configured apprise URL."""

    urls: tuple[str, ...]
    timeout: float = PUSH_TIMEOUT

    def send(self, summary: str, links: Mapping[str, str]) -> str | None:
        """None if every URL took the notification, else why the approver is unreachable."""
        if not self.urls:
            return None
        outcome: list[str | None] = []
        worker = threading.Thread(target=lambda: outcome.append(self._send_all(summary, links)),
                                  name="approval-push", daemon=True)
        worker.start()
        worker.join(self.timeout + 2.0)      # apprise bounds each send; this bounds them all
        if worker.is_alive() or not outcome:
            return f"push did not finish within {self.timeout:g}s"
        return outcome[0]

    def _send_all(self, summary: str, links: Mapping[str, str]) -> str | None:
        try:
            import apprise
        except ImportError:
            return "push is configured but apprise is not installed (pip install apprise)"
        body = body_text(summary, links)
        for n, url in enumerate(self.urls, 1):
            where = f"push #{n} ({scheme_of(url)}://)"
            try:
                ap = apprise.Apprise()
                if not ap.add(with_open_actions(url, links)):
                    return f"{where} is not a URL apprise can send to"
                kw = {"timeout": self.timeout} if "timeout" in inspect.signature(ap.notify).parameters else {}
                ok = ap.notify(body=body, title=TITLE, body_format=apprise.NotifyFormat.TEXT, **kw)
            except Exception as exc:       # a plugin's bug is an unreachable approver, never a crash
                return f"{where} failed ({type(exc).__name__})"
            if not ok:
                return f"{where} was not delivered"
        return None


def pusher(urls: Sequence[str], timeout: float = PUSH_TIMEOUT) -> Pusher:
    return Pusher(tuple(urls), timeout)


__all__ = ["Pusher", "body_text", "pusher", "with_open_actions", "TITLE"]
