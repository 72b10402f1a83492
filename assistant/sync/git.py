"""The one way sync runs `git`: list arguments, no shell, a bounded wait, a scrubbed environment.

Guards that no git call can hang the assistant or be steered by the person's global git
config, a repository's hooks or a terminal prompt: every call has a timeout after which its
whole process group (git and the ssh it started) is killed; GIT_TERMINAL_PROMPT=0 (a remote
that wants a password fails instead of waiting for one); no system or global config
(GIT_CONFIG_NOSYSTEM=1, HOME pointed inside state/sync, GIT_CONFIG_GLOBAL=/dev/null); no hooks;
the `ext::` transport (runs a command named by the URL) refused. The person's ssh setup
(SSH_AUTH_SOCK, GIT_SSH_COMMAND) is kept: ssh reads its keys from the passwd home, not $HOME.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Sequence
from urllib.parse import urlsplit

__all__ = ["Git", "GitError", "GitTimeout", "check_remote", "DEFAULT_TIMEOUT", "NETWORK_TIMEOUT"]

DEFAULT_TIMEOUT = 60.0      # a local git command (fast-import of 10,000 notes included)
NETWORK_TIMEOUT = 120.0     # a fetch or a push
_KEPT_ENV = ("PATH", "SSH_AUTH_SOCK", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_SSH_VARIANT", "TMPDIR", "USER", "LOGNAME")


class GitError(Exception):
    """A git command failed; the message names the command and git's own last lines."""


class GitTimeout(GitError):
    """A git command did not finish within its bound and was killed with its children."""


def check_remote(url: str) -> str:
    """The remote as given, or ValueError: empty, one line, no option-looking start, no
    credentials in it (git's credential helpers or ssh keys hold those), no ext:: transport."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("the remote is empty: give a bare repository path, an ssh or an https URL")
    if url != url.strip() or any(ord(c) < 32 or ord(c) == 127 for c in url):
        raise ValueError("the remote must be one line without control characters or surrounding spaces")
    if url.startswith("-"):
        raise ValueError("the remote must not start with '-'")
    if "::" in url.split("/", 1)[0]:
        raise ValueError("remote helpers (TRANSPORT::ADDRESS, e.g. ext::) are refused: give a path, ssh or https URL")
    if "://" in url:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("file", "ssh", "git+ssh", "ssh+git", "https", "http", "git"):
            raise ValueError(f"the remote's scheme {scheme!r} is not one sync uses (file, ssh, https)")
        if parts.password is not None or (scheme in ("https", "http") and parts.username is not None):
            raise ValueError("the remote URL carries credentials; they would be stored and shown in plain "
                             "text. Give the URL without them: git's credential helper (or an ssh key) supplies them")
    return url


class Git:
    """git on one bare repository (`git_dir`), with `home` (inside state/sync) as its HOME."""

    def __init__(self, git_dir: Path, home: Path) -> None:
        self.git_dir = Path(git_dir)
        self.home = Path(home)
        self.spent = 0.0           # seconds spent waiting for git (the bench prints it)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k in _KEPT_ENV}
        env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                    "HOME": str(self.home), "GIT_DIR": str(self.git_dir), "LC_ALL": "C",
                    "GIT_ASKPASS": "", "SSH_ASKPASS": ""})
        env.setdefault("PATH", "/usr/bin:/bin")
        return env

    def run(self, args: Sequence[str], *, input: bytes | None = None, timeout: float = DEFAULT_TIMEOUT,
            ok: tuple[int, ...] = (0,)) -> tuple[int, bytes]:
        """(exit code, stdout) of `git ARGS`; GitError for another exit code, GitTimeout when it
        ran past `timeout` (its process group is killed: the ssh it started too)."""
        argv = ["git", "-c", "core.hooksPath=/dev/null", "-c", "protocol.ext.allow=never",
                "-c", "credential.interactive=false", "-c", "gc.auto=0", "-c", "transfer.fsckObjects=true", "-c", "core.quotePath=false", *args]
        started = time.monotonic()
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env(),
                                    cwd=str(self.home), start_new_session=True)
        except OSError as exc:
            raise GitError(f"git cannot be started ({exc.strerror or exc}); install git") from None
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            raise GitTimeout(f"git {args[0]} did not finish within {timeout:g}s and was stopped") from None
        except BaseException:
            _kill(proc)
            raise
        finally:
            self.spent += time.monotonic() - started
        if proc.returncode not in ok:
            tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise GitError(f"git {args[0]} failed (exit {proc.returncode}): {' / '.join(tail) or 'no message'}")
        return proc.returncode, out

    def out(self, *args: str, timeout: float = DEFAULT_TIMEOUT) -> str:
        return self.run(args, timeout=timeout)[1].decode("utf-8", "replace").strip()

    def rev(self, ref: str) -> str | None:
        """The commit id a ref names, None if there is no such ref."""
        code, out = self.run(["rev-parse", "-q", "--verify", f"{ref}^{{commit}}"], ok=(0, 1))
        return out.decode().strip() if code == 0 else None

    def is_ancestor(self, old: str, new: str) -> bool:
        """Is OLD an ancestor of NEW (False too when OLD is no commit here)?"""
        code, _ = self.run(["merge-base", "--is-ancestor", old, new], ok=(0, 1, 128))
        return code == 0

    def refs(self, prefix: str = "refs/") -> dict[str, str]:
        """ref name -> commit id of every ref under PREFIX (one `git for-each-ref`)."""
        _, out = self.run(["for-each-ref", "--format=%(objectname) %(refname)", prefix])
        found = {}
        for line in out.decode("utf-8", "replace").splitlines():
            oid, _, name = line.partition(" ")
            found[name] = oid
        return found

    def blobs(self, specs: Sequence[str], *, limit: int) -> dict[str, bytes | int | None]:
        """The bytes of each object named (`COMMIT:PATH`), by one `git cat-file --batch`: None for a
        missing one (or not a blob), the size (an int) for one larger than `limit`. A spec must
        be one line (the caller checked the path); anything else is a ValueError."""
        if not specs:
            return {}
        if any("\n" in s or "\r" in s for s in specs):
            raise ValueError("a git object name holds a line break")
        # sizes first (`--batch-check`): an object over `limit` is never read into this process
        _, raw = self.run(["cat-file", "--batch-check"], input="".join(s + "\n" for s in specs).encode("utf-8"))
        found: dict[str, bytes | int | None] = {}
        small = []
        for spec, line in zip(specs, raw.split(b"\n")):
            header = line.split(b" ")
            if header[-1] in (b"missing", b"ambiguous") or len(header) != 3 or header[1] != b"blob":
                found[spec] = None
            elif int(header[2]) > limit:
                found[spec] = int(header[2])
            else:
                small.append(spec)
        if not small:
            return found
        _, raw = self.run(["cat-file", "--batch"], input="".join(s + "\n" for s in small).encode("utf-8"))
        pos = 0
        for spec in small:
            nl = raw.index(b"\n", pos)
            header = raw[pos:nl].split(b" ")
            pos = nl + 1
            if header[-1] in (b"missing", b"ambiguous"):    # "<spec> missing": no body follows
                found[spec] = None
                continue
            _, kind, size_text = header                      # "<oid> <type> <size>", then the body
            size = int(size_text)
            found[spec] = (raw[pos:pos + size] if size <= limit else size) if kind == b"blob" else None
            pos += size + 1
        return found


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass
