"""Root: file operations confined beneath one directory by descriptors, never by path strings.

Guards: every path the model (or anything else) hands to memory/files operations. A `Root`
holds an open descriptor for its directory; every operation resolves its path from that
descriptor and never follows a symbolic link, so no name, link, or race can reach outside.

The security argument lives in `Root._parent` / `Root._open_dir` (the one resolver); every
public operation is a thin `*at` call on the (parent descriptor, leaf name) it returns.
See docs/confine.md for the argument in prose.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import secrets
import stat as _stat
import sys
import threading
import time
import unicodedata

__all__ = [
    "Root",
    "ConfinementError",
    "FileTooLargeError",
    "FileTooLarge",
    "validate_relpath",
    "openat2_available",
    "MAX_DEPTH",
    "MAX_COMPONENT_BYTES",
    "TEMP_PREFIX",
]

MAX_DEPTH = 32
MAX_COMPONENT_BYTES = 255
TEMP_PREFIX = ".tmp-"
DEFAULT_MAX_READ = 64 * 1024 * 1024
_EAGAIN_RETRIES = 16


def _holding(method):
    """Run `method` with the root descriptor pinned: `close()` from another thread waits to
    close it until every operation using it has finished. Without this, a concurrent close
    frees the descriptor *number* mid-operation, the next `open` anywhere in the process
    reuses it, and the operation resolves its path under that unrelated directory."""
    @functools.wraps(method)
    def pinned(self, *args, **kwargs):
        self._pin()
        try:
            return method(self, *args, **kwargs)
        finally:
            self._unpin()
    return pinned


class ConfinementError(PermissionError):
    """A path was refused: it is malformed, or resolving it would leave the root or follow a link."""


class FileTooLargeError(OSError):
    """A bounded read found more bytes than the caller allowed."""


FileTooLarge = FileTooLargeError  # name used in docs/interfaces.md


# --------------------------------------------------------------------------- validation

# Characters that render like a path separator or a dot. A name containing them is not an
# escape (the kernel sees one literal component), but it would mislead a person reading an
# approval request ("a／..／b" looks like a path), so such names are refused outright.
_LOOKALIKES = {
    "\u2215": "division slash",
    "\u2044": "fraction slash",
    "\u29f8": "big solidus",
    "\uff0f": "fullwidth solidus",
    "\u29f5": "reverse solidus operator",
    "\u2216": "set minus",
    "\ufe68": "small reverse solidus",
    "\uff3c": "fullwidth reverse solidus",
    "\u2024": "one dot leader",
    "\u2025": "two dot leader",
    "\u2026": "horizontal ellipsis",
    "\uff0e": "fullwidth full stop",
    "\ufe52": "small full stop",
    "\u3002": "ideographic full stop",
    "\u2571": "box drawings light diagonal",
    "\u2572": "box drawings light diagonal (reverse)",
    "\u27cb": "mathematical rising diagonal",
    "\u27cd": "mathematical falling diagonal",
    "\u29f9": "big reverse solidus",
    "\uff61": "halfwidth ideographic full stop",
}


def _char_problem(ch: str) -> str | None:
    if ch == "\x00":
        return "contains NUL"
    if ch == "\\":
        return "contains a backslash"
    if ch in _LOOKALIKES:
        return f"contains {_LOOKALIKES[ch]} U+{ord(ch):04X}, which looks like a path character"
    cat = unicodedata.category(ch)
    if cat == "Cc":
        return f"contains control character U+{ord(ch):04X}"
    if cat == "Cf":
        return f"contains format/bidi character U+{ord(ch):04X}"
    if cat in ("Zl", "Zp"):
        return f"contains line/paragraph separator U+{ord(ch):04X}"
    if cat == "Cs":
        return f"contains unpaired surrogate U+{ord(ch):04X}"
    return None


def _component_problem(comp: str) -> str | None:
    if comp == "":
        return "is empty (doubled or trailing slash)"
    if comp in (".", ".."):
        return f"is {comp!r}, which is never allowed"
    if comp.startswith("."):
        return "starts with a dot (dot-leading names are reserved)"
    for ch in comp:
        problem = _char_problem(ch)
        if problem:
            return problem
    # compatibility forms the table above does not list: "℀" is "a/c", "︰" is ".."
    folded = unicodedata.normalize("NFKC", comp)
    if "/" in folded or "\\" in folded:
        return f"reads as {folded!r} once normalised (NFKC), which looks like a path"
    if folded.startswith("."):
        return f"reads as {folded!r} once normalised (NFKC): a dot-leading name"
    if len(comp.encode("utf-8")) > MAX_COMPONENT_BYTES:
        return f"is longer than {MAX_COMPONENT_BYTES} bytes"
    return None


def _show(text: str, limit: int = 80) -> str:
    """A path fragment fit for an error message: repr (control chars escaped), bounded."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def validate_relpath(rel: str) -> list[str]:
    """Split a relative, forward-slashed path into components, or raise ConfinementError.

    Refuses: non-str, empty, absolute, trailing slash, empty / `.` / `..` / dot-leading
    components, NUL, backslash, control, bidi/format and separator-lookalike characters,
    components over 255 bytes, more than MAX_DEPTH components. Nothing is ever decoded
    (`%2e%2e%2f` is a literal name).
    """
    if not isinstance(rel, str):
        raise ConfinementError(f"path must be a str, not {type(rel).__name__}")
    if rel == "":
        raise ConfinementError("path is empty")
    if rel.startswith("/"):
        raise ConfinementError(f"path {_show(rel)} is absolute; paths are relative to the root")
    if rel.endswith("/"):
        raise ConfinementError(f"path {_show(rel)} has a trailing slash")
    parts = rel.split("/")
    if len(parts) > MAX_DEPTH:
        raise ConfinementError(
            f"path has {len(parts)} components; at most {MAX_DEPTH} are allowed"
        )
    for i, comp in enumerate(parts, 1):
        problem = _component_problem(comp)
        if problem:
            raise ConfinementError(f"path component {i} {_show(comp)} {problem}")
    return parts


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


# --------------------------------------------------------------------------- Root


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

    def _pin(self) -> None:
        with self._lock:
            if self._fd is None or self._closed:
                raise ValueError("Root is closed")
            self._refs += 1

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
    # Invariant: every descriptor this class holds names a directory that was reached from
    # the root descriptor by opening one validated component at a time relative to the
    # previous descriptor, with O_NOFOLLOW|O_DIRECTORY (so a symlink is never traversed),
    # or by openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|
    # RESOLVE_NO_XDEV, which the kernel enforces for the whole path in one call.
    # Validation already removed `..`, `.`, absolute paths and separators hidden in names,
    # so there is no way up: each step can only go down into an entry of a directory we
    # already hold. Swapping a component for a symlink between our steps is harmless: the
    # next step refuses the link (ELOOP/ENOTDIR), it never resolves it. Steps are bounded
    # by MAX_DEPTH. The leaf is never resolved here: each operation applies its own *at
    # syscall to (parent_fd, leaf) with no-follow semantics.

    def _root(self) -> int:
        if self._fd is None:
            raise ValueError("Root is closed")
        return self._fd

    def _open_dir(self, parts: list[str], *, create: bool = False,
                  made: list[int] | None = None) -> tuple[int, bool]:
        """Open the directory named by validated `parts`; returns (fd, owned).

        The returned fd is a real (non-O_PATH) directory descriptor, usable for fsync,
        listing and as dir_fd. `owned` is False when it is the root descriptor itself.
        """
        root = self._root()
        if not parts:
            return root, False
        if self._use_openat2:
            try:
                return _openat2(root, os.fsencode("/".join(parts)), _REAL_DIR), True
            except OSError as e:
                global _openat2_state
                if e.errno in (errno.ENOSYS, errno.EPERM, errno.EINVAL, errno.E2BIG):
                    # kernel or seccomp refuses openat2: use the walk from now on
                    _openat2_state = False
                    self._use_openat2 = False
                elif e.errno == errno.EXDEV:
                    raise ConfinementError(
                        f"path {_show('/'.join(parts))} crosses a mount point or leaves the root"
                    ) from None
                elif e.errno not in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EAGAIN,
                                     errno.ENAMETOOLONG):
                    raise
                # Missing (create), a link, or not a directory: the walk below decides, and
                # names the component. The walk is itself confined, so this is never a
                # weaker path, only a slower one.
        return self._walk(root, parts, create=create, made=made), True

    def _walk(self, root: int, parts: list[str], *, create: bool,
              made: list[int] | None = None) -> int:
        cur = root
        try:
            for i, comp in enumerate(parts):
                last = i == len(parts) - 1
                flags = (os.O_RDONLY if last else _DIR_STEP) | _DIR_FLAGS
                nxt = self._step(cur, comp, flags, parts[: i + 1], create, made)
                if cur != root:
                    os.close(cur)
                cur = nxt
            return cur
        except BaseException:
            if cur != root:
                os.close(cur)
            raise

    def _step(self, dirfd: int, comp: str, flags: int, so_far: list[str], create: bool,
              made: list[int] | None = None) -> int:
        created = False
        for attempt in (0, 1):
            try:
                fd = os.open(comp, flags, dir_fd=dirfd)
                break
            except FileNotFoundError:
                # Missing: create it (0o700) once, then open it no-follow like any other
                # component, so a link raced into its place is refused, not followed.
                if not create or attempt:
                    raise FileNotFoundError(
                        errno.ENOENT, f"no such directory {_show('/'.join(so_far))}"
                    ) from None
                try:
                    os.mkdir(comp, 0o700, dir_fd=dirfd)
                    created = True
                    if made is not None:
                        made.append(len(so_far))
                except FileExistsError:
                    pass
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise ConfinementError(
                        f"path component {_show('/'.join(so_far))} {self._why(dirfd, comp)}"
                    ) from None
                raise
        try:
            st = os.fstat(fd)
            if st.st_dev != self._dev:
                raise ConfinementError(
                    f"path component {_show('/'.join(so_far))} crosses a mount point"
                )
            if created:
                _fsync_dir(dirfd)
        except BaseException:
            os.close(fd)
            raise
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

    def _open_listable(self, rel: str) -> int:
        """A fresh, owned directory fd for listing (never the shared root fd: a listing
        moves the descriptor's offset, which concurrent listings would share)."""
        parts = validate_relpath(rel) if rel != "" else []
        if parts:
            fd, _ = self._open_dir(parts)
            return fd
        return os.open(".", _REAL_DIR, dir_fd=self._root())

    def _parent(self, rel: str, *, create: bool = False,
                made: list[int] | None = None) -> tuple[int, bool, str]:
        """The resolver: validated `rel` -> (parent dir fd, owned, leaf name)."""
        parts = validate_relpath(rel)
        fd, owned = self._open_dir(parts[:-1], create=create, made=made)
        return fd, owned, parts[-1]

    def _unmake(self, rel: str, made: list[int]) -> None:
        """After a failed write/rename: remove the parent directories it created (deepest
        first), if still empty. Each is re-resolved through the confined resolver and
        removed with rmdir, which never follows a link and never removes a non-empty one."""
        parts = validate_relpath(rel)
        for n in sorted(set(made), reverse=True):
            try:
                fd, owned = self._open_dir(parts[: n - 1])
            except OSError:
                return
            try:
                os.rmdir(parts[n - 1], dir_fd=fd)
            except OSError:
                return  # no longer empty (someone else wrote there), or gone
            finally:
                if owned:
                    os.close(fd)

    # -- reads --------------------------------------------------------------------------

    def _open_regular(self, rel: str) -> tuple[int, os.stat_result]:
        parent, owned, leaf = self._parent(rel)
        try:
            try:
                pre = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                raise FileNotFoundError(errno.ENOENT, f"no such file {_show(rel)}") from None
            if not _stat.S_ISREG(pre.st_mode):
                raise ConfinementError(_not_regular(rel, pre.st_mode))
            if pre.st_nlink > 1:
                raise ConfinementError(_hard_linked(rel, pre.st_nlink))
            flags = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_NOCTTY | _O_CLOEXEC
            try:
                if self._use_openat2:
                    # RESOLVE_NO_XDEV also at the leaf: a file bind-mounted over a note (even
                    # from this same filesystem) is EXDEV, not read
                    fd = _openat2(parent, os.fsencode(leaf), flags)
                else:
                    fd = os.open(leaf, flags, dir_fd=parent)
            except FileNotFoundError:
                raise FileNotFoundError(errno.ENOENT, f"no such file {_show(rel)}") from None
            except OSError as e:
                if e.errno == errno.ENOENT:  # from openat2, which raises plain OSError
                    raise FileNotFoundError(errno.ENOENT, f"no such file {_show(rel)}") from None
                if e.errno == errno.EXDEV:
                    raise ConfinementError(
                        f"{_show(rel)} is a mount point (or left the root); it is never read") from None
                if e.errno in (errno.ELOOP, errno.EMLINK):
                    raise ConfinementError(f"{_show(rel)} is a symlink; reads never follow links") from None
                if e.errno == errno.ENXIO:
                    raise ConfinementError(f"{_show(rel)} is a socket, not a regular file") from None
                raise
            try:
                st = os.fstat(fd)
                if not _stat.S_ISREG(st.st_mode):
                    raise ConfinementError(_not_regular(rel, st.st_mode))
                if st.st_nlink > 1:
                    raise ConfinementError(_hard_linked(rel, st.st_nlink))
                if st.st_dev != self._dev:
                    raise ConfinementError(f"{_show(rel)} is on another filesystem (a mount point); "
                                           "it is never read")
            except BaseException:
                os.close(fd)
                raise
            return fd, st
        finally:
            if owned:
                os.close(parent)

    @_holding
    def read_bytes(self, rel: str, max_bytes: int | None = None) -> bytes:
        """Whole content of a regular file; more than `max_bytes` -> FileTooLargeError."""
        limit = self.max_read_bytes if max_bytes is None else max_bytes
        if not isinstance(limit, int) or limit < 0:
            raise ValueError(f"max_bytes must be a non-negative int, not {max_bytes!r}")
        fd, st = self._open_regular(rel)
        try:
            if st.st_size > limit:
                raise FileTooLargeError(
                    errno.EFBIG, f"{_show(rel)} is {st.st_size} bytes; the limit is {limit}"
                )
            data = _read_upto(fd, limit + 1)
            if len(data) > limit:
                raise FileTooLargeError(errno.EFBIG, f"{_show(rel)} grew past the limit of {limit} bytes")
            return data
        finally:
            os.close(fd)

    @_holding
    def read_head(self, rel: str, n: int) -> bytes:
        """At most the first `n` bytes of a regular file, without reading the rest."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"n must be a non-negative int, not {n!r}")
        fd, _ = self._open_regular(rel)
        try:
            return _read_upto(fd, n)
        finally:
            os.close(fd)

    @_holding
    def stat(self, rel: str) -> os.stat_result:
        """lstat of the leaf (a symlink is reported as a symlink, never followed)."""
        parent, owned, leaf = self._parent(rel)
        try:
            try:
                return os.stat(leaf, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                raise FileNotFoundError(errno.ENOENT, f"no such file or directory {_show(rel)}") from None
        finally:
            if owned:
                os.close(parent)

    @_holding
    def exists(self, rel: str) -> bool:
        try:
            self.stat(rel)
            return True
        except FileNotFoundError:
            return False

    @_holding
    def listdir(self, rel: str = "") -> list[str]:
        """Sorted entry names of a directory (dot-leading and unaddressable names omitted)."""
        fd = self._open_listable(rel)
        try:
            return sorted(n for n in _names(fd) if _component_problem(n) is None)
        finally:
            os.close(fd)

    @_holding
    def walk_files(self, rel: str = "") -> list[str]:
        """Sorted relative paths of every regular file beneath `rel` (default: the whole root).

        No link is followed, other filesystems are not entered, and dot-leading or otherwise
        unaddressable names (which no caller could open) are skipped, files and directories alike.
        """
        fd = self._open_listable(rel)
        out: list[str] = []
        try:
            self._walk_tree(fd, rel, rel.count("/") + 1 if rel else 0, out, None)
        finally:
            os.close(fd)
        return sorted(out)

    def _walk_tree(self, fd: int, prefix: str, depth: int, out: list[str], on_temp) -> None:
        with os.scandir(fd) as it:
            entries = list(it)
        for e in entries:
            name = e.name
            if on_temp is not None and name.startswith(TEMP_PREFIX):
                on_temp(fd, name)
                continue
            if _component_problem(name) is not None:
                continue
            rel = f"{prefix}/{name}" if prefix else name
            if e.is_symlink():
                continue
            if e.is_file(follow_symlinks=False):
                out.append(rel)
            elif e.is_dir(follow_symlinks=False) and depth + 1 < MAX_DEPTH:
                try:
                    if self._use_openat2:  # RESOLVE_NO_XDEV: not even a same-fs bind mount
                        sub = _openat2(fd, os.fsencode(name), _REAL_DIR)
                    else:
                        sub = os.open(name, _REAL_DIR, dir_fd=fd)
                except OSError:
                    continue  # vanished, swapped for a link, or a mount point: skip it
                try:
                    if os.fstat(sub).st_dev == self._dev:
                        self._walk_tree(sub, rel, depth + 1, out, on_temp)
                finally:
                    os.close(sub)

    # -- writes -------------------------------------------------------------------------

    @_holding
    def write_bytes(self, rel: str, data: bytes) -> None:
        """Atomically replace (or create) `rel` with `data`; missing parents made 0o700.

        Temp file in the same parent descriptor (O_CREAT|O_EXCL|O_NOFOLLOW, 0o600), write,
        fsync, renameat onto the leaf, fsync the directory. A symlink or hard link at the
        leaf is replaced as a directory entry; nothing is ever written through it.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, not {type(data).__name__}")
        made: list[int] = []
        parent, owned, leaf = self._parent(rel, create=True, made=made)
        written = False
        try:
            _refuse_non_file_leaf(parent, leaf, rel)
            tmp = _new_temp_name()
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC,
                         0o600, dir_fd=parent)
            try:
                try:
                    view = memoryview(data).cast("B")
                    while view:
                        view = view[os.write(fd, view):]
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.rename(tmp, leaf, src_dir_fd=parent, dst_dir_fd=parent)
                written = True
            except BaseException as exc:
                _unlink_quietly(parent, tmp)
                if isinstance(exc, (IsADirectoryError, NotADirectoryError)) or (
                        isinstance(exc, OSError) and exc.errno in (errno.EEXIST, errno.ENOTEMPTY)):
                    raise ConfinementError(f"{_show(rel)} is a directory, not a file") from None
                raise
            _fsync_dir(parent)
        finally:
            # any failure before the rename (even creating the temp file: no inodes, EDQUOT)
            # takes back the parents this call made
            if not written and made:
                self._unmake(rel, made)
            if owned:
                os.close(parent)

    @_holding
    def mkdirs(self, rel: str) -> None:
        """Create `rel` and any missing parents (0o700); existing directories are fine."""
        parts = validate_relpath(rel)
        fd, owned = self._open_dir(parts, create=True)
        if owned:
            os.close(fd)

    @_holding
    def remove(self, rel: str) -> None:
        """Remove a file, a link entry (never its target) or an empty directory."""
        parent, owned, leaf = self._parent(rel)
        try:
            try:
                st = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
                if _stat.S_ISDIR(st.st_mode):
                    os.rmdir(leaf, dir_fd=parent)
                else:
                    os.unlink(leaf, dir_fd=parent)
            except FileNotFoundError:
                raise FileNotFoundError(errno.ENOENT, f"no such file or directory {_show(rel)}") from None
            except OSError as e:
                if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise OSError(e.errno, f"directory {_show(rel)} is not empty") from None
                if e.errno in (errno.EISDIR, errno.ENOTDIR, errno.EPERM):
                    raise ConfinementError(f"{_show(rel)} changed while being removed") from None
                raise
            _fsync_dir(parent)
        finally:
            if owned:
                os.close(parent)

    @_holding
    def rename(self, old: str, new: str) -> None:
        """Move `old` to `new` inside the root (missing parents of `new` made 0o700).

        A symlink at `new` is replaced as an entry. A symlink at `old` is refused: links are
        only ever replaced or removed, never carried around.
        """
        old_parts = validate_relpath(old)
        new_parts = validate_relpath(new)
        po, own_o, lo = self._parent(old)
        try:
            try:
                st = os.stat(lo, dir_fd=po, follow_symlinks=False)
            except FileNotFoundError:
                raise FileNotFoundError(errno.ENOENT, f"no such file or directory {_show(old)}") from None
            if _stat.S_ISLNK(st.st_mode):
                raise ConfinementError(f"{_show(old)} is a symlink; links are never moved")
            if not (_stat.S_ISREG(st.st_mode) or _stat.S_ISDIR(st.st_mode)):
                raise ConfinementError(_not_regular(old, st.st_mode))
            if len(new_parts) > len(old_parts) and new_parts[: len(old_parts)] == old_parts:
                # refused before any parent of `new` is created inside `old`
                raise ConfinementError(f"cannot move {_show(old)} inside itself ({_show(new)})")
            made: list[int] = []
            pn, own_n, ln = self._parent(new, create=True, made=made)
            ok = False
            try:
                if _stat.S_ISREG(st.st_mode):
                    _refuse_non_file_leaf(pn, ln, new)
                try:
                    os.rename(lo, ln, src_dir_fd=po, dst_dir_fd=pn)
                except FileNotFoundError:
                    raise FileNotFoundError(errno.ENOENT, f"{_show(old)} vanished during rename") from None
                except OSError as e:
                    if e.errno in (errno.EISDIR, errno.ENOTDIR, errno.ENOTEMPTY, errno.EEXIST):
                        raise ConfinementError(
                            f"cannot rename {_show(old)} onto {_show(new)}: {os.strerror(e.errno)}"
                        ) from None
                    if e.errno == errno.EINVAL:
                        raise ConfinementError(
                            f"cannot move directory {_show(old)} inside itself ({_show(new)})"
                        ) from None
                    raise
                ok = True
                _fsync_dir(pn)
                if pn != po:
                    _fsync_dir(po)
            finally:
                if not ok and made:
                    self._unmake(new, made)
                if own_n:
                    os.close(pn)
        finally:
            if own_o:
                os.close(po)

    @_holding
    def sweep_temp(self, older_than: float = 3600.0) -> int:
        """Remove our stale temp files (regular files named TEMP_PREFIX*) older than
        `older_than` seconds anywhere under the root (0 = all). Returns how many."""
        cutoff = time.time() - older_than
        removed = 0

        def on_temp(dirfd: int, name: str) -> None:
            nonlocal removed
            try:
                st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
                if _stat.S_ISREG(st.st_mode) and (older_than <= 0 or st.st_mtime < cutoff):
                    os.unlink(name, dir_fd=dirfd)
                    removed += 1
            except OSError:
                pass  # gone already, or a writer finished it: not ours to worry about

        fd = self._open_listable("")
        try:
            self._walk_tree(fd, "", 0, [], on_temp)
        finally:
            os.close(fd)
        return removed


# --------------------------------------------------------------------------- helpers


def _kind(mode: int) -> str:
    for test, name in ((_stat.S_ISDIR, "a directory"), (_stat.S_ISLNK, "a symlink"),
                       (_stat.S_ISFIFO, "a FIFO"), (_stat.S_ISSOCK, "a socket"),
                       (_stat.S_ISCHR, "a character device"), (_stat.S_ISBLK, "a block device"),
                       (_stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "an unknown file type"


def _not_regular(rel: str, mode: int) -> str:
    extra = "; reads never follow links" if _stat.S_ISLNK(mode) else ""
    return f"{_show(rel)} is {_kind(mode)}, not a regular file{extra}"


def _hard_linked(rel: str, nlink: int) -> str:
    # A descriptor walk cannot tell where a hard link's other names live: one may be a file
    # outside the root (a key, the audit log). Reads refuse it; writes replace the entry.
    return (f"{_show(rel)} has {nlink} hard links; its other names may be outside the root, "
            "so it is never read (write it to replace it with a file of its own)")


def _refuse_non_file_leaf(parent: int, leaf: str, rel: str) -> None:
    try:
        st = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not (_stat.S_ISREG(st.st_mode) or _stat.S_ISLNK(st.st_mode)):
        raise ConfinementError(f"{_show(rel)} is {_kind(st.st_mode)}, not a file; refusing to replace it")


def _new_temp_name() -> str:
    return TEMP_PREFIX + secrets.token_hex(8)


def _read_upto(fd: int, n: int) -> bytes:
    chunks = []
    left = n
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _names(fd: int) -> list[str]:
    with os.scandir(fd) as it:
        return [e.name for e in it]


def _fsync_dir(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno != errno.EBADF:  # an O_PATH descriptor: reopen "." for real
            if e.errno in (errno.EINVAL, errno.ENOTSUP):
                return  # filesystem without directory fsync
            raise
        real = os.open(".", os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC, dir_fd=fd)
        try:
            os.fsync(real)
        finally:
            os.close(real)


def _unlink_quietly(dirfd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dirfd)
    except OSError:
        pass
