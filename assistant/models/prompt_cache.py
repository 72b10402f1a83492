"""The persistent prompt cache: llama.cpp's state after the stable prefix, kept in state/ between runs.

Guards a second way into what the model believes. A saved state is restored only if
- it is authenticated: HMAC-SHA256 over the whole file with a per-workspace key
  (state/prompt_cache.key, 32 random bytes, 0600, created exclusively, never followed through a
  link); a file whose MAC, magic, header or length fails is ignored and removed;
- its key matches exactly: a sha256 over the model file's identity (resolved path, size,
  mtime, device/inode), the context parameters that shape the state (n_ctx, swa_full, chat
  format, llama-cpp-python version) and the exact prefix tokens, so a changed persona, tool set,
  catalog or model never restores a stale state;
- it is plain bytes: our own framing around llama_state_get_data()/llama_state_set_data(),
  never pickle (llama-cpp-python's LlamaDiskCache unpickles what it reads: not used);
- it is bounded: files larger than the budget are not written, and after each save the oldest
  files are removed until the directory fits `prompt_cache_max_mib`; reads are bounded too.
Files are written to a private temporary name (0600, O_EXCL) in state/prompt_cache/ (0700),
fsynced and renamed: a crash leaves the old file or none, never half of one. Every file
operation goes through one descriptor of that directory opened without following a link (and
only if it is ours and private), so a planted link cannot make the cache read, write or trim
(delete) files outside state/.

File layout: MAGIC | u32 header length | header JSON {"key", "n_tokens"} | u32[n_tokens] prefix
tokens (little endian) | state bytes | 32-byte MAC.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from policy.fileio import open_folder, read_upto, write_atomic

MAGIC = b"ASSISTANT-PROMPT-CACHE-1\n"
MAC_BYTES = 32
KEY_FILE = "prompt_cache.key"
DIR = "prompt_cache"
SUFFIX = ".state"


class PromptCacheError(Exception):
    """The cache cannot be used (its key file is unsafe or unreadable). Never fatal to a run."""


@dataclass(frozen=True)
class CacheKey:
    """Everything the saved state depends on, hashed."""

    digest: str

    @classmethod
    def build(cls, *, model_path: Path, params: dict, tokens: Sequence[int]) -> "CacheKey":
        st = os.stat(model_path)
        ident = {"path": str(Path(model_path).resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                 "dev": st.st_dev, "ino": st.st_ino}
        h = hashlib.sha256()
        h.update(json.dumps({"model": ident, "params": params}, sort_keys=True).encode())
        h.update(_pack_tokens(tokens))
        return cls(h.hexdigest())


def _pack_tokens(tokens: Sequence[int]) -> bytes:
    return struct.pack(f"<{len(tokens)}I", *tokens)


def _open_private(name: str, flags: int, dir_fd: int) -> int:
    return os.open(name, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=dir_fd)


class PromptCache:
    """The cache directory of one workspace's state/. `max_bytes`: the disk budget."""

    def __init__(self, state_dir: Path, max_bytes: int) -> None:
        self.state_dir = Path(state_dir)
        self.dir = self.state_dir / DIR
        self.max_bytes = int(max_bytes)
        self._key = self._load_key()

    # -- the MAC key
    def _load_key(self) -> bytes:
        path = self.state_dir / KEY_FILE
        try:   # state/ reached from the workspace without following a link (the message says the fix)
            self.state_dir.parent.mkdir(parents=True, exist_ok=True)
            dfd = open_folder(self.state_dir.parent, self.state_dir.name, create=True)
        except OSError as exc:
            raise PromptCacheError(f"{path}: {exc.strerror or exc}") from None
        try:
            try:
                fd = _open_private(KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, dfd)
            except FileExistsError:
                pass
            else:
                try:
                    os.write(fd, os.urandom(32))
                    os.fsync(fd)
                finally:
                    os.close(fd)
            fd = _open_private(KEY_FILE, os.O_RDONLY | os.O_NONBLOCK, dfd)
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
                    raise PromptCacheError(f"{path} is not a private regular file of yours (chmod 600 it, or "
                                           "delete it: a new one is made)")
                key = os.read(fd, 64)
            finally:
                os.close(fd)
        except OSError as exc:
            raise PromptCacheError(f"{path}: {exc.strerror or exc}") from None
        finally:
            os.close(dfd)
        if len(key) != 32:
            raise PromptCacheError(f"{path} is damaged (delete it: a new one is made)")
        return key

    def _mac(self, data: bytes) -> bytes:
        return hmac.new(self._key, data, hashlib.sha256).digest()

    def path_for(self, key: CacheKey) -> Path:
        return self.dir / f"{key.digest}{SUFFIX}"

    def _open_dir(self, create: bool) -> int | None:
        """A descriptor of state/prompt_cache/, never followed through a link: a planted link
        would make the cache read, write and trim (delete) files outside state/. None when it
        is missing (and not created) or is not a private directory of ours."""
        try:   # state/ and state/prompt_cache/ both reached without following a link
            fd = open_folder(self.state_dir.parent, f"{self.state_dir.name}/{DIR}", create=create)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
        except OSError:
            os.close(fd)
            return None
        if st.st_uid != os.geteuid() or st.st_mode & 0o077:
            os.close(fd)
            return None
        return fd

    # -- read
    def load(self, key: CacheKey, tokens: Sequence[int]) -> bytes | None:
        """The saved state bytes for `key`, or None (missing, or failed and removed)."""
        dfd = self._open_dir(create=False)
        if dfd is None:
            return None
        try:
            return self._load_in(dfd, key, tokens)
        finally:
            os.close(dfd)

    def _load_in(self, dfd: int, key: CacheKey, tokens: Sequence[int]) -> bytes | None:
        name = self.path_for(key).name
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                         dir_fd=dfd)
        except FileNotFoundError:
            return None
        except OSError:
            self._unlink(dfd, name)
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > self.max_bytes + 1024 * 1024:
                raise ValueError("not a regular file of a sane size")
            blob = read_upto(fd, st.st_size)
        except (OSError, ValueError):
            os.close(fd)
            self._unlink(dfd, name)
            return None
        os.close(fd)
        state = self._verify(blob, key, tokens)
        if state is None:
            self._unlink(dfd, name)
            return None
        try:
            os.utime(name, dir_fd=dfd, follow_symlinks=False)   # recently used: kept longest
        except (OSError, NotImplementedError):
            pass
        return state

    def _verify(self, blob: bytes, key: CacheKey, tokens: Sequence[int]) -> bytes | None:
        if len(blob) < len(MAGIC) + 4 + MAC_BYTES or not blob.startswith(MAGIC):
            return None
        body, mac = blob[:-MAC_BYTES], blob[-MAC_BYTES:]
        if not hmac.compare_digest(self._mac(body), mac):
            return None
        try:
            (hlen,) = struct.unpack_from("<I", body, len(MAGIC))
            start = len(MAGIC) + 4
            header = json.loads(body[start:start + hlen].decode("utf-8"))
            n = int(header["n_tokens"])
            if header["key"] != key.digest or n != len(tokens):
                return None
            tok_start = start + hlen
            if body[tok_start:tok_start + 4 * n] != _pack_tokens(tokens):
                return None
            state = body[tok_start + 4 * n:]
        except (ValueError, KeyError, TypeError, struct.error, UnicodeDecodeError):
            return None
        return state or None

    # -- write
    def save(self, key: CacheKey, tokens: Sequence[int], state: bytes) -> bool:
        """Write atomically; False when it does not fit the budget or cannot be written."""
        header = json.dumps({"key": key.digest, "n_tokens": len(tokens)}).encode()
        body = MAGIC + struct.pack("<I", len(header)) + header + _pack_tokens(tokens) + state
        blob = body + self._mac(body)
        if len(blob) > self.max_bytes:
            return False
        name = self.path_for(key).name
        dfd = self._open_dir(create=True)
        if dfd is None:
            return False
        try:
            try:   # temp + fsync + rename in the pinned folder (policy.fileio)
                write_atomic(name, blob, dir_fd=dfd, mode=0o600)
            except OSError:
                return False
            self._trim(dfd, keep=name)
        finally:
            os.close(dfd)
        return True

    def _entries(self, dfd: int) -> list[tuple[int, int, str]]:
        out = []
        with os.scandir(dfd) as it:
            for e in it:
                if e.name.endswith(SUFFIX) and e.is_file(follow_symlinks=False):
                    st = e.stat(follow_symlinks=False)
                    out.append((st.st_mtime_ns, st.st_size, e.name))
        return out

    def _trim(self, dfd: int, keep: str) -> None:
        """Remove the least recently used files until the directory fits the budget."""
        try:
            entries = self._entries(dfd)
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        for _, size, name in sorted(entries):
            if total <= self.max_bytes:
                break
            if name == keep:
                continue
            self._unlink(dfd, name)
            total -= size

    @staticmethod
    def _unlink(dfd: int, name: str) -> None:
        try:
            os.unlink(name, dir_fd=dfd)
        except OSError:
            pass

    def _discard(self, path: Path) -> None:
        """Remove one cache file (by its name, inside the cache directory only)."""
        dfd = self._open_dir(create=False)
        if dfd is None:
            return
        try:
            self._unlink(dfd, Path(path).name)
        finally:
            os.close(dfd)

    def usage(self) -> int:
        """Bytes the cache files take now."""
        dfd = self._open_dir(create=False)
        if dfd is None:
            return 0
        try:
            return sum(size for _, size, _ in self._entries(dfd))
        except OSError:
            return 0
        finally:
            os.close(dfd)


__all__ = ["CacheKey", "PromptCache", "PromptCacheError"]
