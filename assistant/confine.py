"""Root: file operations confined beneath one directory by descriptors, never by path strings.

Guards: every path the model (or anything else) hands to memory/files operations. A `Root`
holds an open descriptor for its directory; every operation resolves its path from that
descriptor and never follows a symbolic link, so no name, link, or race can reach outside.

Shape (as Go's os.Root, src/os/root_openat.go): ONE resolver, `Root._at`, a context manager
that pins the root, checks the path by the one grammar (policy.paths), resolves the parent
directory, yields (parent descriptor, leaf name), closes what it opened and translates an
`OSError` once into a `ConfinementError` (or `FileNotFoundError`) carrying op, path and cause.
The openat2-or-walk choice is made in one function, `Root._open_at`. Each public operation is
a few lines around one `*at` call. The security argument is written once, beside the resolver.
See docs/confine.md for it in prose.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import stat as _stat
import sys
import threading
import time
from typing import Callable, Iterator, NamedTuple

from policy import fileio
from policy.fileio import TEMP_PREFIX, FileTooLargeError, NotRegularFile
from policy.paths import MAX_COMPONENT_BYTES, MAX_DEPTH, PathGrammarError, component_problem
from policy.paths import check as check_path
from policy.paths import show as _show

__all__ = [
    "Root",
    "TreeEntry",
    "ConfinementError",
    "FileTooLargeError",
    "FileTooLarge",
    "validate_relpath",
    "openat2_available",
    "directory_chain",
    "MAX_DEPTH",
    "MAX_COMPONENT_BYTES",
    "TEMP_PREFIX",
]

DEFAULT_MAX_READ = 64 * 1024 * 1024
_EAGAIN_RETRIES = 16


class ConfinementError(PermissionError):
    """A path was refused: it is malformed, or resolving it would leave the root or follow a link.

    `op` (read, write, stat, list, remove, rename, mkdirs, validate), `path` and `cause` (the
    errno behind it, or None for a rule) say what was refused; the message says why."""

    def __init__(self, message: str, *, op: str | None = None, path: str | None = None,
                 cause: int | None = None) -> None:
        super().__init__(message)
        self.op, self.path, self.cause = op, path, cause


class _NotFound(FileNotFoundError):
    """ENOENT, already put into words by the resolver (never translated twice)."""


class _Failed(OSError):
    """Another OSError, already put into words by the resolver."""


class _Exists(FileExistsError):
    """A rename that never replaces found its destination taken (already in words)."""


FileTooLarge = FileTooLargeError  # name used in docs/interfaces.md


# --------------------------------------------------------------------------- validation


def validate_relpath(rel: str) -> list[str]:
    """Split a model-facing path into components by the one grammar (policy.paths), or raise
    ConfinementError naming the component and the rule. Nothing is ever decoded."""
    try:
        return check_path(rel)
    except PathGrammarError as exc:
        raise ConfinementError(str(exc), op="validate", path=rel if isinstance(rel, str) else None) from None


# --------------------------------------------------------------------------- openat2

_O_PATH = getattr(os, "O_PATH", 0)  # Linux only; on macOS the walk uses O_RDONLY
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = os.O_NOFOLLOW
_O_DIRECTORY = os.O_DIRECTORY
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)

_DIR_STEP = _O_PATH or os.O_RDONLY  # intermediate components: path-only where possible
# O_NONBLOCK: harmless on a directory; where a kernel checks O_DIRECTORY only after the open
# (not Linux), a FIFO raced in at a directory's name still cannot block us
_DIR_FLAGS = _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK
_REAL_DIR = os.O_RDONLY | _DIR_FLAGS  # a directory fd usable for fsync/listdir

_RESOLVE_NO_XDEV = 0x01
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS | _RESOLVE_NO_XDEV
_AT_FDCWD = -100
_SYS_OPENAT2 = 437  # same number on every architecture's generic table (x86_64, aarch64, ...)


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_syscall = None
_openat2_state: bool | None = None  # None: not probed; False: unavailable; True: works


def _load_syscall():
    global _syscall
    if _syscall is None:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.syscall
        fn.restype = ctypes.c_long
        _syscall = fn
    return _syscall


def _openat2(dirfd: int, path: bytes, flags: int) -> int:
    """openat2(dirfd, path, {flags, 0, _RESOLVE}); returns fd or raises OSError."""
    how = _OpenHow(flags, 0, _RESOLVE)
    fn = _load_syscall()
    for _ in range(_EAGAIN_RETRIES):
        fd = fn(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(dirfd), ctypes.c_char_p(path),
                ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
        if fd >= 0:
            return fd
        err = ctypes.get_errno()
        if err not in (errno.EAGAIN, errno.EINTR):
            raise OSError(err, os.strerror(err))
    raise OSError(errno.EAGAIN, "openat2 kept returning EAGAIN")


def openat2_available() -> bool:
    """True when this kernel (and seccomp policy) lets us use openat2 with RESOLVE_*."""
    global _openat2_state
    if _openat2_state is None:
        _openat2_state = False
        if sys.platform.startswith("linux") and platform.machine() not in ("alpha",):
            try:
                # O_PATH: needs no read permission on the working directory
                fd = _openat2(_AT_FDCWD, b".", (_O_PATH or os.O_RDONLY) | _O_DIRECTORY | _O_CLOEXEC)
            except (OSError, AttributeError):
                pass
            else:
                os.close(fd)
                _openat2_state = True
    return _openat2_state


def _env_forbids_openat2() -> bool:
    return os.environ.get("ASSISTANT_CONFINE_NO_OPENAT2", "") not in ("", "0")



# --------------------------------------------------------------------------- errors, said once

# (op, errno) -> (exception class, message); {p} is the path, {q} the other path of a rename
# (`rename` resolves the source, `rename onto` the destination), {s} the system's words.
_WORDS: dict[tuple[str, int], tuple[type[OSError], str]] = {
    ("read", errno.ENOENT): (_NotFound, "no such file {p}"),
    ("read", errno.EXDEV): (ConfinementError, "{p} is a mount point (or left the root); it is never read"),
    ("", errno.EXDEV): (ConfinementError, "path {p} crosses a mount point or leaves the root"),
    ("stat", errno.ENOENT): (_NotFound, "no such file or directory {p}"),
    ("remove", errno.ENOENT): (_NotFound, "no such file or directory {p}"),
    ("remove", errno.ENOTEMPTY): (_Failed, "directory {p} is not empty"),
    ("remove", errno.EEXIST): (_Failed, "directory {p} is not empty"),
    ("remove", errno.EISDIR): (ConfinementError, "{p} changed while being removed"),
    ("remove", errno.ENOTDIR): (ConfinementError, "{p} changed while being removed"),
    ("remove", errno.EPERM): (ConfinementError, "{p} changed while being removed"),
    ("write", errno.EISDIR): (ConfinementError, "{p} is a directory, not a file"),
    ("write", errno.ENOTDIR): (ConfinementError, "{p} is a directory, not a file"),
    ("write", errno.EEXIST): (ConfinementError, "{p} is a directory, not a file"),
    ("write", errno.ENOTEMPTY): (ConfinementError, "{p} is a directory, not a file"),
    ("rename", errno.ENOENT): (_NotFound, "no such file or directory {p}"),
    ("rename onto", errno.ENOENT): (_NotFound, "{q} vanished during rename"),
    ("rename onto", errno.EINVAL): (ConfinementError, "cannot move directory {q} inside itself ({p})"),
    **{("rename onto", e): (ConfinementError, "cannot rename {q} onto {p}: {s}")
       for e in (errno.EISDIR, errno.ENOTDIR, errno.ENOTEMPTY, errno.EEXIST)},
}
_SAID = (ConfinementError, _NotFound, _Failed, _Exists, FileTooLargeError)


def _translate(op: str, rel: str, other: str, exc: OSError) -> OSError:
    """The one place an OSError becomes the error a caller sees (op, path and cause kept)."""
    if isinstance(exc, ConfinementError):
        exc.op, exc.path = exc.op or op.split()[0], exc.path or rel
        return exc
    if isinstance(exc, _SAID):
        return exc
    if isinstance(exc, NotRegularFile):   # fileio's words for a symlink, FIFO, socket, device at the leaf
        return ConfinementError(exc.strerror, op=op.split()[0], path=rel, cause=exc.errno)
    cls, words = _WORDS.get((op, exc.errno)) or _WORDS.get(("", exc.errno), (None, ""))
    if cls is None:
        return exc
    message = words.format(p=_show(rel), q=_show(other), s=os.strerror(exc.errno))
    if cls is ConfinementError:
        return ConfinementError(message, op=op.split()[0], path=rel, cause=exc.errno)
    return cls(exc.errno, message)


# --------------------------------------------------------------------------- Root

_OPENAT2_REFUSED = (errno.ENOSYS, errno.EPERM, errno.EINVAL, errno.E2BIG)   # kernel or seccomp says no
_WALK_EXPLAINS = (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EAGAIN, errno.ENAMETOOLONG)


class TreeEntry(NamedTuple):
    """One entry found by `Root.scan`: its root-relative path, its lstat, and why the path
    grammar refuses its name (or "folder '<name>' ..." for a containing folder's), or None.
    (A NamedTuple, not a dataclass: a scan makes one per note, and this is 3x cheaper.)"""

    path: str
    stat: os.stat_result
    problem: str | None


class Root:
    """Descriptor-held directory; every operation stays beneath it and follows no symlink.

    `use_openat2`: None = auto (openat2 when the kernel has it, unless the environment sets
    ASSISTANT_CONFINE_NO_OPENAT2=1); False = always the per-component walk; True = openat2
    when available (falls back to the walk if the kernel refuses it).
    """

    def __init__(self, path: str | os.PathLike, *, use_openat2: bool | None = None,
                 max_read_bytes: int = DEFAULT_MAX_READ):
        self._lock = threading.Lock()
        self._closed = False
        self._refs = 0  # operations using the descriptor right now
        self._fd: int | None = None
        self.path = os.fspath(path)
        if use_openat2 is None:
            use_openat2 = not _env_forbids_openat2()
        self._use_openat2 = bool(use_openat2) and openat2_available()
        self.max_read_bytes = max_read_bytes
        fd = os.open(self.path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        try:
            self._dev = os.fstat(fd).st_dev
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    @classmethod
    def beneath(cls, base: str | os.PathLike, rel: str, *, create: bool = True,
                use_openat2: bool | None = None) -> "Root":
        """A Root at the private folder `base`/`rel` (a workspace's `state/transcripts`,
        `history`), reached from `base` without following a link at any level (each
        component opened O_NOFOLLOW; missing ones made 0o700 with `create`). A link or a file
        on the way is policy.fileio.LinkedFolder, whose message says the fix."""
        fd = fileio.open_folder(base, rel, create=create)
        self = cls.__new__(cls)
        self._lock = threading.Lock()
        self._closed = False
        self._refs = 0
        self._fd = None
        self.path = os.path.join(os.fspath(base), rel)
        if use_openat2 is None:
            use_openat2 = not _env_forbids_openat2()
        self._use_openat2 = bool(use_openat2) and openat2_available()
        self.max_read_bytes = DEFAULT_MAX_READ
        try:
            self._dev = os.fstat(fd).st_dev
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    # -- lifecycle
    @property
    def uses_openat2(self) -> bool:
        return self._use_openat2

    def fileno(self) -> int:
        if self._fd is None or self._closed:
            raise ValueError("Root is closed")
        return self._fd

    def close(self) -> None:
        """Close the root; operations already running finish first (the descriptor is
        closed by the last of them), new ones get ValueError."""
        with self._lock:
            self._closed = True
            fd = self._fd if self._refs == 0 else None
            if fd is not None:
                self._fd = None
        if fd is not None:
            os.close(fd)

    def _pin(self) -> int:
        """The root descriptor, held open until `_unpin`: `close()` from another thread waits
        until every operation using it has finished. Without this, a concurrent close frees
        the descriptor *number* mid-operation, the next `open` anywhere in the process reuses
        it, and the operation resolves its path under that unrelated directory."""
        with self._lock:
            if self._fd is None or self._closed:
                raise ValueError("Root is closed")
            self._refs += 1
            return self._fd

    def _unpin(self) -> None:
        with self._lock:
            self._refs -= 1
            fd = self._fd if (self._closed and self._refs == 0) else None
            if fd is not None:
                self._fd = None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> "Root":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed or self._fd is None else ("openat2" if self._use_openat2 else "walk")
        return f"Root({self.path!r}, {state})"

    # -- the resolver -------------------------------------------------------------------
    #
    # Why nothing escapes (the security argument, once):
    # 1. The path is checked by the one grammar first (policy.paths): no `..`, `.`, empty or
    #    absolute component, no separator hidden in a name, at most MAX_DEPTH components. So
    #    there is no way up: each step can only go *down* into an entry of a directory
    #    already held, and the number of steps is bounded.
    # 2. Every descriptor held here was reached from the root descriptor either by opening one
    #    component at a time relative to the previous descriptor with O_NOFOLLOW|O_DIRECTORY
    #    (the walk: a symlink is never traversed, it fails the open with ELOOP/ENOTDIR), or by
    #    openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV,
    #    which the kernel enforces for the whole path in one call. Swapping a component for a
    #    link between two steps only makes the next step fail; it is never resolved.
    # 3. A step that lands on another filesystem (st_dev) is refused (openat2: also a bind
    #    mount of the same filesystem).
    # 4. The leaf is never resolved here: each operation applies one no-follow `*at` call to
    #    (parent, leaf), so a link at the leaf is only ever replaced or removed as an entry.
    # 5. The root descriptor is pinned for the whole operation (see `_pin`).

    @contextlib.contextmanager
    def _at(self, op: str, rel: str, *, create: bool = False, whole: bool = False,
            other: str = "") -> Iterator[tuple[int, str]]:
        """THE resolver: yields (parent descriptor, leaf name) for `rel`; with `whole`, (a fresh
        descriptor of the directory `rel` itself, ""). `create` makes missing directories
        (0o700), and takes them back if the operation then fails. Closes what it opened;
        translates an OSError once (op, path, cause)."""
        made: list[int] = []
        root = self._pin()
        try:
            parts = [] if (whole and rel == "" and not create) else validate_relpath(rel)
            dirs = parts if whole else parts[:-1]
            if dirs:
                fd = self._open_at(root, dirs, _REAL_DIR, create=create, made=made)
            else:   # never hand out the shared root descriptor for listing (its offset)
                fd = os.open(".", _REAL_DIR, dir_fd=root) if whole else root
            try:
                yield fd, "" if whole else parts[-1]
            except BaseException:
                if made:
                    self._unmake(root, parts, made)
                raise
            finally:
                if fd != root:
                    os.close(fd)
        except OSError as exc:
            raise _translate(op, rel, other, exc) from None
        finally:
            self._unpin()

    def _open_at(self, dirfd: int, parts: list[str], flags: int, *, create: bool = False,
                 made: list[int] | None = None) -> int:
        """THE openat2-or-walk choice: open validated `parts` beneath `dirfd`, following no link.

        openat2 resolves them in one kernel-confined call. A refusal by the kernel (old
        kernel, seccomp) switches this Root to the walk for good; a miss the walk can explain
        (missing directory to create, a link, not a directory, a path past PATH_MAX) is re-done
        by the walk, which is itself confined and names the component: never a weaker path,
        only a slower one. EXDEV (a mount point, or leaving the root) is raised, a refusal."""
        if self._use_openat2:
            try:
                return _openat2(dirfd, os.fsencode("/".join(parts)), flags)
            except OSError as e:
                global _openat2_state
                if e.errno in _OPENAT2_REFUSED:
                    _openat2_state = False
                    self._use_openat2 = False
                elif e.errno not in _WALK_EXPLAINS:
                    raise   # EXDEV among them: translated by the operation (a refusal)
        return self._walk(dirfd, parts, flags, create, made)

    def _walk(self, root: int, parts: list[str], flags: int, create: bool, made: list[int] | None) -> int:
        """Open `parts` one component at a time (intermediates O_PATH where possible); a final
        component opened without O_DIRECTORY (a leaf) is one plain no-follow openat."""
        cur = root
        try:
            for i, comp in enumerate(parts):
                last = i == len(parts) - 1
                if last and not flags & _O_DIRECTORY:
                    nxt = os.open(comp, flags, dir_fd=cur)
                else:
                    step = flags if last else _DIR_STEP | _DIR_FLAGS
                    nxt = self._step(cur, comp, step, parts[: i + 1], create, made)
                if cur != root:
                    os.close(cur)
                cur = nxt
            return cur
        except BaseException:
            if cur != root:
                os.close(cur)
            raise

    def _step(self, dirfd: int, comp: str, flags: int, so_far: list[str], create: bool,
              made: list[int] | None) -> int:
        """One directory component, no-follow; a missing one is made (0o700) once and then
        opened no-follow like any other, so a link raced into its place is refused."""
        here = _show("/".join(so_far))
        for attempt in (0, 1):
            try:
                fd = os.open(comp, flags, dir_fd=dirfd)
                break
            except FileNotFoundError:
                if not create or attempt:
                    raise _NotFound(errno.ENOENT, f"no such directory {here}") from None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(comp, 0o700, dir_fd=dirfd)
                    if made is not None:
                        made.append(len(so_far))
                    fileio.fsync_dir(dirfd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise ConfinementError(f"path component {here} {self._why(dirfd, comp)}",
                                           cause=e.errno) from None
                raise
        if os.fstat(fd).st_dev != self._dev:
            os.close(fd)
            raise ConfinementError(f"path component {here} crosses a mount point", cause=errno.EXDEV)
        return fd

    @staticmethod
    def _why(dirfd: int, name: str) -> str:
        """Explain (for the message only) why `name` could not be opened as a directory."""
        try:
            st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
        except OSError:
            return "changed while being opened"
        if _stat.S_ISLNK(st.st_mode):
            return "is a symlink; symlinks are never followed"
        return f"is not a directory ({_kind(st.st_mode)})"

    def _unmake(self, root: int, parts: list[str], made: list[int]) -> None:
        """After a failed operation: remove the parent directories it created (deepest first),
        if still empty. Each is re-resolved through the confined walk and removed with rmdir,
        which never follows a link and never removes a non-empty one."""
        for n in sorted(set(made), reverse=True):
            try:
                fd = self._open_at(root, parts[: n - 1], _REAL_DIR) if n > 1 else root
            except OSError:
                return
            try:
                os.rmdir(parts[n - 1], dir_fd=fd)
            except OSError:
                return  # no longer empty (someone else wrote there), or gone
            finally:
                if fd != root:
                    os.close(fd)

    # -- reads --------------------------------------------------------------------------

    def _open_regular(self, rel: str) -> tuple[int, os.stat_result]:
        """A read descriptor of a regular, single-link file on the root's filesystem."""
        with self._at("read", rel) as (parent, leaf):
            _check_readable(rel, os.stat(leaf, dir_fd=parent, follow_symlinks=False))
            fd, st = fileio.open_regular(leaf, opener=lambda name, flags: self._open_at(parent, [name], flags),
                                         shown=_show(rel))
            try:
                _check_readable(rel, st)
                if st.st_dev != self._dev:
                    raise ConfinementError(f"{_show(rel)} is on another filesystem (a mount point); it is never read")
            except BaseException:
                os.close(fd)
                raise
            return fd, st

    def read_bytes(self, rel: str, max_bytes: int | None = None) -> bytes:
        """Whole content of a regular file; more than `max_bytes` -> FileTooLargeError."""
        limit = self.max_read_bytes if max_bytes is None else max_bytes
        if not isinstance(limit, int) or limit < 0:
            raise ValueError(f"max_bytes must be a non-negative int, not {max_bytes!r}")
        fd, st = self._open_regular(rel)
        try:
            if st.st_size > limit:
                raise FileTooLargeError(errno.EFBIG, f"{_show(rel)} is {st.st_size} bytes; the limit is {limit}")
            data = fileio.read_upto(fd, limit + 1)
        finally:
            os.close(fd)
        if len(data) > limit:
            raise FileTooLargeError(errno.EFBIG, f"{_show(rel)} grew past the limit of {limit} bytes")
        return data

    def read_head(self, rel: str, n: int) -> bytes:
        """At most the first `n` bytes of a regular file, without reading the rest."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"n must be a non-negative int, not {n!r}")
        fd, _ = self._open_regular(rel)
        try:
            return fileio.read_upto(fd, n)
        finally:
            os.close(fd)

    def stat(self, rel: str) -> os.stat_result:
        """lstat of the leaf (a symlink is reported as a symlink, never followed)."""
        with self._at("stat", rel) as (parent, leaf):
            return os.stat(leaf, dir_fd=parent, follow_symlinks=False)

    def exists(self, rel: str) -> bool:
        try:
            self.stat(rel)
            return True
        except FileNotFoundError:
            return False

    def listdir(self, rel: str = "") -> list[str]:
        """Sorted entry names of a directory (dot-leading and unaddressable names omitted)."""
        with self._at("list", rel, whole=True) as (fd, _):
            return sorted(n for n in _names(fd) if component_problem(n) is None)

    def scan(self, rel: str = "") -> list[TreeEntry]:
        """Every entry beneath `rel` (default: the whole root) but dot-leading ones, with its
        lstat and, for a name the grammar refuses, the problem (then it cannot be opened
        through this Root; a refused folder's entries carry its problem). No link is followed
        and no other filesystem entered."""
        out: list[TreeEntry] = []

        def visit(dirfd: int, name: str, path: str, inherited: str | None) -> None:
            if name[0] == ".":
                return
            try:
                st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            except OSError:
                return   # vanished since the listing
            out.append(TreeEntry(path, st, inherited or component_problem(name)))

        self._tree("list", rel, visit)
        return out

    def walk_files(self, rel: str = "") -> list[str]:
        """Sorted relative paths of every regular file beneath `rel` (default: the whole root).

        No link is followed, other filesystems are not entered, and dot-leading or otherwise
        unaddressable names (which no caller could open) are skipped, files and directories alike.
        """
        return sorted(e.path for e in self.scan(rel) if e.problem is None and _stat.S_ISREG(e.stat.st_mode))

    def _tree(self, op: str, rel: str, visit: Callable[[int, str, str, str | None], None]) -> None:
        """The one tree walker: `visit(dir fd, name, path, problem of a containing folder)` for
        every entry, depth-first, descending into directories (never a link or another
        filesystem; a dot-leading folder is never entered)."""
        with self._at(op, rel, whole=True) as (fd, _):
            self._walk_tree(fd, rel, rel.count("/") + 1 if rel else 0, visit, None)

    def _walk_tree(self, fd: int, prefix: str, depth: int, visit: Callable[[int, str, str, str | None], None],
                   inherited: str | None) -> None:
        with os.scandir(fd) as it:
            entries = list(it)
        for e in entries:
            path = f"{prefix}/{e.name}" if prefix else e.name
            visit(fd, e.name, path, inherited)
            if e.name.startswith(".") or not e.is_dir(follow_symlinks=False) or depth + 1 >= MAX_DEPTH:
                continue
            try:
                sub = self._open_at(fd, [e.name], _REAL_DIR)   # openat2: not even a same-fs bind mount
            except OSError:
                continue  # vanished, swapped for a link, or a mount point: skip it
            try:
                why = component_problem(e.name)
                self._walk_tree(sub, path, depth + 1, visit, inherited or (f"folder {_show(e.name)} {why}" if why else None))
            finally:
                os.close(sub)

    # -- writes -------------------------------------------------------------------------

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Atomically replace (or create) `rel` with `data`; missing parents made 0o700.

        policy.fileio.write_atomic in the parent descriptor: temp file O_CREAT|O_EXCL|O_NOFOLLOW
        0o600, write, fsync, renameat onto the leaf, fsync the directory. A symlink or hard link
        at the leaf is replaced as a directory entry; nothing is ever written through it.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, not {type(data).__name__}")
        with self._at("write", rel, create=True) as (parent, leaf):
            _refuse_non_file_leaf(parent, leaf, rel)
            fileio.write_atomic(leaf, data, dir_fd=parent)

    def write_over(self, rel: str, data: bytes, *, expect: bytes | None,
                   keep: Callable[[bytes], None] | None = None, max_bytes: int | None = None) -> bool:
        """Write `data` at `rel` only over exactly `expect` (None: only where nothing is): True
        if written, False if `rel` held something else when the new bytes went in (nothing of
        ours stays; see policy.fileio.swap_in). The exchange is in the parent descriptor:
        renameat2(RENAME_EXCHANGE) swaps the new file in, what it displaced is compared with
        `expect`, and a difference (a save that landed after the caller's last look) is swapped
        back; a save landing meanwhile is handed to `keep` before it leaves the name. Where the
        kernel or filesystem cannot exchange, a plain rename as `write_bytes` does (True)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, not {type(data).__name__}")
        limit = self.max_read_bytes if max_bytes is None else max_bytes
        with self._at("write", rel, create=True) as (parent, leaf):
            _refuse_non_file_leaf(parent, leaf, rel)
            if expect is None:
                try:
                    fileio.write_new(leaf, data, dir_fd=parent)
                except FileExistsError:
                    return False      # created meanwhile: that file stays
                return True
            try:
                return fileio.swap_in(leaf, data, dir_fd=parent, expect=bytes(expect), keep=keep, max_bytes=limit)
            except fileio.ExchangeUnsupported:
                fileio.write_atomic(leaf, data, dir_fd=parent)    # today's path (doctor says so)
                return True

    def remove_if(self, rel: str, *, expect: bytes, keep: Callable[[bytes], None] | None = None,
                  max_bytes: int | None = None) -> bool:
        """Remove the file `rel` only if it holds exactly `expect`: True if removed, False if it
        held something else (it stays, or a save that took its name meanwhile goes to `keep`;
        see policy.fileio.take_out)."""
        limit = self.max_read_bytes if max_bytes is None else max_bytes
        with self._at("remove", rel) as (parent, leaf):
            return fileio.take_out(leaf, dir_fd=parent, expect=bytes(expect), keep=keep, max_bytes=limit)

    def can_exchange(self, rel: str = "") -> bool:
        """Can `write_over` swap entries in the folder `rel` (renameat2 RENAME_EXCHANGE on this
        kernel and filesystem)? Probed with two temp files of ours, removed again."""
        with self._at("list", rel, whole=True) as (fd, _):
            return fileio.exchange_supported(fd)

    def mkdirs(self, rel: str) -> None:
        """Create `rel` and any missing parents (0o700); existing directories are fine."""
        with self._at("mkdirs", rel, whole=True, create=True):
            pass

    def remove(self, rel: str) -> None:
        """Remove a file, a link entry (never its target) or an empty directory."""
        with self._at("remove", rel) as (parent, leaf):
            st = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
            (os.rmdir if _stat.S_ISDIR(st.st_mode) else os.unlink)(leaf, dir_fd=parent)
            fileio.fsync_dir(parent)

    def rename(self, old: str, new: str, *, replace: bool = True) -> None:
        """Move `old` to `new` inside the root (missing parents of `new` made 0o700).

        A symlink at `new` is replaced as an entry; with `replace=False` nothing at `new` is
        ever replaced (FileExistsError; renameat2 RENAME_NOREPLACE, or a link then an unlink
        where that is missing). A symlink at `old` is refused: links are only ever replaced or
        removed, never carried around.
        """
        old_parts, new_parts = validate_relpath(old), validate_relpath(new)
        with self._at("rename", old) as (po, lo):
            st = os.stat(lo, dir_fd=po, follow_symlinks=False)
            if _stat.S_ISLNK(st.st_mode):
                raise ConfinementError(f"{_show(old)} is a symlink; links are never moved")
            if not (_stat.S_ISREG(st.st_mode) or _stat.S_ISDIR(st.st_mode)):
                raise ConfinementError(_not_regular(old, st.st_mode))
            if new_parts[: len(old_parts)] == old_parts and len(new_parts) > len(old_parts):
                # refused before any parent of `new` is created inside `old`
                raise ConfinementError(f"cannot move {_show(old)} inside itself ({_show(new)})")
            with self._at("rename onto", new, create=True, other=old) as (pn, ln):
                if _stat.S_ISREG(st.st_mode):
                    _refuse_non_file_leaf(pn, ln, new)
                if not replace:
                    try:
                        fileio.rename_noreplace(po, lo, pn, ln)
                    except FileExistsError:
                        raise _Exists(errno.EEXIST, f"{_show(new)} already exists") from None
                else:
                    os.rename(lo, ln, src_dir_fd=po, dst_dir_fd=pn)
                fileio.fsync_dir(pn)
                if pn != po:
                    fileio.fsync_dir(po)

    def sweep_temp(self, older_than: float = 3600.0, *, dry_run: bool = False) -> int:
        """Remove temp files this project left behind (a writer killed mid-write) anywhere
        under the root: only regular, single-link, 0o600 files of ours (uid) whose name is
        exactly the pattern policy.fileio makes (`.tmp-assistant-` + 16 hex digits), older than
        `older_than` seconds (0 = any age). A person's own `.tmp-draft.tex` is never touched.
        Returns how many (with `dry_run`, how many it would remove, removing none)."""
        cutoff = time.time() - older_than
        removed = 0

        def visit(dirfd: int, name: str, path: str, inherited: str | None) -> None:
            nonlocal removed
            if inherited is not None or not fileio.is_temp_name(name):
                return   # under a name no writer of ours can make, or not our pattern
            with contextlib.suppress(OSError):   # gone already, or a writer finished it
                st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
                if (_stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and _stat.S_IMODE(st.st_mode) == 0o600
                        and st.st_uid == os.geteuid() and (older_than <= 0 or st.st_mtime < cutoff)):
                    if not dry_run:
                        os.unlink(name, dir_fd=dirfd)
                    removed += 1

        self._tree("list", "", visit)
        return removed


# --------------------------------------------------------------------------- helpers


def directory_chain(path: str | os.PathLike, limit: int = 4096) -> list[tuple[int, int]]:
    """(st_dev, st_ino) of the directory at `path` (wherever links in `path` lead: this asks
    where a folder really is) and of every folder above it up to `/`, found by opening `..`
    from descriptors, not by path strings. A Root's boundary holds only if no private folder
    is in the chain of the mount, and the mount is in the chain of none (session start)."""
    fd = os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    chain: list[tuple[int, int]] = []
    try:
        for _ in range(limit):
            st = os.fstat(fd)
            here = (st.st_dev, st.st_ino)
            if chain and chain[-1] == here:   # `..` of / is / itself
                break
            chain.append(here)
            up = os.open("..", os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = up
    finally:
        os.close(fd)
    return chain



_kind = fileio.kind_of


def _not_regular(rel: str, mode: int) -> str:
    extra = "; reads never follow links" if _stat.S_ISLNK(mode) else ""
    return f"{_show(rel)} is {_kind(mode)}, not a regular file{extra}"


def _check_readable(rel: str, st: os.stat_result) -> None:
    if not _stat.S_ISREG(st.st_mode):
        raise ConfinementError(_not_regular(rel, st.st_mode))
    if st.st_nlink > 1:
        # A descriptor walk cannot tell where a hard link's other names live: one may be a file
        # outside the root (a key, the audit log). Reads refuse it; writes replace the entry.
        raise ConfinementError(f"{_show(rel)} has {st.st_nlink} hard links; its other names may be outside "
                               "the root, so it is never read (a copy of its own, with one link, can be)")


def _refuse_non_file_leaf(parent: int, leaf: str, rel: str) -> None:
    try:
        st = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not (_stat.S_ISREG(st.st_mode) or _stat.S_ISLNK(st.st_mode)):
        raise ConfinementError(f"{_show(rel)} is {_kind(st.st_mode)}, not a file; refusing to replace it")


def _names(fd: int) -> list[str]:
    with os.scandir(fd) as it:
        return [e.name for e in it]
