"""grants.json: the durable {kind, target} grants a person approved.

Guards two things. (1) A file it cannot read never means "allow": a corrupt file, an unknown
version, an unknown kind or a malformed pattern is a `GrantsError` naming the problem, and
callers treat it as "no grants". (2) No grant is lost when two approvers answer at once: every
change is read-modify-write under an exclusive `flock` on `.grants.json.lock` beside the file
(a bounded wait: a lock held too long is a `GrantsError`, so the approval is a deny, never a hang),
written to a temp file in the same folder, fsynced and renamed over grants.json (a reader sees
the old file or the new one, never half of one). A corrupt file is never overwritten by an add.

Lookups are indexed by kind and literal prefix (the text before a pattern's first
metacharacter), so a decision costs the same with 10 grants as with 10,000: only grants whose
literal prefix is a prefix of the target are tried. The parsed index is cached and reloaded
when the file changes (inode, size, mtime).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from policy.fileio import (
    DEFAULT_LOCK_TIMEOUT, FileTooLargeError, NotRegularFile, locked, open_regular, write_atomic,
)
from policy.kinds import KINDS
from policy.match import (
    PatternError, _GoPattern, compile_pattern, is_literal, literal_prefix, literal_suffix,
)
from policy.strict_json import unique_keys

VERSION = 1
_MAX_BYTES = 32 * 1024 * 1024


class GrantsError(Exception):
    """grants.json is unreadable, corrupt, of an unknown version, or could not be written."""


@dataclass(frozen=True)
class Grant:
    kind: str
    target: str        # a policy.match pattern
    granted_at: str = ""
    note: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "target": self.target, "granted_at": self.granted_at, "note": self.note}


def _key(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class _Buckets:
    """Patterns keyed by a literal every match must start (or end) with."""

    def __init__(self, suffix: bool) -> None:
        self.suffix = suffix
        self.by_key: dict[str, list[tuple[_GoPattern, Grant]]] = {}
        self.lengths: list[int] = []

    def add(self, key: str, compiled: _GoPattern, grant: Grant) -> None:
        if key not in self.by_key:
            self.by_key[key] = []
            if len(key) not in self.lengths:
                self.lengths = sorted([*self.lengths, len(key)])
        self.by_key[key].append((compiled, grant))

    def find(self, target: str) -> Grant | None:
        n = len(target)
        for length in self.lengths:
            if length > n:
                break
            bucket = self.by_key.get(target[n - length:] if self.suffix else target[:length])
            if bucket:
                for compiled, grant in bucket:
                    if compiled is None:
                        if length == n:          # a literal grant names exactly this target
                            return grant
                    elif compiled.fullmatch(target):
                        return grant
        return None


class GrantIndex:
    """Grants of all kinds, looked up by literal prefix or suffix. For grants.json and run grants.

    A pattern is filed under the longer of its literal prefix (`people/` for `people/*`) and
    literal suffix (`.example.com` for `*.example.com`); a lookup tries only the buckets whose
    key is a prefix / suffix of the target (one dict probe per distinct key length), so the
    cost does not grow with the number of grants. Patterns with neither (`*`) are scanned.
    """

    def __init__(self, grants: Iterable[Grant] = ()) -> None:
        self._kinds: dict[str, tuple[_Buckets, _Buckets, list[tuple[_GoPattern, Grant]]]] = {}
        for g in grants:
            self.add(g)

    def add(self, grant: Grant) -> None:
        compiled = compile_pattern(grant.target)   # PatternError if malformed
        prefixes, suffixes, wild = self._kinds.setdefault(grant.kind, (_Buckets(False), _Buckets(True), []))
        if is_literal(grant.target):
            prefixes.add(grant.target, None, grant)
            return
        prefix, suffix = literal_prefix(grant.target), literal_suffix(grant.target)
        if prefix and len(prefix) >= len(suffix):
            prefixes.add(prefix, compiled, grant)
        elif suffix:
            suffixes.add(suffix, compiled, grant)
        else:
            wild.append((compiled, grant))

    def find(self, kind: str, target: str) -> Grant | None:
        entry = self._kinds.get(kind)
        if entry is None:
            return None
        prefixes, suffixes, wild = entry
        found = prefixes.find(target) or suffixes.find(target)
        if found is not None:
            return found
        return next((g for compiled, g in wild if compiled.fullmatch(target)), None)


_no_duplicate_keys = unique_keys(lambda key: GrantsError(f"key {key!r} appears twice in one object"))


def _parse(raw: bytes, where: str) -> list[Grant]:
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicate_keys)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GrantsError(f"{where} is not valid JSON ({exc}); fix or remove it") from None
    except RecursionError:
        raise GrantsError(f"{where} is nested too deeply to be a grants file") from None
    except GrantsError as exc:
        raise GrantsError(f"{where}: {exc} (which one counts would be a guess)") from None
    if not isinstance(data, dict):
        raise GrantsError(f"{where}: expected an object with \"version\" and \"grants\"")
    if type(data.get("version")) is not int or data.get("version") != VERSION:   # not true, not 1.0
        raise GrantsError(f"{where}: unknown version {data.get('version')!r} (this program reads version {VERSION})")
    items = data.get("grants")
    if not isinstance(items, list):
        raise GrantsError(f"{where}: \"grants\" must be a list")
    out: list[Grant] = []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise GrantsError(f"{where}: grant #{i} is not an object")
        kind, target = item.get("kind"), item.get("target")
        if not isinstance(kind, str) or kind not in KINDS:
            raise GrantsError(f"{where}: grant #{i} has unknown kind {kind!r} (known: {', '.join(KINDS)})")
        if not isinstance(target, str) or not target:
            raise GrantsError(f"{where}: grant #{i} ({kind}) has no target")
        try:
            compile_pattern(target)
        except PatternError as exc:
            raise GrantsError(f"{where}: grant #{i} ({kind} {target!r}) is a malformed pattern: {exc}") from None
        granted_at, note = item.get("granted_at", ""), item.get("note", "")
        if not isinstance(granted_at, str) or not isinstance(note, str):
            raise GrantsError(f"{where}: grant #{i} ({kind} {target!r}): granted_at and note must be strings")
        out.append(Grant(kind, target, granted_at, note))
    return out


class GrantStore:
    """grants.json at `path`. A missing file means no grants."""

    def __init__(self, path: str | os.PathLike[str], *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
        self.path = Path(path)
        self.lock_timeout = lock_timeout
        self.lock_path = self.path.with_name(f".{self.path.name}.lock")
        self._cache_key: tuple[int, ...] | None = None
        self._grants: list[Grant] = []
        self._index = GrantIndex()
        self._held = None

    # ------------------------------------------------------------ reading
    def _read(self, fresh: bool) -> tuple[tuple[int, ...] | None, bytes | None]:
        """(stat key, bytes), or (key, None) when the cached parse is still this file."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return None, None
        except OSError as exc:
            raise GrantsError(f"cannot read {self.path}: {exc.strerror}") from None
        if (_key(st) == self._cache_key) and not fresh:
            return self._cache_key, None      # one lstat per decision while nothing changed
        try:
            fd, st = open_regular(self.path, max_bytes=_MAX_BYTES, shown=str(self.path))
        except FileNotFoundError:
            return None, None
        except NotRegularFile as exc:
            if exc.errno == errno.ELOOP:
                raise GrantsError(f"{self.path} is a symbolic link; refusing to read it") from None
            raise GrantsError(f"{self.path} is not a regular file") from None
        except FileTooLargeError:
            raise GrantsError(f"{self.path} is larger than {_MAX_BYTES} bytes") from None
        except OSError as exc:
            raise GrantsError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        f = os.fdopen(fd, "rb")
        try:
            key = _key(st)
            raw = f.read(_MAX_BYTES + 1)
        except OSError as exc:
            f.close()
            raise GrantsError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        except BaseException:
            f.close()
            raise
        # Keep the cached version's file open: its inode cannot be reused by a later
        # grants.json while we hold it, so (dev, inode, size, mtime) really names one version.
        if self._held is not None:
            self._held.close()
        self._held = f
        return key, raw

    def load(self, *, fresh: bool = False) -> list[Grant]:
        """All grants, in file order. GrantsError if the file cannot be trusted."""
        self._refresh(fresh)
        return list(self._grants)

    def _refresh(self, fresh: bool = False) -> None:
        try:
            key, raw = self._read(fresh)
            if key is None:
                self._cache_key, self._grants, self._index = None, [], GrantIndex()
            elif raw is not None:
                grants = _parse(raw, str(self.path))
                self._grants, self._index, self._cache_key = grants, GrantIndex(grants), key
        except GrantsError:
            self._cache_key, self._grants, self._index = None, [], GrantIndex()
            raise

    def list(self) -> list[Grant]:
        return self.load()

    def matches(self, kind: str, target: str) -> Grant | None:
        """The first grant covering (kind, normalised target), or None. GrantsError if unreadable."""
        self._refresh()
        return self._index.find(kind, target)

    # ------------------------------------------------------------ writing
    def _locked(self) -> contextlib.AbstractContextManager[None]:
        """The exclusive lock of one read-modify-write; a bounded wait, then GrantsError (a deny)."""
        return locked(self.lock_path, timeout=self.lock_timeout, what=self.path.name, error=GrantsError)

    def _write(self, grants: list[Grant]) -> None:
        body = json.dumps({"version": VERSION, "grants": [g.as_dict() for g in grants]}, indent=2) + "\n"
        write_atomic(self.path, body.encode("utf-8"))

    def add(self, kind: str, target: str, note: str = "") -> Grant:
        """Record a grant (idempotent: an identical kind+target is returned as it stands)."""
        if kind not in KINDS:
            raise GrantsError(f"unknown kind {kind!r} (known: {', '.join(KINDS)})")
        try:
            compile_pattern(target)
        except PatternError as exc:
            raise GrantsError(f"not adding {kind} {target!r}: {exc}") from None
        with self._locked():
            current = self.load(fresh=True)
            for g in current:
                if g.kind == kind and g.target == target:
                    return g
            grant = Grant(kind, target, now_iso(), note)
            try:
                self._write([*current, grant])
            except OSError as exc:
                raise GrantsError(f"cannot write {self.path}: {exc.strerror or exc}") from None
            return grant

    def revoke(self, kind: str, target: str) -> bool:
        """Remove the grant with exactly this kind and target. False if there was none."""
        with self._locked():
            current = self.load(fresh=True)
            kept = [g for g in current if not (g.kind == kind and g.target == target)]
            if len(kept) == len(current):
                return False
            try:
                self._write(kept)
            except OSError as exc:
                raise GrantsError(f"cannot write {self.path}: {exc.strerror or exc}") from None
            return True

    def __iter__(self) -> Iterator[Grant]:
        return iter(self.load())
