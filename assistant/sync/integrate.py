"""Incoming: an enrolled device's new commits, verified, then each note change checked like a write.

Guards what a remote or another device can make this device believe. In this order:
  1. the branch's new head must descend from the one last integrated (a rolled-back or
     rewritten branch is refused and named);
  2. every new commit must be a plain commit (one parent) signed by that device's enrolled key
     over (name, tree, parent): one unknown or bad signature refuses the branch's changes whole
     (audited); other devices still sync;
  3. a journal (state/sync/journal.json) names the integration before anything is applied;
     applying is idempotent (a note already as it should be is left alone, a version already
     logged is not logged again), so an interrupted sync is completed by the next one;
  4. per note: base (the device's text at the last integrated head), local, remote -> nothing,
     the remote text, a clean 3-way merge, or a conflict (local stays, remote kept as a conflict
     version in history); a removal against an edit keeps the edit; a remote text that is
     exactly what this device last sent of the note, on a branch with no version of it made on
     that device, is an echo of this device's own: this device's removal or edit since stands;
  5. each change lands through the memory writer (path grammar, size cap, this device's leak
     scanner, the gate: "sync from NAME", the confined atomic write, history, audit) with
     source `device:NAME`; one that fails a check is kept aside (state/sync/aside.json names it;
     its bytes stay in the sync repository) and nothing of it enters memory/ or history/;
  6. a tombstone drops every version of its path made before it, those arriving with it
     included, and the text a write or removal of that path here replaces is not kept as one.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from policy.audit import timestamp
from policy.gate import Decision, Gate

from assistant.notes.history import DEVICE_NAME, History, HistoryError, Origin, Version, parse_time, valid_source
from assistant.notes.store import Memory
from assistant.notes.writer import Busy, Conflict, NotFound, Refused
from assistant.gating.context import AuditSink
from assistant.secrets.scanner import Scanner
from assistant.sync.export import EVENTS, NOTES, VERSIONS, blob_id, last_sent
from assistant.sync.git import Git
from assistant.sync.keys import verify
from assistant.sync.merge import merge3
from assistant.sync.state import SyncState

__all__ = ["DeviceCall", "Integration", "integrate_device", "refuse_device", "check_signatures", "commits_between",
           "changed_entries", "audit_line", "unsecret", "SPLIT_SECRET_NAME", "REMOTE_PREFIX"]

REMOTE_PREFIX = "refs/remotes/sync/devices/"
REGULAR_MODES = (b"100644", b"100755")      # a note is a regular file in the device's tree


class DeviceCall:
    """A sync change's authority: the policy Gate, asked with the enrolled device's name (engine
    step 3b: "sync from NAME"). Never cancelled: a sync waits for its own writes."""

    def __init__(self, gate: Gate, device: str) -> None:
        self.gate = gate
        self.device = device

    def authorize(self, kind: str, target: str, *, content: bytes | None = None, current: bytes | None = None,
                  summary: str = "", url: str | None = None) -> Decision:
        return self.gate.authorize(kind, target, content=content, current=current,
                                   summary=f"{summary} (sync from {self.device})", url=url, device=self.device)

    def cancelled(self) -> bool:
        return False

    def commit(self) -> bool:
        return True


@dataclass
class Integration:
    """What integrating one device's branch did."""

    device: str
    head: str | None = None
    refused: str | None = None              # why the whole branch was refused
    written: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    aside: list[tuple[str, str]] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    retry: list[str] = field(default_factory=list)   # changed meanwhile: the next sync retries
    warning: str | None = None
    check_seconds: float = 0.0


def commits_between(git: Git, old: str | None, new: str) -> list[tuple[str, str, list[str], str]]:
    """(id, tree, parents, message) of each commit in old..new, oldest first."""
    ids = git.out("rev-list", "--reverse", new, *([f"^{old}"] if old else [])).split()
    if not ids:
        return []
    _, raw = git.run(["cat-file", "--batch"], input="".join(i + "\n" for i in ids).encode())
    found = []
    pos = 0
    for cid in ids:
        nl = raw.index(b"\n", pos)
        size = int(raw[pos:nl].split(b" ")[2])
        body = raw[nl + 1:nl + 1 + size].decode("utf-8", "replace")
        pos = nl + 1 + size + 1
        head, _, message = body.partition("\n\n")
        tree, parents = "", []
        for line in head.split("\n"):
            if line.startswith("tree "):
                tree = line[5:]
            elif line.startswith("parent "):
                parents.append(line[7:])
        found.append((cid, tree, parents, message))
    return found


def _trailer(message: str, name: str) -> str | None:
    values = [line[len(name) + 2:] for line in message.split("\n") if line.startswith(f"{name}: ")]
    return values[0].strip() if len(values) == 1 else None


def check_signatures(commits: list[tuple[str, str, list[str], str]], device: str, key: bytes) -> str | None:
    """None if every commit (of `commits_between`) is a plain commit signed by `device`'s key; else why not."""
    for cid, tree, parents, message in commits:
        if len(parents) > 1:
            return f"commit {cid[:12]} is a merge; a device's branch holds only its own signed commits"
        parent = parents[0] if parents else None
        if _trailer(message, "Sync-Device") != device:
            return f"commit {cid[:12]} is not signed as {device}"
        sig = _trailer(message, "Sync-Signature")
        if sig is None or not verify(key, device, tree, parent, sig):
            return f"commit {cid[:12]} has no valid signature by {device}'s enrolled key"
    return None


def _entries(git: Git, commit: str, prefix: str) -> dict[bytes, str]:
    """name (below PREFIX, as bytes) -> blob id of every file under PREFIX in COMMIT (one ls-tree)."""
    _, raw = git.run(["ls-tree", "-r", "-z", commit, "--", prefix])
    found = {}
    for item in raw.split(b"\0"):
        head, tab, name = item.partition(b"\t")
        parts = head.split(b" ")
        if tab and len(parts) == 3 and parts[1] == b"blob" and name.startswith(prefix.encode()):
            found[name[len(prefix):]] = parts[2].decode()
    return found


def changed_entries(git: Git, old: str | None, new: str, prefix: str = NOTES, noun: str = "note"
                    ) -> tuple[dict[str, tuple[str | None, str | None]], list[tuple[str, str]]]:
    """({path below PREFIX: (blob id at OLD or None, blob id at NEW or None)} of the entries
    whose bytes differ between the two commits, [(name, why)] of those that are no note (or no
    file of files/, PREFIX `files/`): not a regular file (a symbolic link, a submodule) or not
    UTF-8 (shown escaped, never used as paths)). Blob ids come from the trees themselves (no
    lookup by path)."""
    changed: dict[bytes, tuple[str | None, str | None]] = {}
    odd: set[bytes] = set()
    if old:
        _, raw = git.run(["diff-tree", "-r", "-z", "--no-renames", old, new, "--", prefix])
        items = raw.split(b"\0")
        for head, name in zip(items[0::2], items[1::2]):
            parts = head.split(b" ")
            if len(parts) < 5 or not name.startswith(prefix.encode()):
                continue
            a, b = parts[2].decode(), parts[3].decode()
            if parts[1] not in REGULAR_MODES and set(b) != {"0"}:
                odd.add(name[len(prefix):])      # a symbolic link or a submodule: never a note
                continue
            changed[name[len(prefix):]] = (None if set(a) == {"0"} or parts[0][1:] not in REGULAR_MODES else a,
                                          None if set(b) == {"0"} else b)
    else:
        _, raw = git.run(["ls-tree", "-r", "-z", new, "--", prefix])
        for item in raw.split(b"\0"):
            head, tab, name = item.partition(b"\t")
            parts = head.split(b" ")
            if not tab or len(parts) != 3 or not name.startswith(prefix.encode()):
                continue
            if parts[0] in REGULAR_MODES and parts[1] == b"blob":
                changed[name[len(prefix):]] = (None, parts[2].decode())
            else:
                odd.add(name[len(prefix):])
    good: dict[str, tuple[str | None, str | None]] = {}
    bad = []
    for name in sorted(odd):
        try:
            shown = name.decode("utf-8")
        except UnicodeDecodeError:
            shown = repr(name)[2:-1]
        bad.append((shown, f"it is a symbolic link or a submodule in the device's commit, not a {noun} file"))
    for name, oids in changed.items():
        try:
            good[name.decode("utf-8")] = oids
        except UnicodeDecodeError:
            bad.append((repr(name)[2:-1], "its name is not UTF-8 text"))
    return good, sorted(bad)


def _events(git: Git, commits: list[str]) -> list[tuple[str, dict]]:
    """(commit, event) of every event in these commits, oldest first; malformed ones skipped."""
    blobs = git.blobs([f"{c}:{EVENTS}" for c in commits], limit=64 * 1024 * 1024)
    found = []
    for c in commits:
        raw = blobs.get(f"{c}:{EVENTS}")
        if not isinstance(raw, bytes):
            continue
        for line in raw.decode("utf-8", "replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and isinstance(event.get("path"), str):
                found.append((c, event))
    return found


def _seen_key(v: Version) -> tuple:
    """What makes an imported version the same one again (a re-run integration logs nothing
    twice). A conflict version is the same whatever time it was given: its bytes from that device."""
    return (v.device, v.path, "" if v.conflict else v.time, v.sha256, v.conflict)


def _imported(history: History, device: str, path: str, data: bytes | None, event: dict,
              *, conflict: bool = False) -> Version:
    """The version of another device, as this device's history logs it: its origin's source,
    run, approval and sources, its time, plus `device`; re-keyed (this workspace's revision)."""
    source = event.get("source")
    if not isinstance(source, str) or not valid_source(source) or source.startswith("device:"):
        source = "person"
    def text(key: str) -> str:
        v = event.get(key)
        return v if isinstance(v, str) else ""
    def opt(key: str) -> str | None:
        v = event.get(key)
        return v if isinstance(v, str) else None
    sources = event.get("sources")
    sources = tuple(s for s in sources if isinstance(s, str)) if isinstance(sources, list) else ()
    removed = event.get("removed") is True and data is None
    v = history.make_version(path, data or b"", Origin(source, model=text("model"), sources=sources),
                             run=text("run"), removed=removed)
    when = text("time")
    try:
        parse_time(when)
    except (ValueError, OverflowError):
        when = v.time                   # not a time of history's format: the time it arrived
    return replace(v, time=when, approval=opt("approval"), scope=opt("scope"),
                   grant=opt("grant"), device=device, imported=True, conflict=conflict,
                   source="removal" if removed else source)


def refuse_device(state: SyncState, audit: AuditSink | None, device: str, head: str | None, reason: str,
                  result: Integration | None = None) -> Integration:
    """Refuse a device's branch whole: audited (`sync_refused`), named in refused.json."""
    result = result or Integration(device, head=head)
    result.refused = reason
    audit_line(audit, {"event": "sync_refused", "device": device, "head": head, "reason": reason})
    refused = state.mapping("refused.json")
    refused[device] = {"head": head, "reason": reason, "time": timestamp()}
    state.write("refused.json", refused)
    return result


def integrate_device(*, git: Git, state: SyncState, memory: Memory, history: History, gate: Gate,
                     audit: AuditSink | None, scanner: Scanner, device: str, key: bytes, new: str | None,
                     scratch, on_changed: Callable[[list[str]], None] | None = None) -> Integration:
    """Integrate one enrolled device's branch up to NEW, its head as fetched (None: no branch)."""
    result = Integration(device)
    started = time.monotonic()
    if DEVICE_NAME(device) is None:
        result.refused = f"{device!r} is not a device name"
        return result
    integrated = state.mapping("integrated.json")
    old = integrated.get(device)
    result.head = new
    if new is None or new == old:
        return result
    if old and not git.is_ancestor(old, new):
        result.refused = (f"{device}'s branch was rewritten or rolled back: its head {new[:12]} does not "
                          f"descend from {old[:12]}, the last one integrated; nothing of it was taken")
    else:
        listed = commits_between(git, old, new)
        result.refused = check_signatures(listed, device, key)
    if result.refused:
        refuse_device(state, audit, device, new, result.refused, result)
        result.check_seconds = time.monotonic() - started
        return result

    state.write("journal.json", {"device": device, "from": old, "to": new, "time": timestamp()})
    commits = [c for c, *_ in listed]
    events = _events(git, commits)
    changes, undecodable = changed_entries(git, old, new)
    result.aside.extend(undecodable)
    paths: list[str] = []
    for path in sorted(changes):        # every name is checked before anything is done by it
        try:
            memory.check_path(path)
            paths.append(path)
        except Refused as exc:
            result.aside.append((path, str(exc)))
    limit = memory.max_note_bytes
    vers: dict[tuple[str, int], str] = {}      # (commit, n) -> blob id of sync/versions/<n>
    for c in {c for c, e in events if e.get("op") == "version"}:
        for name, oid in _entries(git, c, VERSIONS).items():
            if name.isdigit():
                vers[(c, int(name))] = oid
    wanted = {oid for p in paths for oid in changes[p] if oid} | set(vers.values())
    blobs = git.blobs(sorted(wanted), limit=limit)
    seen = {_seen_key(v) for v in history.versions() if v.imported}
    before_aside = state.listing("aside.json")
    aside = {(a.get("device"), a.get("path")): a for a in before_aside if isinstance(a, dict)}
    call = DeviceCall(gate, device)
    origin = Origin(f"device:{device}")
    sent = last_sent(state.mapping("exported.json"))     # path -> sha256 of what this device last sent
    changed: list[str] = []
    logged: list[tuple[Version, bytes | None]] = []

    # tombstones: `memory forget` on the device drops the note's versions here too, once: a
    # tombstone already applied (this commit, this path) is never applied again, so integrating
    # the branch from its root again (the device enrolled anew) drops nothing made since
    applied = state.mapping("forgotten.json")
    done = set(applied.get(device, []))
    for c, e in events:
        if e.get("op") == "forget":
            path = e["path"]
            if f"{c} {path}" in done:
                continue
            try:
                path = memory.check_path(path)
                with memory.writers_lock():
                    history.forget(path)
                result.forgotten.append(path)
                done.add(f"{c} {e['path']}")
                audit_line(audit, {"event": "sync_forgot", "device": device, "target": path})
            except (Refused, HistoryError, OSError, TimeoutError) as exc:
                result.aside.append((path, f"its tombstone could not be applied: {exc}"))
    # a version sent before a tombstone of its path but taken with it is forgotten too: only the
    # versions after the path's last tombstone (in the order the device made them) are logged
    last_forget = {e["path"]: i for i, (_, e) in enumerate(events) if e.get("op") == "forget"}

    for path in paths:
        try:
            npath = memory.check_path(path)
        except Refused as exc:
            result.aside.append((path, str(exc)))
            continue
        base_id, remote_id = changes[path]
        base = blobs.get(base_id) if base_id else None
        remote = blobs.get(remote_id) if remote_id else None
        if isinstance(remote, int) or isinstance(base, int):
            result.aside.append((npath, f"it is larger than memory.max_note_bytes ({limit} bytes)"))
            continue
        mine = [(c, e) for i, (c, e) in enumerate(events)
                if e.get("op") == "version" and e.get("path") == path and i > last_forget.get(path, -1)]
        if remote is not None and not mine and sent.get(npath) == hashlib.sha256(remote).hexdigest():
            # the device holds exactly what this device last sent of the note and made no version
            # of it itself: its copy of this device's own. Whatever this device did since (an
            # edit, a removal, a forget) stands; nothing to write, merge or keep as a conflict
            aside.pop((device, npath), None)
            continue
        try:
            local = memory.read_raw(npath)[0]
        except NotFound:
            local = None
        except Refused as exc:
            result.aside.append((npath, f"this device's note cannot be read: {exc}"))
            continue
        resolves = {r for _, e in mine for r in (e.get("resolves") or []) if isinstance(r, str)}
        if local is not None and local != remote and blob_id(local) in resolves:
            base = local            # the device resolved a conflict with this very text: take its result
        # this device's scanner over every version that would enter history, before anything lands
        versions: list[tuple[Version, bytes | None]] = []
        problem = None
        for c, e in mine:
            told = [e.get(k) for k in ("time", "source", "run", "approval", "scope", "grant", "model")]
            told += e.get("sources") if isinstance(e.get("sources"), list) else []
            if any(isinstance(t, str) and scanner.find(t) for t in told):
                problem = "a version's provenance carries a secret"
                break
            oid = vers.get((c, e["v"])) if type(e.get("v")) is int else None
            data = blobs.get(oid) if oid else None
            if isinstance(data, int):
                problem = f"a version of it is larger than memory.max_note_bytes ({limit} bytes)"
                break
            if data is not None:
                try:
                    memory.check_write(npath, data)
                except Refused as exc:
                    problem = f"a version of it was refused: {exc}"
                    break
            elif e.get("removed") is not True:
                continue        # (an event naming no bytes: nothing to log)
            versions.append((_imported(history, device, npath, data, e), data))
        if problem is None and remote is not None:
            try:
                memory.check_write(npath, remote)
            except Refused as exc:
                problem = str(exc)
        if problem is not None:
            result.aside.append((npath, problem))
            continue
        merged = remote
        if remote is not None and local is not None and local != remote and local != base and remote != base:
            merged = merge3(git, scratch, base or b"", local, remote)
        # what this note should become here
        if local == remote or remote == base:
            target, how = "keep", ""
        elif remote is None:
            target, how = ("remove", "removed") if local == base else ("keep", "")   # an edit beats a removal
        elif local is None or local == base:
            target, how = "write", "written"
        elif merged is not None:
            target, how = "write", "merged"
        else:
            target, how = "conflict", ""
        fresh = [(v, d) for v, d in versions if _seen_key(v) not in seen]
        if target == "conflict":
            last = mine[-1][1] if mine else {"source": "person", "time": timestamp()}
            cv = _imported(history, device, npath, remote, last, conflict=True)
            if _seen_key(cv) not in seen:
                fresh.append((cv, remote))
        try:
            rev = memory.revision(local) if local is not None else None
            if target == "write":
                memory.write(npath, merged if how == "merged" else remote, rev, origin=origin, call=call)
                (result.merged if how == "merged" else result.written).append(npath)
                changed.append(npath)
            elif target == "remove":
                memory.remove(npath, rev, origin=origin, call=call)
                result.removed.append(npath)
                changed.append(npath)
            elif target == "conflict":
                result.conflicts.append(npath)
        except (Conflict, Busy):
            result.retry.append(npath)
            continue
        except (Refused, HistoryError) as exc:
            result.aside.append((npath, str(exc)))
            continue
        if target in ("write", "remove") and npath in result.forgotten:
            # the writer kept the bytes it replaced as a version (history, just forgotten, no
            # longer knew them): those are the forgotten note's, so only this sync's own version stays
            problem = _forget_again(memory, history, npath, merged if how == "merged" else remote)
            if problem:
                result.warning = f"{npath}: {problem}"
        aside.pop((device, npath), None)
        logged.extend(fresh)         # (logged after the writes: an imported version is never a head)
        seen.update(_seen_key(v) for v, _ in fresh)
    if done != set(applied.get(device, [])):
        # (recorded once the notes are done: a sync killed before applies the tombstone again)
        applied[device] = sorted(done)
        state.write("forgotten.json", applied)
    if logged:
        # every imported version of this integration in one append (one fsync); a crash before
        # it loses nothing: the next sync finds them unlogged and logs them then
        try:
            with memory.writers_lock():
                history.record_many(logged)
        except (HistoryError, OSError, TimeoutError) as exc:
            result.warning = f"{device}'s versions were not logged yet ({exc}); the next sync logs them"
            result.retry.append("")
    # a refused name may hold this device's secret (whole, or split by its folders): it is
    # recorded, audited and shown only in a form that does not carry it
    result.aside = [unsecret(scanner, path, why) for path, why in result.aside]
    result.forgotten = [unsecret(scanner, path, "")[0] for path in result.forgotten]
    for path, why in result.aside:
        aside[(device, path)] = {"device": device, "path": path, "reason": why, "commit": new, "time": timestamp()}
        audit_line(audit, {"event": "sync_kept_aside", "device": device, "target": path, "head": new})
    kept = sorted(aside.values(), key=lambda a: (str(a.get("device")), str(a.get("path"))))
    if kept != before_aside:
        state.write("aside.json", kept)
    if on_changed is not None and changed:
        on_changed(changed)
    if not result.retry:
        integrated[device] = new
        state.write("integrated.json", integrated)
        refused = state.mapping("refused.json")
        if refused.pop(device, None) is not None:
            state.write("refused.json", refused)
        state.remove("journal.json")
    result.check_seconds = time.monotonic() - started
    return result


def _forget_again(memory: Memory, history: History, path: str, data: bytes | None) -> str | None:
    """After a tombstone of PATH, the sync's own write (DATA) or removal (None) of it: drop every
    version of PATH again and log that one alone. None, or what went wrong (the versions stay)."""
    try:
        with memory.writers_lock():
            made = history.head(path)
            if made is None or made.removed != (data is None) or (
                    data is not None and made.sha256 != hashlib.sha256(data).hexdigest()):
                return None             # (not the version this sync made: nothing is touched)
            history.forget(path)
            history.record_many([(made, data)])
    except (HistoryError, OSError, TimeoutError) as exc:
        return f"the text its tombstone forgot could not be dropped again ({exc}); `assistant memory forget` drops it"
    return None


SPLIT_SECRET_NAME = "(a name holding a secret split across its folder names)"


def unsecret(scanner: Scanner, path: str, why: str) -> tuple[str, str]:
    """(path, reason) as they may be kept and shown: a secret in them redacted; a name whose
    folders spell a secret once their `/` is taken out replaced whole (its halves would show)."""
    if scanner.find(path.replace("/", "")) and not scanner.find(path):
        for part in sorted(set(path.split("/")) | {path}, key=len, reverse=True):
            if part:
                why = why.replace(part, "...")
        return SPLIT_SECRET_NAME, scanner.redact(why)
    return scanner.redact(path), scanner.redact(why)


def audit_line(audit: AuditSink | None, record: dict) -> None:
    if audit is None:
        return
    try:
        audit.append(record)
    except Exception:   # noqa: BLE001 - the refusal stands whether or not its line is written
        pass
