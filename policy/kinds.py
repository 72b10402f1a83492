"""The capability kinds: what a target looks like, who decides, and how far an approval may widen.

Guards the ruling table. A reviewer should be able to check this file against DESIGN.md line
by line:

    | kind           | watched chat | unattended run      |
    |----------------|--------------|---------------------|
    | memory (write) | allow        | ask (out of band)   |
    | file (write)   | allow        | allow (configurable)|
    | net            | ask (inline) | ask (out of band)   |

A person may tighten any cell in config.toml `[policy]` (allow -> ask -> deny), never loosen
one: a loosening cell is a `PolicyConfigError`, not a silent default. Only a grant turns an
`ask` into `allow`.

After untrusted content (a fetched page, a file of the mount, a flagged note): a session that
has read it rules a memory write in a watched chat by the stricter of its cell and
`watched_after_untrusted` ("ask" by default, or "allow"; `after_untrusted_cell`). It can only
tighten the table, never loosen it: `memory_watched = "ask"` asks whatever this key says.

Approval offers (`offers()`): once; the rest of this run; always this exact target; and
always its containing directory -- exactly one widening step, never `*`, never `**`, never a
grandparent, and none for a target at the root (that would be the whole store / mount). For a
host, the wider offer is its parent domain's subdomains, and none where that wildcard would sit
at or above a registrable domain by the Public Suffix List (policy/hosts.py).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Callable, Mapping

from policy.hosts import may_wildcard
from policy.match import escape
from policy.paths import PathGrammarError
from policy.paths import check as check_path

ALLOW, ASK, DENY = "allow", "ask", "deny"
VERDICTS = (ALLOW, ASK, DENY)
WATCHED, UNATTENDED = "watched", "unattended"
MODES = (WATCHED, UNATTENDED)
Mode = str  # "watched" | "unattended"
# Other spellings of the two modes: the ruling table's column headings and the commands.
MODE_ALIASES = {"watched chat": WATCHED, "chat": WATCHED,
                "unattended run": UNATTENDED, "run": UNATTENDED}

# ---------------------------------------------------------------- the ruling table
ROOT_POLICY: dict[str, dict[str, str]] = {
    #            watched chat   unattended run
    "memory": {WATCHED: ALLOW, UNATTENDED: ASK},
    "file":   {WATCHED: ALLOW, UNATTENDED: ALLOW},
    "net":    {WATCHED: ASK,   UNATTENDED: ASK},
}
_MODE_TEXT = {WATCHED: "a watched chat", UNATTENDED: "an unattended run"}
# Who is asked when the ruling is `ask`: the person in the chat, or the inbox.
ASK_CHANNEL = {WATCHED: "inline", UNATTENDED: "out_of_band"}

# Strictness order for tightening: a config cell may only move right.
_STRICTNESS = {ALLOW: 0, ASK: 1, DENY: 2}

# A memory write in a watched chat once the session has read untrusted content: the root's
# answer, and the one [policy] key that may change it ("ask" or "allow"; never "deny": a chat
# that could no longer save anything after reading a page would be a person's
# `memory_watched = "deny"`).
AFTER_UNTRUSTED_KEY = "watched_after_untrusted"
AFTER_UNTRUSTED_ROOT = ASK
AFTER_UNTRUSTED_VALUES = (ASK, ALLOW)
# Which kinds the mark tightens: what persists into later sessions (memory poisoning).
TAINTED_KINDS = ("memory",)

# ---------------------------------------------------------------- approval offers
ONCE, RUN, EXACT, DIR = "once", "run", "exact", "dir"
SCOPES = (ONCE, RUN, EXACT, DIR)
DURABLE = (EXACT, DIR)           # these are written to grants.json


class TargetError(ValueError):
    """A target that is not valid for its kind. The message says which part and why."""


class PolicyConfigError(ValueError):
    """A [policy] cell in config.toml that is unknown, malformed, or would loosen the root policy."""


@dataclass(frozen=True)
class Offer:
    """One way to approve: scope (once|run|exact|dir) and the grant pattern it would record."""

    scope: str
    pattern: str
    label: str

    @property
    def target(self) -> str:
        """The grant target this offer would record (same as pattern)."""
        return self.pattern

    def as_dict(self) -> dict[str, str]:
        return {"scope": self.scope, "pattern": self.pattern, "label": self.label}


# ---------------------------------------------------------------- target forms

def _check_relpath(target: object, what: str) -> str:
    """A model-facing path by the one grammar (policy.paths), kept exactly as given."""
    try:
        check_path(target)
    except PathGrammarError as exc:
        raise TargetError(f"{what} refused: {exc}") from None
    return target  # type: ignore[return-value]  (check_path accepted a str)


def memory_target(target: object) -> str:
    path = _check_relpath(target, "memory path")
    if not path.endswith(".md"):
        raise TargetError(f"memory path {path!r} must end in .md (notes are markdown)")
    return path


def file_target(target: object) -> str:
    return _check_relpath(target, "file path")


_LABEL = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$")
_PORT = re.compile(r"^[0-9]{1,5}$")


def _split_hostport(target: str) -> tuple[str, str | None]:
    if target.startswith("["):
        end = target.find("]")
        if end < 0:
            raise TargetError(f"net target {target!r}: unclosed [ in an IPv6 address")
        host, rest = target[1:end], target[end + 1:]
        if rest and not rest.startswith(":"):
            raise TargetError(f"net target {target!r}: expected :port after ]")
        try:
            host = ipaddress.IPv6Address(host).compressed
        except ValueError:
            raise TargetError(f"net target {target!r}: {host!r} is not an IPv6 address") from None
        return f"[{host}]", rest[1:] if rest else None
    if target.count(":") > 1:
        raise TargetError(f"net target {target!r}: write an IPv6 address in brackets, e.g. [::1]:8080")
    host, sep, port = target.partition(":")
    return host, port if sep else None


def net_target(target: object) -> str:
    """`host` or `host:port`: lower-cased, IDNA-encoded, trailing dot dropped, port canonical."""
    if not isinstance(target, str):
        raise TargetError(f"net target must be a string, got {type(target).__name__}")
    if not target or target != target.strip() or any(c.isspace() for c in target):
        raise TargetError(f"net target {target!r} is empty or contains whitespace")
    if "/" in target or "@" in target or "\\" in target:
        raise TargetError(f"net target {target!r} must be host or host:port, not a URL")
    host, port = _split_hostport(target)
    if port is not None:
        if not _PORT.match(port) or not 1 <= int(port) <= 65535:
            raise TargetError(f"net target {target!r}: port must be a number from 1 to 65535")
        port = str(int(port))
    if not host.startswith("["):
        if host.endswith("."):
            host = host[:-1]   # the root label: example.com. is example.com
        try:
            host = host.encode("idna").decode("ascii").lower() if not host.isascii() else host.lower()
        except UnicodeError:
            raise TargetError(f"net target {target!r}: host is not a valid international name") from None
        if len(host) > 253 or not host:
            raise TargetError(f"net target {target!r}: host name is empty or longer than 253 characters")
        labels = host.split(".")
        if not all(_LABEL.match(label) for label in labels):
            raise TargetError(f"net target {target!r}: {host!r} is not a valid host name")
    return f"{host}:{port}" if port else host


# ---------------------------------------------------------------- widening rules
def path_parent(target: str) -> str | None:
    """`people/lina.md` -> `people/*`; a target at the root has no wider offer."""
    head, sep, _leaf = target.rpartition("/")
    return escape(head) + "/*" if sep else None


_NUMBER_LABEL = re.compile(r"^(?:[0-9]+|0x[0-9a-f]*)$")


def net_parent(target: str) -> str | None:
    """`api.example.com[:port]` -> `*.example.com[:port]`. None for IPs, and wherever the
    wildcard would sit at or above a registrable domain by the Public Suffix List (private
    section included): `alice.github.io` gets no `*.github.io`, `example.com` no `*.com`,
    `www.example.co.uk` gets `*.example.co.uk` but `example.co.uk` never `*.co.uk`."""
    if target.startswith("["):
        return None   # an IPv6 address has no parent
    host, _, port = target.partition(":")
    labels = host.split(".")
    if all(label.isdigit() for label in labels):
        return None   # an IPv4 address has no parent
    if _NUMBER_LABEL.match(labels[-1]):
        # evil.0.0.1: no DNS name ends in a number (URL parsers read such a host as IPv4), and
        # *.0.0.1 would match the address 127.0.0.1 (and every a.0.0.1)
        return None
    parent = ".".join(labels[1:])
    if not parent or not may_wildcard(parent):
        return None   # *.com, *.co.uk, *.github.io: every stranger under a shared suffix
    pattern = "*." + escape(parent)
    return f"{pattern}:{port}" if port else pattern


@dataclass(frozen=True)
class Kind:
    name: str
    target_form: str
    normalise: Callable[[object], str]
    parent: Callable[[str], str | None]
    parent_label: str

    def offers(self, target: str) -> tuple[Offer, ...]:
        """The approval offers for a normalised target, narrowest first."""
        exact = escape(target)
        out = [
            Offer(ONCE, exact, "this call only"),
            Offer(RUN, exact, "the rest of this run"),
            Offer(EXACT, exact, f"always {target}"),
        ]
        wider = self.parent(target)
        if wider is not None:
            out.append(Offer(DIR, wider, f"always {wider} ({self.parent_label})"))
        return tuple(out)


KINDS: dict[str, Kind] = {
    "memory": Kind("memory", "memory-relative note path, e.g. people/lina.md",
                   memory_target, path_parent, "its folder, not below it"),
    "file": Kind("file", "path under the file mount, e.g. reports/week.txt",
                 file_target, path_parent, "its folder, not below it"),
    "net": Kind("net", "host or host:port, e.g. example.com:443",
                net_target, net_parent, "every subdomain"),
}


def offers(kind: str, target: str) -> tuple[Offer, ...]:
    """The approval offers for a target of a kind (validated and normalised first)."""
    spec = KINDS[kind]
    return spec.offers(spec.normalise(target))


# ---------------------------------------------------------------- config tightening
@dataclass(frozen=True)
class Cell:
    verdict: str
    why: str      # "root policy" or "config.toml [policy] memory_unattended = \"deny\""


def stricter(a: Cell, b: Cell) -> Cell:
    """The stricter of two cells (a, the first, on a tie)."""
    return b if _STRICTNESS[b.verdict] > _STRICTNESS[a.verdict] else a


def after_untrusted_cell(config_policy: Mapping[str, object] | None) -> Cell:
    """The ruling of a memory write in a watched chat once the session has read untrusted
    content, before the table's own cell is weighed against it (engine.decide takes the
    stricter). PolicyConfigError for a value other than "ask" or "allow"."""
    value = config_policy.get(AFTER_UNTRUSTED_KEY) if isinstance(config_policy, Mapping) else None
    if value is None:
        return Cell(AFTER_UNTRUSTED_ROOT, f"root policy for memory in a watched chat that has read untrusted "
                                          f"content is {AFTER_UNTRUSTED_ROOT} (policy.{AFTER_UNTRUSTED_KEY})")
    if value not in AFTER_UNTRUSTED_VALUES:
        raise PolicyConfigError(f"config.toml: policy.{AFTER_UNTRUSTED_KEY} must be \"ask\" or \"allow\", "
                                f"got {value!r}")
    return Cell(str(value), f"config.toml sets policy.{AFTER_UNTRUSTED_KEY} = {value!r} and this chat "
                            "has read untrusted content")


def policy_table(config_policy: Mapping[str, object] | None) -> dict[tuple[str, str], Cell]:
    """The effective ruling table: ROOT_POLICY with the person's tightenings applied."""
    table = {
        (kind, mode): Cell(verdict, f"root policy for {kind} in {_MODE_TEXT[mode]} is {verdict}")
        for kind, row in ROOT_POLICY.items()
        for mode, verdict in row.items()
    }
    if config_policy is None:
        return table
    if not isinstance(config_policy, Mapping):
        raise PolicyConfigError("config.toml: [policy] must be a table")
    # Flat keys (`memory_unattended = "deny"`) or a table per kind (`[policy.memory]
    # unattended = "deny"`); a mode may be spelled as in the table ("watched_chat",
    # "unattended_run") or after the commands ("chat", "run").
    after_untrusted_cell(config_policy)     # its own rule (PolicyConfigError for a bad value)
    settings: list[tuple[str, str, str, object]] = []
    for key, value in config_policy.items():
        if key == AFTER_UNTRUSTED_KEY:
            continue
        if isinstance(value, Mapping):
            for sub, v in value.items():
                settings.append((f"{key}.{sub}", str(key), str(sub), v))
        else:
            kind, _, mode = str(key).partition("_")
            settings.append((str(key), kind, mode, value))
    for key, kind, mode, value in settings:
        mode = MODE_ALIASES.get(mode.replace("_", " "), mode)
        if (kind, mode) not in table:
            known = ", ".join([*(f"{k}_{m}" for k, m in table), AFTER_UNTRUSTED_KEY])
            raise PolicyConfigError(f"config.toml: unknown setting policy.{key} (known: {known})")
        if value not in VERDICTS:
            raise PolicyConfigError(
                f"config.toml: policy.{key} must be \"allow\", \"ask\" or \"deny\", got {value!r}"
            )
        root = table[(kind, mode)].verdict
        if _STRICTNESS[str(value)] < _STRICTNESS[root]:
            raise PolicyConfigError(
                f"config.toml: policy.{key} = {value!r} would loosen the root policy ({root!r}); "
                f"a cell may only be tightened (allow -> ask -> deny); approve with a grant instead"
            )
        table[(kind, mode)] = Cell(str(value), f"config.toml sets policy.{key} = {value!r}")
    return table
