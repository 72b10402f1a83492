"""Rulings: allow, ask or deny one {kind, target} in one run mode, with the reason.

Guards the order of the decision, which is the whole policy:
  1. an unknown kind or mode, or a target that is not valid for its kind -> deny;
  2. the cell of the ruling table (kinds.ROOT_POLICY, tightened by config) says deny -> deny,
     allow -> allow; for a session that has read untrusted content (`untrusted=True`), a memory
     write in a watched chat takes the stricter of that cell and `watched_after_untrusted`
     (kinds.after_untrusted_cell: "ask" unless the person set "allow");
  3. ask: a grant made earlier in this run, or a grant in grants.json -> allow. An unreadable
     grants.json counts as no grants (and the reason says so), never as allow;
  3b. a change signed by a device the person enrolled for sync (`device`, verified by the
     caller, assistant/sync/) -> allow, "sync from NAME": the person enrolled that device, and
     an unattended sync files no approval request per note. Only for memory (and file, for
     `[sync] files = true`); a cell the person tightened to deny still denies;
  4. still ask: if nobody can be asked (no inline asker in a watched chat, approvals.channel =
     "none" in an unattended run) -> deny with that reason; else ask, with the offers.

Pure: no I/O except reading grants.json through the GrantStore.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from policy.grants import Grant, GrantIndex, GrantsError, GrantStore, now_iso
from policy.kinds import (
    ALLOW, ASK, ASK_CHANNEL, DENY, KINDS, MODE_ALIASES, MODES, ONCE, TAINTED_KINDS, WATCHED, Cell, Offer, TargetError,
    after_untrusted_cell, policy_table, stricter,
)
from policy.match import escape


@dataclass(frozen=True)
class Ruling:
    verdict: str                  # allow | ask | deny
    reason: str
    offers: tuple[Offer, ...] = ()
    kind: str = ""
    target: str = ""              # normalised target ("" if it was invalid)
    channel: str | None = None    # for ask: "inline" (watched chat) or "out_of_band"
    grant: Grant | None = None    # the grant that allowed it, if any


@dataclass
class Session:
    """One run: its id, grants made for the rest of it, and where grants/config come from.

    `channel` is approvals.channel ("inbox" | "none"); `inline` says whether a watched chat has
    someone to ask inline. Both decide whether an `ask` has a reachable approver.
    """

    run_id: str
    grants: GrantStore | None = None
    policy: Mapping[str, object] | None = None
    channel: str = "inbox"
    inline: bool = False
    _run_grants: GrantIndex = field(default_factory=GrantIndex, repr=False)
    _table: dict = field(default_factory=dict, repr=False)
    _after_untrusted: Cell | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._table = policy_table(self.policy)   # PolicyConfigError on a bad [policy]
        self._after_untrusted = after_untrusted_cell(self.policy)

    def cell(self, kind: str, mode: str, *, untrusted: bool = False) -> Cell:
        """The table's cell; for a session that has read untrusted content, a memory write in a
        watched chat is ruled by the stricter of it and `watched_after_untrusted`."""
        cell = self._table[(kind, mode)]
        if untrusted and kind in TAINTED_KINDS and mode == WATCHED and self._after_untrusted is not None:
            return stricter(cell, self._after_untrusted)
        return cell

    def grant_for_run(self, kind: str, target: str) -> Grant:
        """Allow this exact (normalised) target for the rest of this run."""
        grant = Grant(kind, escape(target), now_iso(), f"run {self.run_id}")
        self._run_grants.add(grant)
        return grant

    def run_grant(self, kind: str, target: str) -> Grant | None:
        return self._run_grants.find(kind, target)


def _reachable(session: Session, channel: str) -> str | None:
    """None if someone can be asked on this channel, else why not."""
    if channel == "inline":
        return None if session.inline else "nobody to ask inline in this chat"
    if session.channel != "inbox":
        return f"approvals.channel is {session.channel!r}, so nobody can be asked"
    return None


SYNC_KINDS = ("memory", "file")     # what a device's signed change may write (3b)
_DEVICE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def decide(kind: str, target: str, mode: str, session: Session | None = None, *,
           untrusted: bool = False, device: str | None = None) -> Ruling:
    """The ruling for one call. Never raises for bad input: that is a deny with the reason.

    `mode` is "watched" or "unattended" (the table's own words "watched chat" / "unattended
    run", and "chat" / "run" after the commands, name the same two). `session` is the run's
    Session; None is a session holding nothing (no run grants, no grants.json, the inbox
    channel, a person in a watched chat to ask inline: the bare ruling table). Anything else
    is a deny, never a crash or an allow. `untrusted`: this session has read untrusted content
    (a fetched page, a file of the mount, a flagged note); it only ever tightens the ruling.
    """
    if session is None:
        session = Session("this-run", inline=True)
    elif not isinstance(session, Session):
        return Ruling(DENY, f"invalid session: expected a policy.engine.Session, got {type(session).__name__}",
                      kind=str(kind))
    spec = KINDS.get(kind) if isinstance(kind, str) else None
    if spec is None:
        return Ruling(DENY, f"unknown kind {kind!r} (known: {', '.join(KINDS)})", kind=str(kind))
    if isinstance(mode, str):
        mode = MODE_ALIASES.get(mode, mode)
    if not isinstance(mode, str) or mode not in MODES:
        return Ruling(DENY, f"unknown run mode {mode!r} (known: {', '.join(MODES)})", kind=kind)
    try:
        norm = spec.normalise(target)
    except TargetError as exc:
        return Ruling(DENY, f"invalid target: {exc}", kind=kind)

    cell = session.cell(kind, mode, untrusted=untrusted is not False)
    if cell.verdict == DENY:
        return Ruling(DENY, cell.why, kind=kind, target=norm)
    if device is not None:
        if (not isinstance(device, str) or not 0 < len(device) <= 64 or not set(device) <= _DEVICE_CHARS
                or kind not in SYNC_KINDS):
            return Ruling(DENY, f"a sync change may write only {' or '.join(SYNC_KINDS)}, from a device "
                          "with a valid name", kind=kind, target=norm)
        return Ruling(ALLOW, f"sync from {device}", kind=kind, target=norm)
    if cell.verdict == ALLOW:
        return Ruling(ALLOW, cell.why, kind=kind, target=norm)

    granted = session.run_grant(kind, norm)
    if granted is not None:
        return Ruling(ALLOW, f"granted earlier in run {session.run_id} ({kind} {granted.target})",
                      kind=kind, target=norm, grant=granted)
    note = ""
    if session.grants is not None:
        try:
            granted = session.grants.matches(kind, norm)
        except GrantsError as exc:
            note = f"; grants.json unreadable, treated as no grants: {exc}"
        else:
            if granted is not None:
                return Ruling(ALLOW, f"grants.json grants {kind} {granted.target}",
                              kind=kind, target=norm, grant=granted)

    channel = ASK_CHANNEL[mode]
    unreachable = _reachable(session, channel)
    if unreachable:
        return Ruling(DENY, f"{cell.why}, but no approver is reachable: {unreachable}{note}",
                      kind=kind, target=norm)
    return Ruling(ASK, f"{cell.why}{note}", offers=spec.offers(norm),
                  kind=kind, target=norm, channel=channel)


def person_must_answer(ruling: Ruling, mode: str, session: Session, why: str) -> Ruling:
    """`ruling` for a call nothing may allow but a person's answer, this once (a memory change a
    reflection proposes, assistant.agent.reflection): deny stays deny; allow (by the table or a
    grant) and ask become ask, offering only this call, on the mode's channel; nobody to ask is a
    deny. `why` is added to the reason."""
    if ruling.verdict == DENY:
        return ruling
    if ruling.verdict not in (ALLOW, ASK):
        return Ruling(DENY, f"unknown verdict {ruling.verdict!r}", kind=ruling.kind, target=ruling.target)
    spec = KINDS.get(ruling.kind)
    if spec is None or not ruling.target:
        return Ruling(DENY, f"unknown kind {ruling.kind!r} or no target", kind=ruling.kind, target=ruling.target)
    mode = MODE_ALIASES.get(mode, mode)
    if mode not in MODES:
        return Ruling(DENY, f"unknown run mode {mode!r}", kind=ruling.kind, target=ruling.target)
    reason = f"{why} ({ruling.reason})"
    unreachable = _reachable(session, ASK_CHANNEL[mode])
    if unreachable:
        return Ruling(DENY, f"{reason}, but no approver is reachable: {unreachable}",
                      kind=ruling.kind, target=ruling.target)
    once = tuple(o for o in spec.offers(ruling.target) if o.scope == ONCE)
    return Ruling(ASK, reason, offers=once, kind=ruling.kind, target=ruling.target, channel=ASK_CHANNEL[mode])


__all__ = ["Ruling", "Session", "decide", "person_must_answer", "SYNC_KINDS", "ALLOW", "ASK", "DENY"]
