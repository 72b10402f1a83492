"""One sync: fetch, integrate each enrolled device's branch, export this device's changes, push.

Guards the order and the bounds of a sync. One at a time per workspace (state/sync/.lock);
every git call bounded (assistant.sync.git); nothing is pushed unless this device's new commit
was built from versions that all passed the scanner; a device whose branch is refused does not
stop the others. Also the person's setup: `init` (the sync repository under state/sync, the
device key, the remote, which must be reachable and carry no credentials), enrolment
(`devices add|remove`, state/sync/devices.json: authority is per device, never synced), and
the status every door shows.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from policy.gate import Gate

from assistant.gating.context import AuditSink
from assistant.notes.history import DEVICE_NAME, History, HistoryError, Version
from assistant.notes.store import Memory
from assistant.secrets.scanner import Scanner
from assistant.sync.export import Exported, SecretInNote, branch_of, export, open_conflicts
from assistant.sync.files import HEADS as FILE_HEADS
from assistant.sync.files import FileMount, FilesIn, SecretInFile, file_status, integrate_files, outgoing
from assistant.sync.git import NETWORK_TIMEOUT, Git, GitError, GitTimeout, check_remote
from assistant.sync.integrate import (
    REMOTE_PREFIX, Integration, audit_line, check_signatures, commits_between, integrate_device, refuse_device,
)
from assistant.sync.keys import DeviceKey, KeyError_, parse_public_line, public_line
from assistant.sync.state import SyncState, SyncStateError

__all__ = ["SyncError", "SyncReport", "Syncer", "init_sync", "device_name", "enrol", "unenrol",
           "device_list", "status", "HOSTED_WARNING", "add_tombstone"]

HOSTED_WARNING = "note: whoever hosts {remote} can read the notes that sync sends there (each device signs them; nobody encrypts them)"


class SyncError(Exception):
    """A sync (or its setup) that cannot go on; the message says what and the fix."""


def device_name(name: str | None) -> str:
    """NAME as given (checked), or this host's name made into one (letters, digits, - and _)."""
    if name is None:
        host = socket.gethostname().split(".")[0]
        name = re.sub(r"[^A-Za-z0-9_-]", "-", host).strip("-_")[:64] or "device"
    if DEVICE_NAME(name) is None:
        raise SyncError(f"device name {name!r} must be 1-64 letters, digits, '-' or '_', starting with a letter or digit")
    return name


def _git(state: SyncState) -> Git:
    return Git(state.repo, state.home)


def init_sync(state_dir: Path, remote: str, name: str | None = None) -> tuple[str, str]:
    """Set up sync on this workspace: (device name, its public key line). SyncError if the
    remote is refused or unreachable; nothing is recorded then."""
    try:
        remote = check_remote(remote)
    except ValueError as exc:
        raise SyncError(str(exc)) from None
    name = device_name(name)
    state = SyncState(state_dir)
    if state.exists():
        old = state.settings()
        if old.name != name:
            raise SyncError(f"sync is already set up here as device {old.name!r}; its name cannot change "
                            f"(give --name {old.name} to change only the remote)")
    if "://" not in remote and ":" not in remote.split("/", 1)[0] and not Path(remote).is_absolute():
        remote = str(Path(remote).absolute())          # a relative path: as the person meant it now
    try:
        state.home.mkdir(parents=True, mode=0o700, exist_ok=True)
        os.chmod(state.dir, 0o700)
    except OSError as exc:
        raise SyncError(f"{state.dir} cannot be set up: {exc.strerror or exc}") from None
    git = _git(state)
    try:
        if not (state.repo / "HEAD").exists():
            git.run(["init", "--bare", "-q", str(state.repo)])
        git.run(["ls-remote", "--heads", remote, "refs/heads/devices/*"], timeout=NETWORK_TIMEOUT)
    except GitError as exc:
        raise SyncError(f"the remote cannot be reached ({exc}); nothing was set up. A path must be an "
                        "existing repository (`git init --bare PATH`)") from None
    try:
        key = DeviceKey.load(state.dir)
        state.write("sync.json", {"name": name, "remote": remote})
    except (KeyError_, SyncStateError) as exc:
        raise SyncError(str(exc)) from None
    return name, public_line(key.public, name)


def enrol(state_dir: Path, name: str, key_line: str) -> None:
    state = SyncState(state_dir)
    settings = state.settings()
    name = device_name(name)
    try:
        parse_public_line(key_line)
    except KeyError_ as exc:
        raise SyncError(str(exc)) from None
    if name == settings.name:
        raise SyncError(f"{name} is this device's own name")
    devices = state.devices()
    if any(d["name"] == name for d in devices):
        raise SyncError(f"{name} is enrolled already; `assistant sync devices remove {name}` first to change its key")
    line = " ".join(key_line.split()[:2])
    devices.append({"name": name, "key": line})
    state.write("devices.json", sorted(devices, key=lambda d: d["name"]))


def unenrol(state_dir: Path, name: str) -> None:
    state = SyncState(state_dir)
    state.settings()
    devices = state.devices()
    if not any(d["name"] == name for d in devices):
        raise SyncError(f"no device named {name!r} is enrolled (see `assistant sync devices list`)")
    state.write("devices.json", [d for d in devices if d["name"] != name])
    for book in ("integrated.json", FILE_HEADS):
        integrated = state.mapping(book)
        if integrated.pop(name, None) is not None:
            state.write(book, integrated)


def device_list(state_dir: Path) -> list[dict[str, object]]:
    """This device first (marked `this`), then the enrolled ones: [{"name", "key", "this"}]."""
    state = SyncState(state_dir)
    settings = state.settings()
    try:
        key = DeviceKey.load(state.dir)
    except KeyError_ as exc:
        raise SyncError(str(exc)) from None
    rows: list[dict[str, object]] = [{"name": settings.name, "key": public_line(key.public), "this": True}]
    rows += [{"name": d["name"], "key": d["key"], "this": False} for d in state.devices()]
    return rows


def add_tombstone(state_dir: Path, path: str) -> bool:
    """`memory forget PATH` on a device that syncs: the next sync sends a signed tombstone that
    drops the note's versions on every enrolled device. False if sync is not set up here."""
    state = SyncState(state_dir)
    if not state.exists():
        return False
    tombs = [t for t in state.listing("tombstones.json") if isinstance(t, str) and t != path]
    state.write("tombstones.json", tombs + [path])
    return True


def conflicts_of(history: History | None) -> list[Version]:
    if history is None:
        return []
    return [v for vs in open_conflicts(history.versions()).values() for v in vs]


def status(state_dir: Path, history: History | None, files: bool = False) -> dict[str, object]:
    """What `sync status --json` prints (no network: the remote as last fetched). FILES: this
    workspace's `[sync] files`."""
    state = SyncState(state_dir)
    settings = state.settings()
    git = _git(state)
    integrated = state.mapping("integrated.json")
    local = git.rev(branch_of(settings.name))
    pushed = git.rev(REMOTE_PREFIX + settings.name)
    return {
        "name": settings.name, "remote": settings.remote,
        "devices": [{"name": d["name"], "integrated": integrated.get(d["name"])} for d in state.devices()],
        "refused": [{"device": k, **v} for k, v in sorted(state.mapping("refused.json").items())
                    if isinstance(v, dict)],
        "aside": state.listing("aside.json"),
        "conflicts": [{"path": v.path, "device": v.device, "rev": v.rev, "time": v.time} for v in conflicts_of(history)],
        "unpushed": local is not None and local != pushed,
        "interrupted": state.read("journal.json", None),
        "files": file_status(state, files, git, [d["name"] for d in state.devices()], REMOTE_PREFIX),
    }


@dataclass
class SyncReport:
    integrations: list[Integration] = field(default_factory=list)
    exported: Exported | None = None
    pushed: bool = False
    resumed: dict | None = None
    git_seconds: float = 0.0
    check_seconds: float = 0.0
    replaced: str | None = None      # a head on this device's branch it did not sign, pushed over
    files: list[FilesIn] = field(default_factory=list)   # files/ taken from each device ([sync] files = true)


def _sweep(scratch: Path) -> None:
    try:
        names = os.listdir(scratch)
    except FileNotFoundError:
        return
    for name in names:
        try:
            os.unlink(scratch / name)
        except OSError:
            pass        # (a folder or a busy file: left; merge3 never reuses a name)


class Syncer:
    """A sync on one session's memory: its history, its policy gate, its audit log and scanner."""

    def __init__(self, state_dir: Path, *, memory: Memory, history: History, gate: Gate,
                 audit: AuditSink | None, scanner: Scanner, on_changed: Callable[[list[str]], None] | None = None,
                 network_timeout: float = NETWORK_TIMEOUT, files: FileMount | None = None) -> None:
        """FILES: files/ as sync reaches it when `[sync] files = true` (assistant.sync.files.file_mount);
        None: nothing of files/ is sent, and no device's files/ is written here."""
        self.state = SyncState(state_dir)
        self.memory, self.history, self.gate, self.audit, self.scanner = memory, history, gate, audit, scanner
        self.on_changed = on_changed
        self.files = files
        self.network_timeout = network_timeout
        self.git = _git(self.state)
        self._heads: dict[str, str] = {}        # refs/heads/devices/NAME -> head, as ls-remote saw them

    def run(self) -> SyncReport:
        report = SyncReport()
        try:
            with self.state.lock():
                self._run(report)
        except TimeoutError as exc:
            raise SyncError(f"another sync is running on this workspace ({exc})") from None
        except (GitError, HistoryError, KeyError_) as exc:
            raise SyncError(f"sync stopped: {exc}; what was integrated so far stays, and the next "
                            "sync goes on from there") from None
        finally:
            report.git_seconds = self.git.spent
        return report

    def _run(self, report: SyncReport) -> None:
        state, git = self.state, self.git
        settings = state.settings()
        key = DeviceKey.load(state.dir)
        report.resumed = state.read("journal.json", None)
        _sweep(state.dir / "tmp")       # a merge's scratch copies left by a killed sync
        enrolled = state.devices()
        unfetched = self._fetch(settings, [d["name"] for d in enrolled])
        refs = git.refs()               # every head as fetched, and this device's own, at once
        for d in enrolled:
            if d["name"] in unfetched:
                report.integrations.append(refuse_device(state, self.audit, d["name"], None, unfetched[d["name"]]))
                continue
            raw = parse_public_line(d["key"])
            report.integrations.append(integrate_device(
                git=git, state=state, memory=self.memory, history=self.history, gate=self.gate, audit=self.audit,
                scanner=self.scanner, device=d["name"], key=raw, new=refs.get(REMOTE_PREFIX + d["name"]),
                scratch=state.dir / "tmp", on_changed=self.on_changed))
        report.check_seconds = sum(i.check_seconds for i in report.integrations)
        if self.files is not None:
            # files/ of each device whose branch is verified and integrated up to a head
            integrated = state.mapping("integrated.json")
            for i in report.integrations:
                head = integrated.get(i.device)
                if i.refused is None and isinstance(head, str):
                    report.files.append(integrate_files(
                        git=git, state=state, mount=self.files, gate=self.gate, audit=self.audit,
                        scanner=self.scanner, device=i.device, head=head, run_id=self.gate.run_id,
                        own=branch_of(settings.name)))
        ref = branch_of(settings.name)
        try:
            files = (outgoing(self.files, self.scanner, state.mapping("exported.json").get("files", {}),
                              scanned={b for f in report.files for b in f.scanned})
                     if self.files is not None else None)
            report.exported = export(git, state, self.history, self.scanner, key, settings.name, refs.get(ref),
                                     files=files)
        except (SecretInNote, SecretInFile) as exc:
            raise SyncError(str(exc)) from None
        report.check_seconds += report.exported.check_seconds
        local = report.exported.commit or refs.get(ref)
        if local is not None and local != refs.get(REMOTE_PREFIX + settings.name):
            lease = self._foreign_head(settings.name, local, key, settings.name in unfetched)
            args = [f"--force-with-lease={ref}:{lease}"] if lease else []
            try:
                git.run(["push", "--quiet", "--porcelain", *args, settings.remote, f"{ref}:{ref}"],
                        timeout=self.network_timeout)
            except GitError as exc:
                raise SyncError(f"pushing to {settings.remote} failed: {exc}; this device's changes are kept "
                                "and go with the next sync (a rejected push: the remote holds a branch "
                                f"devices/{settings.name} this device did not make)") from None
            git.run(["update-ref", REMOTE_PREFIX + settings.name, local])
            report.pushed = True
            if lease:
                report.replaced = lease
                audit_line(self.audit, {"event": "sync_replaced", "device": settings.name, "head": lease})

    def _foreign_head(self, name: str, local: str, key: DeviceKey, unreadable: bool) -> str | None:
        """The remote head of this device's own branch if someone else put commits on it (one
        this device cannot even fetch, or one not descending from nor leading to this device's
        head by commits this device signed): the push replaces it, leased on exactly that head.
        None when the head is this device's own (a plain push then; one it rejects stays an
        error: another install with this name and key)."""
        head = self._heads.get(name)
        if head is None or head == local:
            return None
        if unreadable:
            return head
        if self.git.is_ancestor(head, local):
            return None
        theirs = commits_between(self.git, local, head)
        return head if check_signatures(theirs, name, key.public) is not None else None

    def _fetch(self, settings, names: list[str]) -> dict[str, str]:
        """Fetch this device's branch and the enrolled devices' (never a branch nobody enrolled:
        a stranger's branch is neither downloaded nor checked, so a bad object in it cannot fail
        the fetch). One fetch for all; if it fails, one per branch, so a branch whose objects
        git's fsck rejects fails alone: {device: why} of the enrolled ones not fetched."""
        git = self.git
        try:
            _, raw = git.run(["ls-remote", "--heads", settings.remote, "refs/heads/devices/*"],
                             timeout=self.network_timeout)
        except GitError as exc:
            raise SyncError(f"fetching from {settings.remote} failed: {exc}; nothing was changed") from None
        heads: dict[str, str] = {}
        self._heads = heads
        for line in raw.decode("utf-8", "replace").splitlines():
            oid, _, ref = line.partition("\t")
            name = ref[len("refs/heads/devices/"):] if ref.startswith("refs/heads/devices/") else ""
            if name and DEVICE_NAME(name) is not None and re.fullmatch(r"[0-9a-f]{40,64}", oid):
                heads[name] = oid
        wanted = [settings.name, *names]
        tracking = git.refs(REMOTE_PREFIX)
        for name in wanted:             # a branch gone from the remote (what --prune did)
            if name not in heads and REMOTE_PREFIX + name in tracking:
                git.run(["update-ref", "-d", REMOTE_PREFIX + name])
        stale = [n for n in wanted if n in heads and tracking.get(REMOTE_PREFIX + n) != heads[n]]
        if not stale:
            return {}
        def spec(n: str) -> str:
            return f"+refs/heads/devices/{n}:{REMOTE_PREFIX}{n}"
        try:
            git.run(["fetch", "--quiet", "--no-tags", settings.remote, *map(spec, stale)], timeout=self.network_timeout)
            return {}
        except GitTimeout as exc:
            raise SyncError(f"fetching from {settings.remote} failed: {exc}; nothing was changed") from None
        except GitError:
            pass
        failed: dict[str, str] = {}
        for n in stale:
            try:
                git.run(["fetch", "--quiet", "--no-tags", settings.remote, spec(n)], timeout=self.network_timeout)
            except GitError as exc:
                failed[n] = f"{n}'s branch could not be fetched ({exc}); nothing of it was taken"
        return failed
