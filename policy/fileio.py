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
- **A change that lands while we write is never overwritten unseen.** `swap_in` puts new bytes
  at a name with `renameat2(RENAME_EXCHANGE)` and compares what it displaced with the bytes the
  caller checked; a difference is swapped back and handed to the caller to keep (a hand edit
  saved in the window between a writer's last check and its rename). `take_out` does the same
  for a removal with plain renames. Where the kernel or filesystem has no exchange
  (`ExchangeUnsupported`; `exchange_supported` probes a folder) the caller falls back.
- **A private folder is reached without following a link.** `open_folder(base, rel)` opens
  `base` (a workspace folder) and then each component of `rel` (`state/transcripts`) with
  `O_DIRECTORY|O_NOFOLLOW`, making missing ones 0o700 and opening them the same way; a link
  at any level is `LinkedFolder`, whose message says the fix (`rm` the link). Writers of
  state/ and history/ work in the descriptor it returns, never by a path string.
- **No lock waits forever.** `FileLock` takes an exclusive `flock` with a bounded wait; the
  timeout is `LockTimeout` naming the holder's pid, which callers turn into a deny with a
  message. A lock dies with its holder (flock belongs to the open file description).
- **Watching uses watchfiles' public API** (`watchfiles.watch` with `stop_event`,
  `rust_timeout`, `yield_on_timeout`); `watch_dir` yields an empty batch first once the
  watches are in place, so a caller that checks state after that first batch misses nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import platform
import re
import secrets
import shlex
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
    "ExchangeUnsupported", "exchange", "exchange_supported", "swap_in", "take_out", "rename_noreplace", "write_new",
    "LinkedFolder", "open_folder",
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


# ---------------------------------------------------------------------------- private folders

class LinkedFolder(OSError):
    """A folder on the way to a private one (state/, state/transcripts, history/objects, ...)
    is a symbolic link or not a folder: refused, never followed. The message says the fix."""


def open_folder(base: str | os.PathLike[str], rel: str, *, create: bool = False) -> int:
    """A real (O_RDONLY) descriptor of the folder `base`/`rel`, reached from `base` one component
    at a time with O_DIRECTORY|O_NOFOLLOW (a link at any level is refused, never followed);
    with `create`, missing folders are made 0o700 and then opened the same way (one raced into
    a link is refused too). LinkedFolder names the entry and the fix; FileNotFoundError a
    missing folder (without `create`). The caller closes the descriptor."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | _O_CLOEXEC)
    done: list[str] = []
    try:
        for part in [p for p in rel.split("/") if p]:
            if part in (".", ".."):
                raise ValueError(f"{rel!r}: a private folder's path has no '.' or '..'")
            done.append(part)
            for attempt in (0, 1):
                try:
                    sub = os.open(part, flags, dir_fd=fd)
                    break
                except FileNotFoundError:
                    if not create or attempt:
                        raise FileNotFoundError(errno.ENOENT, f"no folder {'/'.join(done)} in {base}") from None
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o700, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                        raise _linked(fd, part, base, "/".join(done)) from None
                    raise
            os.close(fd)
            fd = sub
        return fd
    except BaseException:
        os.close(fd)
        raise


def _linked(dirfd: int, name: str, base: str | os.PathLike[str], shown: str) -> LinkedFolder:
    full = os.path.join(os.fspath(base), shown)
    try:
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except OSError:
        return LinkedFolder(errno.ELOOP, f"{shown} changed while being opened; try again", full)
    if _stat.S_ISLNK(st.st_mode):
        return LinkedFolder(errno.ELOOP, f"{shown} is a symbolic link; the assistant never follows a link in "
                                         f"its private folders: remove it (rm {shlex.quote(full)}) and it is made "
                                         "again as a real folder", full)
    return LinkedFolder(errno.ENOTDIR, f"{shown} is {kind_of(st.st_mode)}, not a folder: move it aside "
                                       f"(mv {shlex.quote(full)} {shlex.quote(full + '.aside')}) and it is made again", full)


# ---------------------------------------------------------------------------- exchanging

RENAME_NOREPLACE = 1           # linux/fs.h: fail with EEXIST rather than replace
RENAME_EXCHANGE = 2            # linux/fs.h: swap the two entries atomically
_EXCHANGE_MISSING = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP))
_SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276, "riscv64": 276, "i686": 353, "i386": 353, "armv7l": 382,
                  "ppc64le": 357, "s390x": 347}
_EXCHANGE_BACK_TRIES = 8       # a save that lands while a change is being put back: bounded
_renameat2 = None              # (callable, uses the raw syscall) once looked up


class ExchangeUnsupported(OSError):
    """This kernel or filesystem cannot swap two entries (renameat2 RENAME_EXCHANGE refused with
    EINVAL, ENOSYS or EOPNOTSUPP, or no renameat2 at all): the caller uses a plain rename."""


def _lookup_renameat2():
    """(libc's renameat2 (glibc >= 2.28) or libc's syscall, the syscall number or None), or
    (None, None) off Linux. Looked up on first use (dlopen of the process itself is cheap, but
    nothing needs it before a write)."""
    global _renameat2
    if _renameat2 is None:
        found = (None, None)
        if os.uname().sysname == "Linux":
            libc = ctypes.CDLL(None, use_errno=True)
            if hasattr(libc, "renameat2"):
                f = libc.renameat2
                f.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
                f.restype = ctypes.c_int
                found = (f, None)
            elif platform.machine() in _SYS_RENAMEAT2:
                f = libc.syscall
                f.restype = ctypes.c_long
                found = (f, _SYS_RENAMEAT2[platform.machine()])
        _renameat2 = found
    return _renameat2


def _rename2(src_fd: int, a: str, dst_fd: int, b: str, flags: int) -> None:
    """renameat2(src_fd, a, dst_fd, b, flags); ExchangeUnsupported where the kernel or filesystem
    has no such flag (or no renameat2)."""
    fn, number = _lookup_renameat2()
    if fn is None:
        raise ExchangeUnsupported(errno.ENOSYS, "renameat2 is not available here")
    ea, eb = os.fsencode(a), os.fsencode(b)
    while True:
        if number is not None:
            rc = fn(ctypes.c_long(number), ctypes.c_int(src_fd), ctypes.c_char_p(ea),
                    ctypes.c_int(dst_fd), ctypes.c_char_p(eb), ctypes.c_uint(flags))
        else:
            rc = fn(src_fd, ea, dst_fd, eb, flags)
        if rc == 0:
            return
        err = ctypes.get_errno()
        if err == errno.EINTR:
            continue
        if err in _EXCHANGE_MISSING:
            raise ExchangeUnsupported(err, f"this filesystem cannot do that rename ({os.strerror(err)})")
        raise OSError(err, os.strerror(err), a)


def exchange(dir_fd: int, a: str, b: str) -> None:
    """Swap the entries `a` and `b` of the folder `dir_fd` in one atomic step (neither is
    followed if it is a link). ExchangeUnsupported where the kernel or filesystem cannot."""
    _rename2(dir_fd, a, dir_fd, b, RENAME_EXCHANGE)


def rename_noreplace(src_fd: int, a: str, dst_fd: int, b: str) -> None:
    """Move entry `a` of folder `src_fd` to `b` of folder `dst_fd`, never replacing: FileExistsError
    if `b` exists. renameat2(RENAME_NOREPLACE), atomic; where that is missing, a regular file is
    linked at `b` (link never replaces) and then unlinked at `a`."""
    try:
        _rename2(src_fd, a, dst_fd, b, RENAME_NOREPLACE)
        return
    except ExchangeUnsupported:
        pass
    os.link(a, b, src_dir_fd=src_fd, dst_dir_fd=dst_fd, follow_symlinks=False)
    os.unlink(a, dir_fd=src_fd)


def write_new(name: str, data: bytes | bytearray | memoryview, *, dir_fd: int, mode: int | None = 0o600) -> None:
    """Make `name` (in folder `dir_fd`) hold `data` only where nothing is: FileExistsError if
    something took the name meanwhile (it stays). The temp file (fsynced) is put in place with
    renameat2(RENAME_NOREPLACE), else a link; a filesystem with neither: a plain rename."""
    tmp = temp_name()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC,
                 0o666 if mode is None else mode, dir_fd=dir_fd)
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        try:
            rename_noreplace(dir_fd, tmp, dir_fd, name)
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)):
                raise
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)   # no link here either: today's path
        fsync_dir(dir_fd)
    except BaseException:
        _unlink_quietly(dir_fd, tmp)
        raise


def exchange_supported(dir_fd: int) -> bool:
    """Can entries in the folder `dir_fd` be swapped? Probed with two temp files of ours
    (created O_EXCL, removed again); any other failure to probe says no."""
    a, b = temp_name(), temp_name()
    made = []
    try:
        for name in (a, b):
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC, 0o600,
                             dir_fd=dir_fd))
            made.append(name)
        exchange(dir_fd, a, b)
        return True
    except OSError:
        return False
    finally:
        for name in made:
            _unlink_quietly(dir_fd, name)


Keep = Callable[[bytes], None]


def _displaced(dir_fd: int, name: str, limit: int) -> tuple[tuple[int, int] | None, bytes | None]:
    """((st_dev, st_ino), bytes) of the entry `name`: bytes only for a regular, single-link
    file of at most `limit` bytes (anything else cannot be compared or kept: None)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None, None
    ident = (st.st_dev, st.st_ino)
    if not _stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size > limit:
        return ident, None
    try:
        fd, fst = open_regular(name, dir_fd=dir_fd)
    except OSError:
        return ident, None
    try:
        if (fst.st_dev, fst.st_ino) != ident:
            return ident, None
        data = read_upto(fd, limit + 1)
    finally:
        os.close(fd)
    return ident, (data if len(data) <= limit else None)


def swap_in(name: str, data: bytes | bytearray | memoryview, *, dir_fd: int, expect: bytes,
            keep: Keep | None, max_bytes: int, mode: int | None = 0o600) -> bool:
    """Replace `name` (in folder `dir_fd`) with `data`, but only over exactly `expect`.

    The new bytes are written to a temp file (fsynced) and swapped with `name` in one step
    (RENAME_EXCHANGE); the temp name then holds what was displaced. If that is `expect`, it is
    removed: True. If not (someone saved `name` after the caller's last look), the displaced
    save is handed to `keep` (the caller makes it a version) and swapped back, and ours is
    removed: False. See `_put_back` for a save landing meanwhile. `name` gone meanwhile:
    False, nothing written. ExchangeUnsupported: nothing changed (the caller falls back to
    `write_atomic`)."""
    tmp = temp_name()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC,
                 0o666 if mode is None else mode, dir_fd=dir_fd)
    # Our file stays open to the end: its inode cannot be freed and its number given to a
    # save made meanwhile, so (st_dev, st_ino) tells ours from anyone else's file.
    try:
        try:
            st = os.fstat(fd)
            ours = (st.st_dev, st.st_ino)
            write_all(fd, data)
            exchange(dir_fd, tmp, name)
        except FileNotFoundError:
            _unlink_quietly(dir_fd, tmp)
            return False
        except BaseException:
            _unlink_quietly(dir_fd, tmp)
            raise
        ident, got = _displaced(dir_fd, tmp, max_bytes)
        if ident != ours and got is not None and got == expect:
            os.unlink(tmp, dir_fd=dir_fd)
            fsync_dir(dir_fd)
            return True
        _put_back(dir_fd, tmp, name, ours, got, keep, max_bytes)
        return False
    finally:
        os.close(fd)


def _put_back(dir_fd: int, tmp: str, name: str, ours: tuple[int, int], displaced: bytes | None,
              keep: Keep | None, max_bytes: int) -> None:
    """`tmp` holds a save our swap displaced from `name`: it becomes a version (`keep`) and is
    swapped back. That swap brings to `tmp` what `name` held: ours (removed), or a newer save
    that replaced ours meanwhile, which is kept too and then removed (the older one stays at
    `name`: every save is on disk or kept). An entry that cannot be kept (a link, a folder, too
    large, no `keep`) is never removed: it stays at its dot-leading temp name. A failing `keep`
    is raised only once the displaced save is back at `name`."""
    failed: BaseException | None = None
    if displaced is not None and keep is not None:
        try:
            keep(displaced)
        except BaseException as exc:   # noqa: BLE001 - raised below, once the save is back
            failed = exc
    exchange(dir_fd, tmp, name)        # the save back at `name`; tmp: what `name` held just now
    ident, got = _displaced(dir_fd, tmp, max_bytes)
    if ident == ours:
        os.unlink(tmp, dir_fd=dir_fd)
    elif ident is not None and got is not None and keep is not None and failed is None:
        keep(got)                      # a newer save: a version first (a failure: it stays at tmp)
        os.unlink(tmp, dir_fd=dir_fd)
    fsync_dir(dir_fd)
    if failed is not None:
        raise failed


def _exists(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False


def take_out(name: str, *, dir_fd: int, expect: bytes, keep: Keep | None, max_bytes: int) -> bool:
    """Remove `name` (in folder `dir_fd`), but only if it holds exactly `expect`.

    `name` is renamed to a temp name (one atomic step: a save after it lands at `name`
    untouched); if the temp name holds `expect` it is removed: True. Otherwise it is handed to
    `keep` and linked back at `name` (never replacing: a save made meanwhile stays there, and
    this one, kept, is removed): False. One that cannot be kept is only ever put back.
    `name` gone meanwhile: False."""
    tmp = temp_name()
    try:
        os.rename(name, tmp, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    ident, got = _displaced(dir_fd, tmp, max_bytes)
    if got is not None and got == expect:
        os.unlink(tmp, dir_fd=dir_fd)
        fsync_dir(dir_fd)
        return True
    kept = False
    failed: BaseException | None = None
    if got is not None and keep is not None:
        try:
            keep(got)
            kept = True
        except BaseException as exc:   # noqa: BLE001 - raised below, once the save is back
            failed = exc
    try:
        if got is None:
            raise PermissionError      # not a regular file: moved back by rename below
        os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        os.unlink(tmp, dir_fd=dir_fd)
    except FileExistsError:            # a newer save took the name meanwhile
        if kept:
            os.unlink(tmp, dir_fd=dir_fd)
    except PermissionError:
        if not _exists(dir_fd, name):
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    fsync_dir(dir_fd)
    if failed is not None:
        raise failed
    return False


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
                 what: str = "memory", record_pid: bool = True, dir_fd: int | None = None,
                 beneath: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path)
        self.dir_fd = dir_fd     # `path` is a name in that folder (opened by `open_folder`)
        # `beneath`: `path` is relative to this folder (a workspace), and its folders are reached
        # from it without following a link (open_folder, made 0o700 if missing)
        self.beneath = beneath
        self.timeout = float(timeout)
        self.what = what
        # False for locks taken on every append (history, audit): rewriting the pid each time
        # costs a data flush on ext4, and the pid only ever serves the timeout message
        self.record_pid = record_pid
        self._fd: int | None = None

    def acquire(self) -> None:
        if self._fd is not None:
            raise RuntimeError(f"{self.path}: already held by this FileLock")
        name, dir_fd, opened = self.path, self.dir_fd, None
        if self.beneath is not None:
            try:
                opened = dir_fd = open_folder(self.beneath, str(self.path.parent), create=True)
            except LinkedFolder as exc:
                raise LockTimeout(f"refusing to take the {self.what} lock: {exc.strerror}") from None
            name = Path(self.path.name)
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | _O_CLOEXEC | os.O_NOFOLLOW | _O_NONBLOCK, 0o600,
                         dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LockTimeout(f"{self.path} is a symlink; refusing to use it as the {self.what} lock") from None
            raise
        finally:
            if opened is not None:
                os.close(opened)
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
