"""The summary a web_fetch approval request carries: the URL as it will be sent, in full, and
the name of the vault secret it would send (never its value).

Guards "the person sees what leaves before deciding": the one format written by web_fetch and
read back by the approval page (assistant.web.pages) lives here, so the page can show the URL's
parts (scheme, host, port, path, query) above its Approve button instead of only the host. A
URL never holds a space (web_fetch refuses characters below 33), so the first space ends it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = "web_fetch "
_SECRET = re.compile(r"^ \(with vault secret ([A-Za-z0-9][A-Za-z0-9_.-]{0,63})\)$")


@dataclass(frozen=True)
class FetchSummary:
    """What a net request is about: the URL sent, and the vault secret's NAME sent with it
    as a bearer token (None: no secret)."""

    url: str
    secret: str | None = None

    def text(self) -> str:
        return PREFIX + self.url + (f" (with vault secret {self.secret})" if self.secret else "")


def parse(summary: str) -> FetchSummary | None:
    """The summary web_fetch wrote, or None if `summary` is not one (then show it as it is)."""
    if not summary.startswith(PREFIX):
        return None
    url, space, rest = summary[len(PREFIX):].partition(" ")
    if not url:
        return None
    if not space:
        return FetchSummary(url)
    m = _SECRET.match(" " + rest)
    return FetchSummary(url, m.group(1)) if m else None


__all__ = ["FetchSummary", "PREFIX", "parse"]
