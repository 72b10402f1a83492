"""The composition root: the one place that wires a session.

Guards the rule that every door into the assistant gets the same guarantees. Chat, an
unattended run, the `assistant memory` CLI, the plain Python API (`assistant.memory.memory_*`)
and any later door (an MCP server, the web approval page) open a session here and nowhere else:
this module is the only one that unlocks the scanner for a session and the only one that builds
a policy Gate, or any of its parts (`Inbox`, `AuditLog`, `GrantStore`: doors that need only
those, without a session, get them from `policy_files`). A new gate rule is therefore added
once. The search index (`session.index`) is built here too, redacted by the session's scanner,
with per-turn recall over it (`session.recall`).

    with open_session(ws, "unattended", kind="run") as session:
        session.memory.write(...)          # scanned, gated, confined
        agent = session.new_agent(model)

`open_session` fails closed with a SessionError whose message says the fix: a vault that exists
but cannot be unlocked never yields a session that scans without the vault's values.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from policy.approvals import Inbox, Request
from policy.audit import AuditLog
from policy.gate import Gate, Question
from policy.grants import GrantStore
from policy.notify import run_notify

from assistant.agent.loop import Agent, Limits, reply_limit
from assistant.agent.events import EventSink
from assistant.agent.prompt import Conversation
from assistant.approvals.answering import PolicyFiles
from assistant.approvals.links import load_signer
from assistant.approvals.push import pusher
from assistant.confine import Root, directory_chain
from assistant.gating.observed import ObservedGate
from assistant.gating.untrusted import UntrustedReads
from assistant.models.base import Model
from assistant.notes.flagging import FLAG_WORDS
from assistant.notes.history import History, HistoryError, valid_source
from assistant.notes.store import Memory
from assistant.notes.watch import MemoryWatcher, NoteChange
from assistant.recall.index import Index, vault_fingerprint
from assistant.recall.turn import Recaller
from assistant.records.transcript import Transcript, new_session_id
from assistant.secrets.audit_key import audit_key
from assistant.secrets.budget import RefusalBudget
from assistant.secrets.refusals import SecretRefusals
from assistant.secrets.scanner import Scanner
from assistant.secrets.vault import Vault, VaultLocked, unlock_if_present
from assistant.tools.base import Tool, ToolContext
from assistant.tools.registry import all_tools
from assistant.workspace.config import ConfigError
from assistant.workspace.layout import Workspace, WorkspaceError, open_workspace, select_workspace

MODES = ("watched", "unattended")
# The config sections every session reads (its tools and gate), and those only model turns need:
# a door that runs no turns (the memory CLI, the Python API) is not stopped by a bad [model].
SESSION_SECTIONS = ("memory", "policy", "approvals", "vault", "web", "files", "recall")
TURN_SECTIONS = ("model", "limits")
# The doors where the person is the one asking (their own CLI, their own script through the
# Python API), when no model turns run in them: a secret refused there is audited but not
# counted toward the workspace's refusal budget, because whoever can open such a session has
# unlocked the vault and could read its values; a refusal tells them nothing. Every other
# session (chat, run, MCP, any new door, any session that runs model turns) counts, and needs
# [limits] for secret_refusals_per_day.
PERSON_KINDS = ("cli", "api")


class SessionError(Exception):
    """A session that cannot start (locked vault, bad config, unusable state/). The message
    names the problem and the fix."""


@dataclass
class AssistantSession:
    """Everything one session's tools can reach, wired once. Close it (or use `with`). Not
    policy.engine.Session, which is a run's grant scope inside the gate."""

    ws: Workspace
    mode: str
    id: str
    kind: str
    scanner: Scanner
    vault: Vault | None
    gate: ObservedGate
    memory: Memory
    files: Root
    tools: list[Tool]
    ctx: ToolContext
    transcript: Transcript | None
    limits: Limits | None          # None for a session that runs no model turns (transcript=False)
    index: Index                   # the derived search index in state/ (opened on first use)
    recall: Recaller               # per-turn recall and memory_search over `index`
    # the secret-refusal rule every door applies (the scan, the audit record, the count that
    # ends the session at the second): one per session, shared by its agent and its MCP server
    refusals: SecretRefusals
    history: History | None = None
    # Who is asking through this session when it is not the workspace's own model or the person:
    # "mcp:<client name>" once an MCP client has said its name (set_requester).
    requester: str | None = None
    # What this session has read from untrusted places (the same record as ctx.reads, which the
    # tools mark and the gate reads): mark_untrusted / untrusted_sources / clear_untrusted.
    reads: UntrustedReads = field(default_factory=UntrustedReads)
    _closed: bool = field(default=False, repr=False)

    @property
    def policy_gate(self) -> "Gate":
        """The policy Gate behind the session's observed gate (`gate`): its approval timeout,
        notify command and open requests. open_session always builds one."""
        return self.gate.gate  # type: ignore[return-value]

    def set_requester(self, source: str) -> None:
        """Name who asks through this session (e.g. "mcp:Claude Desktop", from the MCP handshake):
        the gate names it in every audit line and approval request from now on, and it is the
        history source the door writes with. ValueError for a source history would refuse."""
        if not valid_source(source) or source in ("person", "hand-edit", "revert", "removal"):
            raise ValueError(f"not a requester: {source!r} (mcp:<client name>, or assistant)")
        self.requester = source
        self.refusals.requester = source
        if isinstance(self.policy_gate, Gate):
            self.policy_gate.requester = source

    def mark_untrusted(self, source: str) -> None:
        """Record that this session has read untrusted content from `source` (a URL, files/<path>,
        or a note flagged as reading like an instruction, e.g. "memory/inbox/rule.md (flagged)"):
        from now on a memory write or edit in a watched chat is asked inline, naming it, unless
        `[policy] watched_after_untrusted = "allow"`; an unattended run's approval requests name
        it. web_fetch and file_read mark through ctx.read_untrusted; the flagger's caller uses
        this. The mark lasts until clear_untrusted (/reload). An MCP session records it but its
        ruling is unchanged (its gate does not read the record). ValueError for an empty name."""
        self.reads.mark(source)

    @property
    def untrusted_sources(self) -> tuple[str, ...]:
        """What this session has read from untrusted places, oldest first."""
        return self.reads.sources()

    def clear_untrusted(self) -> None:
        """The person started over (/reload): what was read before is in no conversation now."""
        self.reads.clear()

    def notice_hand_edits(self, watcher: MemoryWatcher) -> list[NoteChange]:
        """Between turns, the one intake every door that watches memory/ calls: the notes the
        watcher saw change on disk since it last looked. Recall re-reads just these, and each
        hand edit becomes a version in history/ now (issue 12); a busy lock leaves that to the
        next write to the note, which records it before writing."""
        fresh = watcher.drain()
        self.index.note_changes(c.path for c in fresh)
        if fresh:
            try:
                self.memory.notice(sorted({c.path for c in fresh}))
            except Exception:   # noqa: BLE001 - the next write to the note records it anyway
                pass
        return fresh

    def new_agent(self, model: Model, *, on_event: EventSink | None = None) -> Agent:
        """An Agent on a fresh Conversation (persona + tools + the catalog as of now)."""
        if self.limits is None:
            raise SessionError("this session was opened without model turns (transcript=False)")
        # PERSONA.md is hand-written and goes into every prompt: redacted like any text the model sees.
        persona = self.scanner.redact(self.ws.persona())
        self.ctx.model = str(getattr(model, "name", "") or type(model).__name__)
        flagged: list[str] = []
        conversation = Conversation(persona, self.tools, self.memory.catalog(flagged=flagged),
                                    max_reply=reply_limit(self.limits.max_tokens),
                                    protocol=str(getattr(model, "protocol", "actions") or "actions"))
        for path in flagged:   # a flagged note's line is in every prompt of this agent: a read
            self.mark_untrusted(f"memory/{path} ({FLAG_WORDS}, in the catalog)")
        self.recall.start()     # session start: sync the index with memory/ by metadata
        return Agent(model=model, tools=self.tools, ctx=self.ctx, conversation=conversation,
                     transcript=self.transcript, limits=self.limits, on_event=on_event, recall=self.recall,
                     refusals=self.refusals)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.transcript is not None:
                self.transcript.close()
        finally:
            self.index.close()
            self.files.close()
            if self.history is not None:
                self.history.close()

    def __enter__(self) -> AssistantSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def unlock_scanner(ws: Workspace, *, interactive: bool) -> tuple[Scanner, Vault | None]:
    """(scanner, vault or None). No vault.enc -> credential shapes only; a vault that cannot be
    unlocked is a SessionError (never a session that scans without the values)."""
    try:
        vault = unlock_if_present(ws, interactive=interactive)
    except VaultLocked as exc:
        raise SessionError(str(exc)) from None
    return (vault.scanner(), vault) if vault is not None else (Scanner({}), None)


def policy_files(ws: Workspace, *, audit_key: "bytes | Callable[[], bytes] | None" = None,
                 scanner: Scanner | None = None) -> PolicyFiles:
    """The light accessor for doors that list or answer without a session (`approvals
    list|show|approve|deny|ack`, `approvals serve`, `grants`, `doctor`): the approvals inbox,
    grants.json, the audit log and the secret-refusal budget (its block shown and lifted; only a
    session counts, with [limits] secret_refusals_per_day). It reads no config section and unlocks no vault, so it works
    with a broken config.toml and asks for no passphrase. Such doors log no free text but the
    person's reason: every line is scanned for credential shapes (a vault's values are not
    known here unless the door unlocked the vault without asking and passes its `scanner`; a
    session's own audit log redacts them too). `audit_key`: the vault's audit key
    (assistant.secrets.audit_key.audit_key of the vault unattended_unlock gave), None for unkeyed lines."""
    shapes = scanner if scanner is not None else Scanner({})
    return PolicyFiles(inbox=Inbox(ws.approvals_dir), grants=GrantStore(ws.grants_path),
                       audit=AuditLog(ws.audit_path, redact=shapes.redact, key=audit_key),
                       refusals=RefusalBudget(ws.state_dir, audit_path=ws.audit_path))


def _build_gate(ws: Workspace, *, mode: str, run_id: str, scanner: Scanner,
                inline_ask: Callable[[Question], object] | None, approval_timeout: float | None,
                on_request: Callable[[Request], None] | None, vault: Vault | None = None,
                reads: UntrustedReads | None = None) -> Gate:
    """The policy Gate for this session's mode: the only Gate any session gets. Its audit log is
    keyed with the vault's audit key (created at its first line) when there is a vault. `reads`:
    the session's record of untrusted reads, which the gate rules by (None: it is not read)."""
    approvals = ws.config.approvals
    if approval_timeout is not None:
        approvals = replace(approvals, timeout=approval_timeout)
    links = push = None
    if approvals.web_url:     # signed links for {show_url} {approve_url} {deny_url} and the push
        links = load_signer(ws.state_dir, approvals.web_url).urls
    if approvals.push:
        push = pusher(approvals.push).send
    return Gate(mode, run_id=run_id, audit=AuditLog(ws.audit_path, redact=scanner.redact, key=audit_key(vault)),
                grants=GrantStore(ws.grants_path), policy=ws.config.policy, approvals=approvals,
                inbox=Inbox(ws.approvals_dir), inline_ask=inline_ask, redact=scanner.redact,
                on_request=on_request, links=links, push=push,
                untrusted_reads=reads.sources if reads is not None else None)


def _build_recall(ws: Workspace, scanner: Scanner, vault: Vault | None,
                  session_id: str) -> tuple[Index, Recaller]:
    """The session's search index (state/index.sqlite3, redacted by this session's scanner,
    keyed to the vault's secret set) and its recall. Nothing is opened yet. A bad [recall]
    setting is a ValueError."""
    settings = ws.config.recall
    if settings.embedding_model:      # a relative path is taken from the workspace, like model.path
        model = Path(settings.embedding_model).expanduser()
        settings = replace(settings, embedding_model=str(model if model.is_absolute() else Path(ws.root) / model))
    notices: list[str] = []
    index = Index(ws.state_dir, ws.memory_dir, ws.transcripts_dir, redact=scanner.redact,
                  redact_prefix=scanner.redact_prefix, fingerprint=vault_fingerprint(vault),
                  notice=notices.append)
    return index, Recaller(index, settings, notices=notices, own_conversation=f"{session_id}.jsonl",
                           own_notes=ws.config.memory.pinned)


def _teller(gate: Gate) -> Callable[[str], object]:
    """Tell the person a one-line message through the notify command ([approvals] notify), run
    the way an approval notification runs it (no shell, no vault variables, bounded)."""
    def tell(message: str) -> object:
        return run_notify(list(gate.notify or []), message, timeout=gate.notify_timeout)
    return tell


def _mount_reach(ws: Workspace) -> str | None:
    """Why the file tools' mount (files/, wherever a link takes it) would reach the workspace's
    private parts, or None. `ln -s ~ files` with the workspace under ~ would put memory/,
    grants.json, config.toml and the vault within file_write's reach: the session refuses."""
    try:
        mount = directory_chain(ws.files_dir)
        private = [("the workspace", ws.root, False), ("memory/", ws.memory_dir, True),
                   ("history/", ws.history_dir, True), ("state/", ws.state_dir, True)]
        for what, path, inside in private:
            try:
                chain = directory_chain(path)
            except FileNotFoundError:
                continue
            if mount[0] in chain:
                return (f"files/ ({ws.files_dir}) holds {what} ({path}): the file tools would reach "
                        "memory/, grants.json, config.toml and the vault. Point files/ at a folder "
                        "that does not contain the workspace.")
            if inside and chain[0] in mount:
                return (f"files/ ({ws.files_dir}) lies inside {what} ({path}): the file tools would "
                        f"reach it. Point files/ at a folder outside the workspace's {what}.")
    except OSError as exc:
        return f"files/ ({ws.files_dir}) cannot be checked: {exc.strerror or exc}"
    return None


def open_session(
    ws: Workspace | str | os.PathLike[str] | None,
    mode: str,
    *,
    kind: str = "api",
    interactive: bool = False,
    inline_ask: Callable[[Question], object] | None = None,
    approval_timeout: float | None = None,
    tools: list[Tool] | None = None,
    on_request: Callable[[Request], None] | None = None,
    transcript: bool = True,
    turns: bool | None = None,
) -> AssistantSession:
    """Open one session on workspace `ws` (a Workspace, a path, or None for the default).

    mode: "watched" (a person sees every call as it happens) or "unattended" (asks out of band,
    denies when nobody can answer). kind names the door ("chat", "run", "cli", "api", ...) and
    prefixes the session id. interactive: may the vault ask for its passphrase on a terminal.
    transcript=False for doors that run no model turns (the memory CLI, the Python API).
    turns: does this session run model turns (needs [model] and [limits]); default: transcript.
    A door that keeps a transcript but runs no turns (the MCP server) passes turns=False.
    The result is a context manager; SessionError says what stopped it.
    """
    if mode not in MODES:
        raise SessionError(f"mode must be 'watched' or 'unattended', not {mode!r}")
    if not isinstance(ws, Workspace):
        try:
            ws = open_workspace(select_workspace(ws))
        except WorkspaceError as exc:
            raise SessionError(str(exc)) from None
    turns = transcript if turns is None else turns
    counted = turns or kind not in PERSON_KINDS
    try:   # every problem in the sections this session reads, listed at once
        ws.config.require(*SESSION_SECTIONS, *(TURN_SECTIONS if turns else ("limits",) if counted else ()))
    except ConfigError as exc:
        raise SessionError(str(exc)) from None
    limits = Limits.from_config(ws.config) if turns else None
    try:
        ws.ensure_state()
    except OSError as exc:
        raise SessionError(f"the workspace's state/ (approvals, transcripts, audit) cannot be set up: "
                           f"{exc.filename or ''}: {exc.strerror or exc}") from None
    budget = (RefusalBudget(ws.state_dir, per_day=ws.config.limits.secret_refusals_per_day, audit_path=ws.audit_path)
              if counted else None)
    if budget is not None and mode == "unattended" and turns:
        block = budget.block()      # before the vault is unlocked: a blocked run never starts
        if block is not None:
            raise SessionError(f"this unattended {kind} does not start: {block.reason()}")
    scanner, vault = unlock_scanner(ws, interactive=interactive)
    session_id = new_session_id(kind)
    reads = UntrustedReads()
    # Everything opened from here on is closed again if any later step fails, whatever it raises.
    with ExitStack() as opened:
        try:
            # MCP's rulings are unchanged by what it read (issue 24): its gate does not read the record
            real_gate = _build_gate(ws, mode=mode, run_id=session_id, scanner=scanner, inline_ask=inline_ask,
                                    approval_timeout=approval_timeout, on_request=on_request, vault=vault,
                                    reads=reads if kind != "mcp" else None)
        except Exception as exc:
            raise SessionError(f"the policy gate cannot start: {exc}") from None
        gate = ObservedGate(real_gate)
        try:
            Path(ws.files_dir).mkdir(mode=0o700, exist_ok=True)
            Path(ws.memory_dir).mkdir(mode=0o700, exist_ok=True)
            files = opened.enter_context(Root(ws.files_dir))
        except OSError as exc:
            raise SessionError(f"the workspace's files/ or memory/ cannot be opened: "
                               f"{exc.filename or ''}: {exc.strerror or exc}") from None
        problem = _mount_reach(ws)
        if problem is not None:
            raise SessionError(problem)
        try:
            memory = Memory(ws, scanner, gate, audit=real_gate.audit, run_id=session_id)
        except ValueError as exc:
            raise SessionError(str(exc)) from None
        if turns:
            # A crash mid-write leaves a dot-leading temp file: sessions that run model turns (chat,
            # run) sweep old ones at start, as before. One-shot doors (a `memory` command, the Python
            # API) leave that to them and touch nothing they were not asked to.
            try:
                memory.sweep_temp()
                files.sweep_temp()
            except Exception:
                pass   # housekeeping only: a busy lock or an odd entry must not stop the session
        history = History(ws.history_dir, revision=memory.revision)
        opened.callback(history.close)
        try:
            history.ensure()
        except (OSError, HistoryError) as exc:
            raise SessionError(f"the workspace's history/ cannot be set up: {exc}") from None
        memory.history = history
        try:   # hand edits since the last session (and a crashed writer's version) are recorded now
            memory.notice()
        except Exception:
            pass   # a busy lock: the next write to a note records its hand edit before writing
        try:
            index, recaller = _build_recall(ws, scanner, vault, session_id)
        except (ValueError, ConfigError) as exc:
            raise SessionError(str(exc) if isinstance(exc, ConfigError) else f"config.toml: {exc}") from None
        opened.callback(index.close)
        memory.on_change(index.own_writes)   # a search right after a write finds it, watcher or not
        tool_list = list(tools) if tools is not None else all_tools()
        ctx = ToolContext(workspace=ws, scanner=scanner, gate=gate, memory=memory, files=files, vault=vault,
                          audit=real_gate.audit, run_id=session_id, recall=recaller, reads=reads)
        log = None
        if transcript:
            try:
                log = Transcript(ws.transcripts_dir, session_id, scanner)
            except OSError as exc:
                raise SessionError(f"the session transcript cannot be opened in {ws.transcripts_dir}: "
                                   f"{exc.strerror or exc}") from None
            opened.callback(log.close)
        session = AssistantSession(ws=ws, mode=mode, id=session_id, kind=kind, scanner=scanner, vault=vault, gate=gate,
                                   memory=memory, files=files, tools=tool_list, ctx=ctx, transcript=log,
                                   limits=limits, index=index, recall=recaller, history=history, reads=reads,
                                   refusals=SecretRefusals(scanner, real_gate.audit, run_id=session_id, budget=budget,
                                                           tell=_teller(real_gate)))
        opened.pop_all()    # from now on the session's close() closes them
    return session

__all__ = ["MODES", "PERSON_KINDS", "AssistantSession", "SessionError", "open_session", "unlock_scanner"]
