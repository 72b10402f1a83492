"""The Host header values the approval page answers to (its guard against DNS rebinding).

Below both the page (assistant.web.app, which checks every request's Host against a HostRule)
and the server (assistant.web.server, which builds the rule from where it listens): neither
imports the other for it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass


@dataclass(frozen=True)
class HostRule:
    """The Host header values (name part, lower case) this server answers to: `names`, and with
    `ip_literals` any numeric IP address too (a wildcard bind: its addresses are not known, and a
    DNS-rebinding page always presents a host NAME, never the IP its name points to)."""

    names: frozenset[str]
    ip_literals: bool = False

    def allows(self, host: str) -> bool:
        if host in self.names:
            return True
        if not self.ip_literals:
            return False
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return False
        return True


__all__ = ["HostRule"]
