"""Safe file I/O, written once: every module that reads, replaces, locks or watches a file uses this.

Guards four things, for policy/ and assistant/ alike (it imports nothing from the project):
- **Reads never follow a link or hang.** `open_regular` opens `O_NOFOLLOW|O_NONBLOCK|O_NOCTTY`
  (a symlink fails, a FIFO cannot block the open), then `fstat` must say regular file, and the
  size is bounded: a bad file is a specific `OSError` subclass with a clear message, never data.
- **A reader sees the old bytes or the new, never half.** `write_atomic` writes a temp file
  created `O_CREAT|O_EXCL|O_NOFOLLOW` (0o600 unless told otherwise) in the *same* directory
  descriptor, fsyncs it, renames it onto the name (or links it, never replacing, for
  create-once files) and fsyncs the directory. `replacing` does the same for content a third
  party writes (a file or a whole folder). Temp names have one exact pattern (`TEMP_PREFIX` +
  16 hex digits, `is_temp_name`), so a sweep can never mistake a person's file for ours.
- **No lock waits forever.** `FileLock` takes an exclusive `flock` with a bounded wait; the
  timeout is `LockTimeout` naming the holder's pid, which callers turn into a deny with a
  message. A lock dies with its holder (flock belongs to the open file description).
- **Watching uses watchfiles' public API** (`watchfiles.watch` with `stop_event`,
  `rust_timeout`, `yield_on_timeout`); `watch_dir` yields an empty batch first once the
  watches are in place, so a caller that checks state after that first batch misses nothing.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import shutil
import stat as _stat
import time
from pathlib import Path
from typing import Callable, Iterator, Protocol

__all__ = [
    "TEMP_PREFIX", "temp_name", "is_temp_name",
    "READ_FLAGS", "NotRegularFile", "FileTooLargeError", "open_regular", "read_regular", "read_upto",
    "check_in_place", "write_all",
    "write_atomic", "replacing", "fsync_dir",
    "kind_of", "DEFAULT_LOCK_TIMEOUT", "LockTimeout", "FileLock", "locked",
    "watch_dir",
]

# ---------------------------------------------------------------------------- temp names

TEMP_PREFIX = ".tmp-assistant-"
_TEMP_NAME = re.compile(r"\.tmp-assistant-[0-9a-f]{16}\Z")


def temp_name() -> str:
    """A fresh temp name: dot-leading (no model-facing path can name it), of the one exact pattern."""
    return TEMP_PREFIX + secrets.token_hex(8)


def is_temp_name(name: str) -> bool:
    """True only for names `temp_name()` makes (`.tmp-assistant-` + 16 lower-case hex digits)."""
    return _TEMP_NAME.match(name) is not None


# ---------------------------------------------------------------------------- reading

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)
# O_NONBLOCK: a FIFO planted at the name fails the regular-file check instead of hanging the
# open (regular files ignore the flag); O_NOCTTY: a terminal device never becomes ours.
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | _O_NONBLOCK | _O_NOCTTY | _O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | _O_CLOEXEC


class NotRegularFile(OSError):
    """The name is a symlink, FIFO, socket, device or directory where a regular file was expected."""


class FileTooLargeError(OSError):
    """A bounded read found more bytes than the caller allowed."""


class Opener(Protocol):
    def __call__(self, name: str, flags: int) -> int: ...


def kind_of(mode: int) -> str:
    """'a directory', 'a symlink', 'a FIFO', ... for an st_mode (for messages)."""
    for test, name in ((_stat.S_ISDIR, "a directory"), (_stat.S_ISLNK, "a symlink"),
                       (_stat.S_ISFIFO, "a FIFO"), (_stat.S_ISSOCK, "a socket"),
                       (_stat.S_ISCHR, "a character device"), (_stat.S_ISBLK, "a block device"),
                       (_stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "an unknown file type"


def open_regular(path: str | os.PathLike[str], *, dir_fd: int | None = None, max_bytes: int | None = None,
                 opener: Opener | None = None, shown: str | None = None) -> tuple[int, os.stat_result]:
    """Open a regular file for reading without following a link; (fd, fstat). The caller closes fd.

    `opener(name, flags)` replaces `os.open(name, flags, dir_fd=dir_fd)` (confine passes its
    openat2). Raises FileNotFoundError, NotRegularFile (symlink, FIFO, socket, device, directory),
    FileTooLargeError (size over `max_bytes`) or the OSError of the open.
    """
    shown = shown if shown is not None else repr(os.fspath(path))
    try:
        fd = opener(os.fspath(path), READ_FLAGS) if opener else os.open(path, READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):   # EMLINK: FreeBSD's O_NOFOLLOW answer
            raise NotRegularFile(errno.ELOOP, f"{shown} is a symlink; reads never follow links") from None
        if exc.errno == errno.ENXIO:
            raise NotRegularFile(errno.ENXIO, f"{shown} is a socket, not a regular file") from None
        if exc.errno == errno.ENOENT and not isinstance(exc, FileNotFoundError):
            raise FileNotFoundError(errno.ENOENT, f"no such file {shown}") from None
        raise
    try:
        st = os.fstat(fd)
        if not _stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, f"{shown} is {kind_of(st.st_mode)}, not a regular file")
        if max_bytes is not None and st.st_size > max_bytes:
            raise FileTooLargeError(errno.EFBIG, f"{shown} is {st.st_size} bytes; the limit is {max_bytes}")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def check_in_place(fd: int, shown: str) -> os.stat_result:
    """The fstat of a descriptor about to be written *in place* (a lock's pid, a log's append, a
    head's pwrite, a truncation): it must be a regular file with exactly one link. O_NOFOLLOW
    stops a symlink but not a hard link: a name linked to a person's file elsewhere would have
    that file truncated or overwritten. NotRegularFile otherwise (the caller closes fd)."""
    st = os.fstat(fd)
    if not _stat.S_ISREG(st.st_mode):
        raise NotRegularFile(errno.EINVAL, f"{shown} is {kind_of(st.st_mode)}, not a regular file")
    if st.st_nlink != 1:
        raise NotRegularFile(errno.EMLINK, f"{shown} has {st.st_nlink} hard links (its other names may be "
                                           "a person's files elsewhere); it is never written in place")
    return st


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write every byte of `data` to `fd` (os.write may write fewer) and fsync it."""
    view = memoryview(data).cast("B")
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


def read_upto(fd: int, n: int) -> bytes:
    """At most `n` bytes from `fd` (fewer at end of file)."""
    chunks = []
    left = n
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_regular(path: str | os.PathLike[str], *, max_bytes: int, dir_fd: int | None = None,
                 opener: Opener | None = None, shown: str | None = None) -> bytes:
    """The whole content of a regular file (see `open_regular`), at most `max_bytes`."""
    shown = shown if shown is not None else repr(os.fspath(path))
    fd, _ = open_regular(path, dir_fd=dir_fd, max_bytes=max_bytes, opener=opener, shown=shown)
    try:
        data = read_upto(fd, max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise FileTooLargeError(errno.EFBIG, f"{shown} grew past the limit of {max_bytes} bytes")
    return data


# ---------------------------------------------------------------------------- writing

def fsync_dir(fd: int) -> None:
    """fsync a directory descriptor (an O_PATH one is reopened; a filesystem without directory
    fsync is fine)."""
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno in (errno.EINVAL, errno.ENOTSUP):
            return
        if e.errno != errno.EBADF:
            raise
        real = os.open(".", _DIR_FLAGS, dir_fd=fd)   # an O_PATH descriptor: reopen "." for real
        try:
            os.fsync(real)
        finally:
            os.close(real)


@contextlib.contextmanager
def _parent_of(path: str | os.PathLike[str], dir_fd: int | None) -> Iterator[tuple[int, str]]:
    """(directory fd, leaf name): `dir_fd` and `path` as a name in it, or `path`'s own folder."""
    if dir_fd is not None:
        yield dir_fd, os.fspath(path)
        return
    p = Path(path)
    fd = os.open(p.parent, _DIR_FLAGS)
    try:
        yield fd, p.name
    finally:
        os.close(fd)


def _unlink_quietly(dir_fd: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)


def _commit(dir_fd: int, tmp: str, name: str, replace: bool) -> None:
    """Put the finished temp file at `name`: rename (replacing), or link (never replacing:
    FileExistsError if `name` exists); then fsync the directory."""
    if replace:
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    else:
        try:
            os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        finally:
            _unlink_quietly(dir_fd, tmp)
    fsync_dir(dir_fd)


def write_atomic(path: str | os.PathLike[str], data: bytes | bytearray | memoryview, *,
                 dir_fd: int | None = None, mode: int | None = 0o600, replace: bool = True) -> None:
    """Atomically make `path` hold exactly `data`.

    `dir_fd`: `path` is a name in that directory (confine passes its resolved parent). `mode`:
    the new file's permissions (less the umask, which can only remove bits; None: 0o666). `replace=False`: never replace an
    existing file (FileExistsError). On any failure the temp file is removed.
    """
    if dir_fd is not None:
        _write_in(dir_fd, os.fspath(path), data, mode, replace)
        return
    with _parent_of(path, None) as (dfd, name):
        _write_in(dfd, name, data, mode, replace)


def _write_in(dfd: int, name: str, data: bytes | bytearray | memoryview, mode: int | None, replace: bool) -> None:
    tmp = temp_name()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC,
                 0o666 if mode is None else mode, dir_fd=dfd)
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        _commit(dfd, tmp, name, replace)
    except BaseException:
        _unlink_quietly(dfd, tmp)
        raise


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], *, directory: bool = False,
              mode: int | None = 0o600) -> Iterator[Path]:
    """Yield a temp path beside `path` for someone else to fill (a file created empty with
    O_EXCL|O_NOFOLLOW, or a 0o700 folder); on success it is fsynced and renamed onto `path`
    (a folder only onto an empty folder or nothing) and the parent is fsynced; on failure it
    is removed."""
    with _parent_of(path, None) as (dfd, name):
        tmp = temp_name()
        tmp_path = Path(path).parent / tmp
        if directory:
            os.mkdir(tmp, 0o700, dir_fd=dfd)
        else:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC,
                             0o666 if mode is None else mode, dir_fd=dfd))
        try:
            yield tmp_path
            fd = os.open(tmp, (_DIR_FLAGS if directory else os.O_RDONLY | _O_CLOEXEC) | os.O_NOFOLLOW,
                         dir_fd=dfd)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            _commit(dfd, tmp, name, True)
        except BaseException:
            if directory:
                shutil.rmtree(tmp_path, ignore_errors=True)
            else:
                _unlink_quietly(dfd, tmp)
            raise


# ---------------------------------------------------------------------------- locking

DEFAULT_LOCK_TIMEOUT = 10.0
_POLL_START = 0.001
_POLL_MAX = 0.05


class LockTimeout(TimeoutError):
    """The lock was not obtained within its bounded wait (a live holder kept it), or its lock
    file is unusable (a symlink). Callers turn it into a deny with this message."""


class FileLock:
    """`with FileLock(path, timeout=10, what="memory"):` holds an exclusive flock for the block.

    The wait is bounded: polled with a non-blocking flock, backing off to 50 ms, until `timeout`
    seconds have passed, then LockTimeout. Re-entrant use of one instance is an error. The lock
    file is created 0o600 (its folder must exist) and records the holder's pid for the message
    only; the pid never decides anything.
    """

    def __init__(self, path: str | os.PathLike[str], timeout: float = DEFAULT_LOCK_TIMEOUT, *,
                 what: str = "memory", record_pid: bool = True) -> None:
        self.path = Path(path)
        self.timeout = float(timeout)
        self.what = what
        # False for locks taken on every append (history, audit): rewriting the pid each time
        # costs a data flush on ext4, and the pid only ever serves the timeout message
        self.record_pid = record_pid
        self._fd: int | None = None

    def acquire(self) -> None:
        if self._fd is not None:
            raise RuntimeError(f"{self.path}: already held by this FileLock")
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _O_CLOEXEC | os.O_NOFOLLOW | _O_NONBLOCK, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LockTimeout(f"{self.path} is a symlink; refusing to use it as the {self.what} lock") from None
            raise
        try:
            try:
                check_in_place(fd, str(self.path))
            except NotRegularFile as exc:
                raise LockTimeout(f"refusing to use {self.path} as the {self.what} lock: {exc.strerror}") from None
            self._wait(fd)
            if self.record_pid:
                with contextlib.suppress(OSError):   # the pid is only for messages
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def _wait(self, fd: int) -> None:
        deadline = time.monotonic() + self.timeout
        delay = _POLL_START
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                now = time.monotonic()
                if now >= deadline:
                    holder = _read_holder(fd)
                    who = f" by process {holder}" if holder else ""
                    raise LockTimeout(
                        f"{self.what} is locked{who} (lock {self.path}); gave up after {self.timeout:g}s. "
                        "Another writer is busy; try again. A lock left by a process that has died "
                        "is released automatically."
                    ) from None
                time.sleep(min(delay, max(0.0, deadline - now)))
                delay = min(delay * 2, _POLL_MAX)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> "FileLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def locked(path: str | os.PathLike[str], *, timeout: float, what: str,
           error: Callable[[str], Exception]) -> Iterator[None]:
    """Hold FileLock(path) for the block; a timeout or an unusable lock file is `error(message)`
    (the caller's own error type, which its callers already turn into a deny)."""
    lock = FileLock(path, timeout=timeout, what=what)
    try:
        lock.acquire()
    except LockTimeout as exc:
        raise error(f"{exc} Nothing was changed.") from None
    except OSError as exc:
        raise error(f"cannot lock {path}: {exc.strerror or exc}") from None
    try:
        yield
    finally:
        lock.release()


def _read_holder(fd: int) -> str:
    try:
        raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return raw if raw.isdigit() else ""


# ---------------------------------------------------------------------------- watching

class StopEvent(Protocol):
    def is_set(self) -> bool: ...


Change = tuple[int, str]   # (watchfiles.Change value: 1 added, 2 modified, 3 deleted; absolute path)


def watch_dir(path: str | os.PathLike[str], *, stop_event: StopEvent | None = None, tick: float = 0.5,
              debounce_ms: int = 50, step_ms: int = 20, recursive: bool = True,
              accept: Callable[[Change], bool] | None = None) -> Iterator[set[Change]]:
    """Yield batches of changes under `path` (recursive) until `stop_event` is set.

    The first batch comes once the watches are in place (empty unless something changed
    already); after that an empty batch comes at least every `tick` seconds, so a caller can
    re-check its state and its own deadline. Ctrl-C in the main thread raises KeyboardInterrupt.
    """
    import watchfiles

    for changes in watchfiles.watch(path, watch_filter=None, debounce=debounce_ms, step=step_ms,
                                    stop_event=stop_event, rust_timeout=max(1, int(tick * 1000)),
                                    yield_on_timeout=True, raise_interrupt=True,
                                    recursive=recursive):
        batch = {(int(code), p) for code, p in changes}
        yield {c for c in batch if accept(c)} if accept else batch
