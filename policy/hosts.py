"""Registrable domains, from the Public Suffix List: how far a net grant may widen.

Guards the "every subdomain" offer of a net approval. A wildcard may only sit *below* a
registrable domain (`*.example.co.uk` for `www.example.co.uk`), never at or above one: a
grant for `*.github.io`, `*.herokuapp.com` or `*.co.uk` would cover every stranger's site
under a shared suffix. Which names are shared suffixes is not guessable from their shape, so
the answer comes from the Public Suffix List, ICANN and private sections both, as shipped
(offline, inside the wheel) by the maintained `publicsuffixlist` package. Unknown top-level
names count as public suffixes (the list's default rule `*`).

Fails closed: if the list cannot be loaded, no name is registrable, so no wildcard is offered.
"""

from __future__ import annotations

import functools
import threading

_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def _psl():
    with _LOCK:
        try:
            from publicsuffixlist import PublicSuffixList
        except ImportError:
            return None
        try:
            # accept_unknown: an unknown TLD is itself a public suffix (PSL's "*" rule);
            # only_icann=False: the private section (github.io, pages.dev, ...) counts too.
            return PublicSuffixList(accept_unknown=True, only_icann=False)
        except Exception:
            return None


def registrable_domain(host: str) -> str | None:
    """The registrable domain (public suffix + one label) of an ASCII host name, or None if
    `host` is itself a public suffix (or above one), or the list is unavailable."""
    psl = _psl()
    if psl is None or not host:
        return None
    try:
        return psl.privatesuffix(host.lower().rstrip("."))
    except Exception:
        return None


def may_wildcard(domain: str) -> bool:
    """May `*.domain` be offered? Only if `domain` is a registrable domain or a name under one."""
    return registrable_domain(domain) is not None


__all__ = ["registrable_domain", "may_wildcard"]
