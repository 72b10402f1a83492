"""config.toml as typed values: one frozen dataclass per section, validated once, when read.

Guards two promises about configuration:
- a typo or a bad value is never a silent default: unknown keys are errors, and every value
  is checked against its type and range; the error lists EVERY problem (key, the bad value,
  and an example of a good one), not just the first;
- a broken section only stops the commands that need it: reading never raises; a section is
  checked when a consumer asks for it (`config.limits`, `config.require("model", ...)`), so
  `assistant approvals list` works whatever else is wrong in the file.

Adding a section (say `[recall]`): write its frozen dataclass, a `_read_recall(r)` that reads
it through the `_Reader` (one line per key), add `"recall": _read_recall` to `_READERS`, and a
typed property on `Config`. Keys inside a section get their defaults from the dataclass.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Generic, Mapping, TypeVar
from urllib.parse import urlsplit

from policy.approvals import ApprovalSettings
from policy.duration import parse_duration
from policy.notify import LINK_FIELDS
from policy.kinds import AFTER_UNTRUSTED_KEY, PolicyConfigError, after_untrusted_cell, policy_table

from assistant.workspace.hidden import DEFAULT_HIDDEN, HiddenFiles, HiddenPatternError
from assistant.workspace.schedule import Schedule, parse_schedules

FILE = "config.toml"


# --- the sections ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelConfig:
    backend: str = "llama"         # "llama" (in process) or "openai" (a model server)
    endpoint: str = ""             # openai: the API base, e.g. http://127.0.0.1:8080/v1
    name: str = ""                 # openai: the server's model name ("" = its only model)
    api_key: str = ""              # openai: NAME of a vault secret bound to the endpoint's host
    prompt_cache: bool = False     # llama: keep the evaluated stable prefix in state/ between runs
    prompt_cache_max_mib: int = 512
    path: str = ""                 # a GGUF file; "" = the embedded model; relative = under the workspace
    chat_format: str = "gemma"
    # "auto": "completion" for the embedded (base) model, "tools" for a chatml GGUF, "actions" for any other; "actions":
    # JSON actions with the tools offered; "tools": the model's own tool-call template (chatml);
    # "completion": the model continues a page of recalled
    # notes (assistant.agent.completion), no tools
    protocol: str = "auto"
    n_ctx: int = 8192
    n_threads: int = 0             # 0 = all cores
    max_tokens: int = 512          # per model step
    temperature: float = 0.2
    repeat_penalty: float = 1.1
    seed: int = 42


@dataclass(frozen=True)
class LimitsConfig:
    max_steps: int = 8             # tool calls per turn
    tool_timeout: float = 30.0     # seconds of tool work (approval waits excluded)
    # refusals for a vault value within a rolling 24 hours before unattended runs and MCP writes
    # are blocked until `assistant approvals ack` (assistant.secrets.budget)
    secret_refusals_per_day: int = 3


REFLECT_CHOICES = ("chat", "always", "off")


@dataclass(frozen=True)
class MemoryConfig:
    max_note_bytes: int = 256 * 1024
    catalog_head_bytes: int = 2048
    # ~500 tokens: per-turn recall brings the matching notes' text; a longer catalog earned
    # 1 answering note in 64 more for 1,000 more tokens (docs/benchmarks.md, issue 22)
    catalog_budget_bytes: int = 2048
    summary_width: int = 100
    pinned: tuple[str, ...] = ("index.md",)
    # a bounded turn proposing memory changes at the end of a chat ("chat"), of a chat and of a
    # clean unattended run ("always"), or never ("off"); the default is set by bench/reflection.py
    reflect: str = "chat"


@dataclass(frozen=True)
class VaultConfig:
    key_file: str = ""             # "" = none; relative = under the workspace
    unlock: str = ""               # "keyring": the passphrase remembered in the OS keyring; "" = env, key_file, prompt
    required: bool = False         # this workspace has had a vault: no session starts without vault.enc
    opslimit: int = 3
    memlimit_mib: int = 256


@dataclass(frozen=True)
class WebConfig:
    max_bytes: int = 256 * 1024
    timeout: float = 10.0          # seconds


@dataclass(frozen=True)
class RecallConfig:
    enabled: bool = True           # recall the best-matching notes into each turn's tail
    max_notes: int = 3
    budget_bytes: int = 2048       # for the recalled snippets in the prompt
    min_score: float = 0.15        # a share of the best match's score (0..1), not raw BM25
    include_conversations: bool = False
    embedding_model: str = ""      # a GGUF for hybrid search ("" = BM25 alone)


@dataclass(frozen=True)
class FilesConfig:
    hidden: tuple[str, ...] = tuple(DEFAULT_HIDDEN)


@dataclass(frozen=True)
class SyncConfig:
    # files/ travels too (opt-in): sent and taken by assistant/sync/files.py (docs/sync.md, "files/")
    files: bool = False


@dataclass(frozen=True)
class McpConfig:
    # Who watches an MCP client's calls: "unattended" (the default: a write is asked out of band
    # and the call waits for the answer or the approval timeout) or "watched" (an explicit
    # opt-in for a client whose own UI shows the person every call before it runs).
    mode: str = "unattended"


# --- problems ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Problem:
    """One bad setting. `section` is "" for the file as a whole (unreadable, unknown section)."""

    section: str
    key: str                       # dotted: limits.tool_timeout
    value: object
    want: str                      # what is expected
    example: str                   # a good line to write instead ("" when none applies)
    has_value: bool = True

    def __str__(self) -> str:
        head = f"{self.key} = {self.value!r}: " if self.has_value else f"{self.key}: " if self.key else ""
        return f"{head}{self.want}" + (f"; e.g. {self.example}" if self.example else "")


class ConfigError(Exception):
    """config.toml has problems in the sections a command needs; the message lists each one."""

    def __init__(self, path: Path | str, problems: tuple[Problem, ...]) -> None:
        self.problems = problems
        if len(problems) == 1:
            text = f"{path}: {problems[0]}"
        else:
            text = f"{path} has {len(problems)} problems:\n" + "\n".join(f"  {p}" for p in problems)
        super().__init__(text)


class _Reader:
    """Reads one section's table, collecting a Problem per bad or unknown key."""

    def __init__(self, section: str, raw: object, problems: list[Problem], known: tuple[str, ...] | None) -> None:
        self.section = section
        self.problems = problems
        self.raw: Mapping[str, object] = raw if isinstance(raw, Mapping) else {}
        if not isinstance(raw, Mapping):
            self.bad(section, raw, f"[{section}] must be a table", f"[{section}] on a line of its own")
        for key in self.raw if known is not None else ():
            if key not in known:
                self.problems.append(Problem(section, f"{section}.{key}", self.raw[key],
                                             f"unknown setting {section}.{key} (known: {', '.join(known)})", ""))

    def bad(self, key: str, value: object, want: str, example: str) -> None:
        self.problems.append(Problem(self.section, key, value, want, example))

    def _get(self, key: str, default: object) -> object:
        return self.raw.get(key, default)

    def _checked(self, key: str, default: object, ok: Callable[[object], bool], want: str, example: str) -> object:
        """The value at `key` if `ok` says it is one; else a Problem (`want`, `example`) and the default."""
        v = self._get(key, default)
        if ok(v):
            return v
        self.bad(f"{self.section}.{key}", v, want, example)
        return default

    def integer(self, key: str, default: int, low: int) -> int:
        return int(self._checked(key, default, lambda v: type(v) is int and v >= low,
                                 f"expected a whole number >= {low}", f"{key} = {default}"))

    def number(self, key: str, default: float, low: float) -> float:
        return float(self._checked(key, default, lambda v: type(v) in (int, float) and v >= low,
                                   f"expected a number >= {low:g}", f"{key} = {default}"))

    def text(self, key: str, default: str) -> str:
        return str(self._checked(key, default, lambda v: isinstance(v, str), "expected a string",
                                 f'{key} = "{default}"'))

    def boolean(self, key: str, default: bool) -> bool:
        return bool(self._checked(key, default, lambda v: isinstance(v, bool), "expected true or false",
                                  f"{key} = {str(default).lower()}"))

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        return str(self._checked(key, default, lambda v: v in choices,
                                 "expected " + " or ".join(f'"{c}"' for c in choices), f'{key} = "{default}"'))

    def duration(self, key: str, default: str) -> float:
        v = self._get(key, default)
        try:
            return parse_duration(v, f"{self.section}.{key}")
        except ValueError:
            self.bad(f"{self.section}.{key}", v,
                     "expected a duration: a number of seconds, or a number with ms, s, m, h or d",
                     f'{key} = "{default}"')
            return parse_duration(default)

    def strings(self, key: str, default: tuple[str, ...], example: str) -> tuple[str, ...]:
        v = self._get(key, list(default))
        if not (isinstance(v, list) and all(isinstance(a, str) for a in v)):
            self.bad(f"{self.section}.{key}", v, "expected a list of strings", example)
            return default
        return tuple(v)


def _read_model(r: _Reader) -> ModelConfig:
    d = ModelConfig()
    return ModelConfig(backend=r.choice("backend", d.backend, ("llama", "openai")),
                       endpoint=r.text("endpoint", d.endpoint), name=r.text("name", d.name),
                       api_key=r.text("api_key", d.api_key), prompt_cache=r.boolean("prompt_cache", d.prompt_cache),
                       prompt_cache_max_mib=r.integer("prompt_cache_max_mib", d.prompt_cache_max_mib, 1),
                       path=r.text("path", d.path), chat_format=r.text("chat_format", d.chat_format),
                       protocol=r.choice("protocol", d.protocol, ("auto", "actions", "tools", "completion")),
                       n_ctx=r.integer("n_ctx", d.n_ctx, 256), n_threads=r.integer("n_threads", d.n_threads, 0),
                       max_tokens=r.integer("max_tokens", d.max_tokens, 1),
                       temperature=r.number("temperature", d.temperature, 0.0),
                       repeat_penalty=r.number("repeat_penalty", d.repeat_penalty, 0.0),
                       seed=r.integer("seed", d.seed, 0))


def _read_limits(r: _Reader) -> LimitsConfig:
    return LimitsConfig(max_steps=r.integer("max_steps", 8, 0), tool_timeout=r.duration("tool_timeout", "30s"),
                        secret_refusals_per_day=r.integer("secret_refusals_per_day", 3, 1))


def _read_memory(r: _Reader) -> MemoryConfig:
    d = MemoryConfig()
    return MemoryConfig(max_note_bytes=r.integer("max_note_bytes", d.max_note_bytes, 1),
                        catalog_head_bytes=r.integer("catalog_head_bytes", d.catalog_head_bytes, 64),
                        catalog_budget_bytes=r.integer("catalog_budget_bytes", d.catalog_budget_bytes, 256),
                        summary_width=r.integer("summary_width", d.summary_width, 10),
                        pinned=r.strings("pinned", d.pinned, 'pinned = ["index.md"]'),
                        reflect=r.choice("reflect", d.reflect, REFLECT_CHOICES))


def _read_policy(r: _Reader) -> Mapping[str, object]:
    # the policy layer owns the rules: the table's cells, and the one key of a session that has
    # read untrusted content (each problem listed with its own example)
    try:
        after_untrusted_cell(r.raw)
    except PolicyConfigError:
        r.problems.append(Problem("policy", f"policy.{AFTER_UNTRUSTED_KEY}", r.raw.get(AFTER_UNTRUSTED_KEY),
                                  'expected "ask" or "allow"', f'{AFTER_UNTRUSTED_KEY} = "ask"'))
    try:
        policy_table({k: v for k, v in r.raw.items() if k != AFTER_UNTRUSTED_KEY})
    except PolicyConfigError as exc:
        r.problems.append(Problem("policy", "policy", None, str(exc).removeprefix("config.toml: "),
                                  'memory_unattended = "deny"', has_value=False))
    return MappingProxyType(dict(r.raw))


_PUSH_URL = re.compile(r"^[a-z][a-z0-9+.-]*://[^\s]+$")


def web_url_problem(url: str) -> str | None:
    """Why `url` cannot be [approvals] web_url, or None. It is the base of every signed link:
    http(s), a host, no user:password, query or fragment."""
    if url == "":
        return None
    try:
        parts = urlsplit(url)
        parts.port
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "expected an http:// or https:// URL with a host"
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        return "expected no user:password@, ?query or #fragment (the links add their own)"
    if any(ch.isspace() or ord(ch) < 0x20 or ch in "<>\"',;" for ch in url):
        return "expected no spaces, quotes, angle brackets, commas, semicolons or control characters"
    return None


def _read_approvals(r: _Reader) -> ApprovalSettings:
    d = ApprovalSettings()
    web_url = r.text("web_url", d.web_url).rstrip("/")
    why = web_url_problem(web_url)
    if why:
        # a user:password@ in it is never echoed back (stderr may be an MCP client's log)
        shown = web_url if "@" not in web_url else "(the URL, not repeated: it holds user information)"
        r.bad("approvals.web_url", shown, why, 'web_url = "https://assistant.example.net"')
        web_url = d.web_url
    push = r.strings("push", d.push, 'push = ["ntfys://ntfy.sh/my-topic"]')
    for url in push:
        if not _PUSH_URL.match(url):
            # the URL may carry the service's token: never echoed back
            r.bad("approvals.push", "(an entry)", "expected apprise URLs like ntfys://ntfy.sh/TOPIC, "
                  "one per string (scheme://..., no spaces)", 'push = ["ntfys://ntfy.sh/my-topic"]')
            push = d.push
            break
    notify = r.strings("notify", (), 'notify = ["notify-send", "assistant", "{summary}"]')
    if not web_url and any("{" + name + "}" in a for a in notify for name in LINK_FIELDS):
        r.bad("approvals.notify", "(the command, not repeated: it may hold a token)", "uses {show_url}, {approve_url} or {deny_url}, which need "
              "[approvals] web_url (where `assistant approvals serve` is reached)",
              'web_url = "http://127.0.0.1:8765"')
    return ApprovalSettings(channel=r.choice("channel", "inbox", ("inbox", "none")),
                            timeout=r.duration("timeout", "15m"), notify=notify, web_url=web_url, push=push)


def _read_vault(r: _Reader) -> VaultConfig:
    d = VaultConfig()
    return VaultConfig(key_file=r.text("key_file", d.key_file), unlock=r.choice("unlock", d.unlock, ("", "keyring")),
                       required=r.boolean("required", d.required),
                       opslimit=r.integer("opslimit", d.opslimit, 1),
                       memlimit_mib=r.integer("memlimit_mib", d.memlimit_mib, 1))


def _read_web(r: _Reader) -> WebConfig:
    return WebConfig(max_bytes=r.integer("max_bytes", WebConfig.max_bytes, 1), timeout=r.duration("timeout", "10s"))


def _read_recall(r: _Reader) -> RecallConfig:
    d = RecallConfig()
    max_notes = r.integer("max_notes", d.max_notes, 1)
    if max_notes > 20:
        r.bad("recall.max_notes", max_notes, "expected a whole number from 1 to 20", f"max_notes = {d.max_notes}")
        max_notes = d.max_notes
    budget = r.integer("budget_bytes", d.budget_bytes, 128)
    if budget > 64 * 1024:
        r.bad("recall.budget_bytes", budget, "expected a whole number from 128 to 65536",
              f"budget_bytes = {d.budget_bytes}")
        budget = d.budget_bytes
    min_score = r.number("min_score", d.min_score, 0.0)
    if min_score > 1.0:
        r.bad("recall.min_score", min_score, "expected a share of the best match's score, from 0 to 1",
              f"min_score = {d.min_score}")
        min_score = d.min_score
    return RecallConfig(enabled=r.boolean("enabled", d.enabled), max_notes=max_notes, budget_bytes=budget,
                        min_score=min_score,
                        include_conversations=r.boolean("include_conversations", d.include_conversations),
                        embedding_model=r.text("embedding_model", d.embedding_model))


def _read_files(r: _Reader) -> FilesConfig:
    example = 'hidden = ["*.key", "private/"]'
    hidden = r.strings("hidden", FilesConfig.hidden, example)
    try:
        HiddenFiles(hidden)
    except HiddenPatternError as exc:
        r.bad("files.hidden", list(hidden), f"{exc} (a list of gitignore-style patterns)", example)
    return FilesConfig(hidden=hidden)


def _read_sync(r: _Reader) -> SyncConfig:
    return SyncConfig(files=r.boolean("files", SyncConfig.files))


def _read_mcp(r: _Reader) -> McpConfig:
    return McpConfig(mode=r.choice("mode", McpConfig.mode, ("unattended", "watched")))


# Section name -> (its keys, its reader). The order is the order problems are listed in.
_READERS: dict[str, tuple[tuple[str, ...] | None, Callable[[_Reader], object]]] = {
    "model": (tuple(f.name for f in fields(ModelConfig)), _read_model),
    "limits": (tuple(f.name for f in fields(LimitsConfig)), _read_limits),
    "memory": (tuple(f.name for f in fields(MemoryConfig)), _read_memory),
    "policy": (None, _read_policy),    # its keys are checked by the policy layer
    "approvals": (tuple(f.name for f in fields(ApprovalSettings)), _read_approvals),
    "vault": (tuple(f.name for f in fields(VaultConfig)), _read_vault),
    "web": (tuple(f.name for f in fields(WebConfig)), _read_web),
    "recall": (tuple(f.name for f in fields(RecallConfig)), _read_recall),
    "files": (tuple(f.name for f in fields(FilesConfig)), _read_files),
    "mcp": (tuple(f.name for f in fields(McpConfig)), _read_mcp),
    "sync": (tuple(f.name for f in fields(SyncConfig)), _read_sync),
}
SECTIONS = (*_READERS, "schedule")

T = TypeVar("T")


class _Section(Generic[T]):
    """A typed section of a Config, as an attribute: reading it raises ConfigError when the
    section (or the file) has a problem, so a broken section stops only what reads it."""

    def __init__(self, kind: type[T]) -> None:
        self.kind = kind
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, config: "Config", owner: type | None = None) -> T:
        return config._section(self.name, self.kind)


@dataclass(frozen=True)
class Config:
    """The typed config of one workspace. Reading a section whose values are bad raises a
    ConfigError listing every problem in it (and any problem with the file as a whole)."""

    path: Path
    raw: Mapping[str, object] = field(default_factory=dict, repr=False)   # the document as read
    sections: Mapping[str, object] = field(default_factory=dict, repr=False)
    problems: tuple[Problem, ...] = ()

    def problems_in(self, *names: str) -> tuple[Problem, ...]:
        """The problems of these sections, and of the file as a whole (none if no names)."""
        if not names:
            return ()
        return tuple(p for p in self.problems if p.section == "" or p.section in names)

    def require(self, *names: str) -> None:
        """ConfigError unless the named sections (and the file itself) are all valid."""
        unknown = [n for n in names if n not in SECTIONS]
        if unknown:
            raise ValueError(f"no config section {', '.join(unknown)} (known: {', '.join(SECTIONS)})")
        found = self.problems_in(*names)
        if found:
            raise ConfigError(self.path, found)

    def _section(self, name: str, kind: type[T]) -> T:
        self.require(name)
        value = self.sections[name]
        assert isinstance(value, kind)
        return value

    model = _Section(ModelConfig)
    limits = _Section(LimitsConfig)
    memory = _Section(MemoryConfig)

    @property
    def policy(self) -> Mapping[str, object]:
        self.require("policy")
        return self.sections["policy"]   # type: ignore[return-value]  # a read-only mapping

    approvals = _Section(ApprovalSettings)
    vault = _Section(VaultConfig)
    web = _Section(WebConfig)
    recall = _Section(RecallConfig)
    files = _Section(FilesConfig)
    sync = _Section(SyncConfig)

    @property
    def mcp(self) -> McpConfig:
        return self._section("mcp", McpConfig)

    @property
    def schedule(self) -> tuple[Schedule, ...]:
        return self._section("schedule", tuple)

    def updated(self, changes: Mapping[str, object]) -> "Config":
        """A new Config with `changes` ({section: {key: value}} or {"schedule": [...]}) laid over
        this one's document, validated the same way (for tests and tools that adjust a setting)."""
        doc: dict[str, object] = dict(self.raw)
        for name, value in changes.items():
            old = doc.get(name)
            doc[name] = {**old, **value} if isinstance(old, Mapping) and isinstance(value, Mapping) else value
        return parse(doc, self.path)


def parse(doc: Mapping[str, object], path: Path | str = FILE) -> Config:
    """Validate a config document (what tomllib gives) into a Config. Never raises for bad
    values: each becomes a Problem, reported when its section is asked for."""
    problems: list[Problem] = []
    sections: dict[str, object] = {}
    for key, value in doc.items():
        if key not in SECTIONS:
            problems.append(Problem("", key, value, f"unknown setting {key} (known sections: "
                                    f"{', '.join(SECTIONS)})", "", has_value=False))
    for name, (known, read) in _READERS.items():
        sections[name] = read(_Reader(name, doc.get(name, {}), problems, known))
    schedules, bad = parse_schedules(doc.get("schedule", []))
    sections["schedule"] = tuple(schedules)
    problems.extend(Problem("schedule", "schedule", None, msg.removeprefix("config.toml: "),
                            '[[schedule]] name = "morning" cron = "30 7 * * 1-5" task = "..."', has_value=False)
                    for msg in bad)
    return Config(path=Path(path), raw=MappingProxyType(dict(doc)), sections=MappingProxyType(sections),
                  problems=tuple(problems))


def read(path: Path) -> Config:
    """config.toml at `path` (missing = all defaults). An unreadable or non-TOML file is a
    problem of the whole file: every section that is asked for reports it."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return parse({}, path)
    except OSError as exc:
        return _broken(path, f"cannot be read: {exc.strerror or exc}")
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return _broken(path, f"not valid TOML: {exc}")
    return parse(doc, path)


def _broken(path: Path, why: str) -> Config:
    base = parse({}, path)
    return Config(path=path, raw=base.raw, sections=base.sections,
                  problems=(Problem("", "", None, why, "", has_value=False),))


def defaults() -> Config:
    return parse({}, FILE)


__all__ = ["Config", "ConfigError", "Problem", "SECTIONS", "ModelConfig", "LimitsConfig", "MemoryConfig", "SyncConfig",
           "VaultConfig", "WebConfig", "FilesConfig", "McpConfig", "ApprovalSettings", "parse", "read", "defaults"]
