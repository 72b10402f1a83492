"""The workspace: one folder holding persona, config, grants, vault, notes, file mount and state.

Guards the layout every other module relies on: `memory/`, `state/`, `grants.json` and
`vault.enc` are siblings of `files/` (the file tools' mount), never inside it. Also owns
config loading (defaults + validation, so a typo is a clear error, not a silent default),
workspace selection (`--workspace`, `ASSISTANT_WORKSPACE`, default) and `assistant init`.
"""

from __future__ import annotations

import copy
import os
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from policy.approvals import seconds

from .hidden import DEFAULT_HIDDEN, HiddenFiles, HiddenPatternError

ENV_WORKSPACE = "ASSISTANT_WORKSPACE"
DEFAULT_WORKSPACE = Path("~/.local/share/assistant/workspace")

# The layout. Private parts are created 0o700 / 0o600.
PERSONA = "PERSONA.md"
CONFIG = "config.toml"
GRANTS = "grants.json"
VAULT = "vault.enc"
MEMORY = "memory"
FILES = "files"
STATE = "state"

DEFAULT_CONFIG: dict[str, Any] = {
    "model": {
        "path": "",
        "chat_format": "gemma",
        "n_ctx": 8192,
        "n_threads": 0,
        "max_tokens": 512,
        "temperature": 0.2,
        "repeat_penalty": 1.1,
        "seed": 42,
    },
    "limits": {"max_steps": 8, "tool_timeout": "30s"},
    "memory": {
        "max_note_bytes": 256 * 1024,
        "catalog_head_bytes": 2048,
        "catalog_budget_bytes": 6144,
        "summary_width": 100,
        "pinned": ["index.md"],
    },
    "policy": {},
    "approvals": {"channel": "inbox", "timeout": "15m", "notify": []},
    "vault": {"key_file": "", "opslimit": 3, "memlimit_mib": 256},
    "web": {"max_bytes": 256 * 1024, "timeout": "10s"},
    "recall": {"enabled": True, "max_notes": 3, "budget_bytes": 2048, "min_score": 0.0,
               "include_conversations": False, "embedding_model": ""},
    "files": {"hidden": list(DEFAULT_HIDDEN)},
    "schedule": [],
}


class WorkspaceError(Exception):
    """A workspace that is missing, malformed, or would be clobbered. Message says which and why."""


def parse_duration(value: Any, *, setting: str = "duration") -> float:
    """'15m' -> 900.0 seconds. Numbers are seconds. Anything else is a WorkspaceError.

    One parser for the whole program: policy/approvals.py owns it (policy/ cannot import us)."""
    try:
        return seconds(value, setting)
    except ValueError as exc:
        raise WorkspaceError(str(exc)) from None


def _merge(defaults: dict[str, Any], loaded: dict[str, Any], where: str) -> dict[str, Any]:
    out = copy.deepcopy(defaults)
    for key, value in loaded.items():
        if key not in defaults:
            # Unknown sections are an error (a typo must not silently mean "default");
            # keys inside [policy] are validated by the policy layer.
            if where == "" or where not in ("policy",):
                known = ", ".join(sorted(defaults)) or "(none)"
                raise WorkspaceError(
                    f"config.toml: unknown setting {where + '.' if where else ''}{key} (known: {known})"
                )
        if isinstance(defaults.get(key), dict) and key != "policy":
            if not isinstance(value, dict):
                raise WorkspaceError(f"config.toml: [{key}] must be a table")
            out[key] = _merge(defaults[key], value, key)
        else:
            out[key] = value
    return out


def load_config(path: Path) -> dict[str, Any]:
    """Read config.toml over the defaults. A missing file means all defaults."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return copy.deepcopy(DEFAULT_CONFIG)
    try:
        loaded = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise WorkspaceError(f"{path}: not valid TOML: {exc}") from None
    cfg = _merge(DEFAULT_CONFIG, loaded, "")
    if not isinstance(cfg["schedule"], list):
        raise WorkspaceError("config.toml: schedules are written as [[schedule]] tables")
    # Validate durations now so a bad value is reported at load, not mid-run.
    parse_duration(cfg["limits"]["tool_timeout"], setting="limits.tool_timeout")
    parse_duration(cfg["approvals"]["timeout"], setting="approvals.timeout")
    parse_duration(cfg["web"]["timeout"], setting="web.timeout")
    if cfg["approvals"]["channel"] not in ("inbox", "none"):
        raise WorkspaceError(
            f"config.toml: approvals.channel must be \"inbox\" or \"none\", got {cfg['approvals']['channel']!r}"
        )
    try:
        HiddenFiles(cfg["files"]["hidden"] if isinstance(cfg["files"]["hidden"], list) else [None])
    except HiddenPatternError as exc:
        raise WorkspaceError(f"config.toml: {exc} (a list of gitignore-style patterns)") from None
    notify = cfg["approvals"]["notify"]
    if not (isinstance(notify, list) and all(isinstance(a, str) for a in notify)):
        raise WorkspaceError("config.toml: approvals.notify must be a list of strings (an argv), or []")
    return cfg


@dataclass
class Workspace:
    """Paths of one workspace, and its loaded config."""

    root: Path
    config: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(DEFAULT_CONFIG))

    @property
    def persona_path(self) -> Path:
        return self.root / PERSONA

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG

    @property
    def grants_path(self) -> Path:
        return self.root / GRANTS

    @property
    def vault_path(self) -> Path:
        return self.root / VAULT

    @property
    def memory_dir(self) -> Path:
        return self.root / MEMORY

    @property
    def files_dir(self) -> Path:
        return self.root / FILES

    @property
    def state_dir(self) -> Path:
        return self.root / STATE

    @property
    def approvals_dir(self) -> Path:
        return self.state_dir / "approvals"

    @property
    def transcripts_dir(self) -> Path:
        return self.state_dir / "transcripts"

    @property
    def audit_path(self) -> Path:
        return self.state_dir / "audit.jsonl"

    @property
    def lock_path(self) -> Path:
        return self.state_dir / "memory.lock"

    def persona(self) -> str:
        try:
            return self.persona_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def ensure_state(self) -> None:
        """Create state/ and its subfolders (0o700) if missing."""
        for d in (self.state_dir, self.approvals_dir, self.transcripts_dir):
            d.mkdir(mode=0o700, parents=True, exist_ok=True)


def select_workspace(option: str | os.PathLike[str] | None) -> Path:
    """--workspace/-w wins, then $ASSISTANT_WORKSPACE, then ~/.local/share/assistant/workspace."""
    if option:
        return Path(option).expanduser().absolute()
    env = os.environ.get(ENV_WORKSPACE)
    if env:
        return Path(env).expanduser().absolute()
    return DEFAULT_WORKSPACE.expanduser().absolute()


def open_workspace(path: str | os.PathLike[str]) -> Workspace:
    """Open an existing workspace: the folder must exist and hold memory/ (or config.toml)."""
    root = Path(path).expanduser().absolute()
    if root.exists() and not root.is_dir():
        raise WorkspaceError(f"{root} is not a folder; choose a workspace folder with --workspace/-w DIR "
                             f"or ${ENV_WORKSPACE}")
    if not root.is_dir():
        raise WorkspaceError(
            f"no workspace at {root}: create one with `assistant init {root}` "
            f"or choose one with --workspace/-w or ${ENV_WORKSPACE}"
        )
    if not (root / MEMORY).is_dir() and not (root / CONFIG).is_file():
        raise WorkspaceError(
            f"{root} is not a workspace (no memory/ or config.toml): create one with `assistant init DIR`"
        )
    ws = Workspace(root=root, config=load_config(root / CONFIG))
    return ws


def example_dir() -> Path:
    """The shipped example workspace (workspace.example/ beside the packages)."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "example_workspace", here.parent / "workspace.example"):
        if (candidate / CONFIG).is_file():
            return candidate
    raise WorkspaceError("the example workspace is missing from this installation")


_PRIVATE = (MEMORY, FILES, STATE)
_PRIVATE_FILES = (CONFIG, GRANTS, VAULT)


def init_workspace(dest: str | os.PathLike[str], *, source: Path | None = None) -> list[str]:
    """Create a workspace at dest from the example. Refuses a non-empty folder.

    Returns the relative paths created, for the caller to report. On failure nothing
    half-made is left behind (the copy goes to a sibling temp folder first).
    """
    dest_path = Path(dest).expanduser().absolute()
    if dest_path.exists() or dest_path.is_symlink():
        if dest_path.is_symlink() or not dest_path.is_dir():
            raise WorkspaceError(f"{dest_path} exists and is not a folder; not touching it")
        if any(dest_path.iterdir()):
            raise WorkspaceError(f"{dest_path} is not empty; not touching an existing workspace")
    src = source or example_dir()
    parent = dest_path.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = parent / f".{dest_path.name}.init-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        shutil.copytree(src, tmp, symlinks=False, ignore=shutil.ignore_patterns("state", "__pycache__", ".*"))
        (tmp / STATE).mkdir(mode=0o700, exist_ok=True)
        for sub in ("approvals", "transcripts"):
            (tmp / STATE / sub).mkdir(mode=0o700, exist_ok=True)
        for dirpath, dirnames, filenames in os.walk(tmp):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), 0o700)
            for f in filenames:
                os.chmod(os.path.join(dirpath, f), 0o600)
        os.chmod(tmp, 0o700)
        made = sorted(
            str(Path(dp, n).relative_to(tmp)) + ("/" if n in dns else "")
            for dp, dns, fns in os.walk(tmp)
            for n in (*dns, *fns)
        )
        if dest_path.exists():
            dest_path.rmdir()  # empty, checked above
        os.rename(tmp, dest_path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return made
