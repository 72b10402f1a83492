"""memory_write / memory_read / memory_list end to end through the tool functions.

Real workspace on the real filesystem, real policy Gate (watched and unattended), real
approval inbox answered from another thread through the policy API, real leak scanner.
"""

import base64
import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from assistant.confine import Root
from assistant.secrets.scanner import Scanner
from assistant.memory import (
    CONFLICT_MESSAGE, Conflict, Memory, PathRefused, SecretRefused, Unreadable,
)
from assistant.notes.frontmatter import revision as keyed_revision
from assistant.secrets.revision_key import load_key
from assistant.tools.base import ToolContext, ToolError
from assistant.tools.memory import SAVED_NEXT, memory_tools, run_memory_list, run_memory_read, run_memory_write
from assistant.workspace.layout import init_workspace, open_workspace
from policy.approvals import Inbox
from policy.gate import Gate
from bounded import AnswersFirstRequest
from acceptance_support import PASS, SECRET as acc_SECRET, script, sub, with_vault

SECRET = "tangerine-Dream-4412-xyzzy"
NOTE = "---\ndescription: Anna, Sam's neighbour\n---\nAnna lives at number 12 and keeps bees.\n"


# --- fixtures ----------------------------------------------------------------------------------

@pytest.fixture
def ws(tmp_path):
    init_workspace(tmp_path / "ws", example=True)
    w = open_workspace(tmp_path / "ws")
    w.config = w.config.updated({"approvals": {"timeout": "10s"}})
    return w


def make_ctx(ws, mode="watched", scanner=None, **cfg):
    scanner = scanner or Scanner({"wifi": SECRET})
    ws.config = ws.config.updated({"approvals": cfg})
    ws.ensure_state()
    gate = Gate.for_workspace(mode, run_id=f"test-{mode}", config=ws.config, grants_path=ws.grants_path,
                              approvals_dir=ws.approvals_dir, audit_path=ws.audit_path,
                              redact=scanner.redact)
    mem = Memory(ws, scanner, gate)
    return ToolContext(workspace=ws, scanner=scanner, gate=gate, memory=mem)


def audit(ws):
    try:
        return [json.loads(ln) for ln in ws.audit_path.read_text().splitlines()]
    except FileNotFoundError:
        return []


def snapshot(root: Path) -> dict:
    out = {}
    for dp, dns, fns in os.walk(root):
        for n in fns + dns:
            p = Path(dp, n)
            st = os.lstat(p)
            out[str(p.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns,
                                             p.read_bytes() if p.is_file() and not p.is_symlink() else None)
    return out


class Approver(AnswersFirstRequest):
    """Answers the first request that appears in the inbox, through the policy API."""

    def __init__(self, ws, verdict="approved", remember="once", before=None):
        super().__init__(timeout=10)
        self.inbox = Inbox(ws.approvals_dir)
        self.verdict, self.remember, self.before = verdict, remember, before
        self.request = None

    def first(self):
        pending = [e.request for e in self.inbox.list() if e.state == "pending"]
        return pending[0] if pending else None

    def answer(self, request):
        self.request = request
        if self.before:
            self.before()
        self.inbox.answer(request.id, self.verdict, sha256=request.sha256, remember=self.remember,
                          reason="test says so")


def run_tool(fn, args, ctx):
    return fn(args, ctx)


# --- watched: allowed ---------------------------------------------------------------------------

def test_watched_write_is_allowed_and_audited_without_content(ws):
    ctx = make_ctx(ws, "watched")
    out = run_memory_write({"path": "people/anna.md", "content": NOTE}, ctx)
    data = (ws.memory_dir / "people/anna.md").read_bytes()
    assert data == NOTE.encode()
    assert out == (f"created people/anna.md ({len(data)} bytes); its revision is now {revision_in(ws, data)}"
                   + SAVED_NEXT)
    lines = audit(ws)
    assert [(ln["event"], ln.get("verdict")) for ln in lines] == [("ruling", "allow"), ("written", None)]
    assert lines[1]["sha256"] == hashlib.sha256(data).hexdigest() and lines[1]["created"] is True
    assert "bees" not in ws.audit_path.read_text()
    assert os.listdir(ws.approvals_dir) == []
    assert stat_mode(ws.memory_dir / "people/anna.md") == 0o600


def revision_in(ws, data):
    """The keyed revision (issue 10: revisions are HMAC-SHA256 under the workspace's key)."""
    return keyed_revision(data, load_key(ws.state_dir))


def stat_mode(p):
    return os.stat(p).st_mode & 0o777


def test_read_returns_content_and_revision_and_tool_output(ws):
    ctx = make_ctx(ws)
    note = ctx.memory.read("people/lina.md")
    raw = (ws.memory_dir / "people/lina.md").read_bytes()
    assert note.content == raw.decode() and note.revision == revision_in(ws, raw)
    out = run_memory_read({"path": "people/lina.md"}, ctx)
    assert f"revision: {note.revision}" in out and out.endswith(raw.decode())


# --- unattended: ask -> approve / deny / timeout ------------------------------------------------

def test_unattended_ask_then_approve_writes_exactly_the_approved_bytes(ws):
    ctx = make_ctx(ws, "unattended")
    content = NOTE + "Unicode survives: caf\u00e9 \u2014 \u65e5\u672c\n"
    approver = Approver(ws)
    approver.start()
    out = run_memory_write({"path": "people/anna.md", "content": content}, ctx)
    approver.join(5)
    assert approver.error is None
    req = approver.request
    on_disk = (ws.memory_dir / "people/anna.md").read_bytes()
    assert on_disk == content.encode()
    assert hashlib.sha256(on_disk).hexdigest() == req.sha256   # what was written is what was shown
    assert req.content == content and req.kind == "memory" and req.target == "people/anna.md"
    assert out.startswith("created people/anna.md")
    events = [(ln["event"], ln.get("verdict")) for ln in audit(ws)]
    assert events == [("ruling", "ask"), ("answer", "allow"), ("written", None)]


def test_unattended_replace_shows_current_for_the_diff(ws):
    ctx = make_ctx(ws, "unattended")
    rev = ctx.memory.read("people/lina.md").revision
    old = (ws.memory_dir / "people/lina.md").read_text()
    new = old + "Moved to Cardiff in 2026.\n"
    approver = Approver(ws)
    approver.start()
    run_memory_write({"path": "people/lina.md", "content": new, "base": rev}, ctx)
    approver.join(5)
    assert approver.request.current == old and approver.request.content == new
    assert (ws.memory_dir / "people/lina.md").read_text() == new


def test_unattended_ask_then_deny_writes_nothing(ws):
    ctx = make_ctx(ws, "unattended")
    before = snapshot(ws.memory_dir)
    approver = Approver(ws, verdict="denied")
    approver.start()
    with pytest.raises(ToolError, match="denied"):
        run_memory_write({"path": "people/anna.md", "content": NOTE}, ctx)
    approver.join(5)
    assert approver.error is None and approver.request is not None
    assert snapshot(ws.memory_dir) == before
    assert not any(ln["event"] == "written" for ln in audit(ws))


def test_unattended_ask_then_timeout_writes_nothing_and_stays_listed(ws):
    ctx = make_ctx(ws, "unattended", timeout="0.4s")
    rev = ctx.memory.read("people/lina.md").revision
    before = snapshot(ws.memory_dir)
    t = time.monotonic()
    with pytest.raises(ToolError, match="denied: expired"):
        run_memory_write({"path": "people/lina.md", "content": "overwritten\n", "base": rev}, ctx)
    assert time.monotonic() - t < 5
    assert snapshot(ws.memory_dir) == before
    [entry] = Inbox(ws.approvals_dir).list(all=True)
    assert entry.state == "expired"


def test_unattended_with_no_channel_is_denied_at_once(ws):
    ctx = make_ctx(ws, "unattended", channel="none")
    with pytest.raises(ToolError, match="denied"):
        run_memory_write({"path": "x.md", "content": "x\n"}, ctx)
    assert not (ws.memory_dir / "x.md").exists()
    assert os.listdir(ws.approvals_dir) == []


def test_grant_for_the_exact_note_allows_without_asking(ws):
    ctx = make_ctx(ws, "unattended")
    from policy.grants import GrantStore

    GrantStore(ws.grants_path).add("memory", "journal.md", note="test")
    run_memory_write({"path": "journal.md", "content": "day one\n"}, ctx)
    assert (ws.memory_dir / "journal.md").read_text() == "day one\n"
    assert os.listdir(ws.approvals_dir) == []


# --- secrets ----------------------------------------------------------------------------------

@pytest.mark.parametrize("payload", [
    f"the wifi password is {SECRET}\n",
    "encoded: " + base64.b64encode(SECRET.encode()).decode() + "\n",
    "aws key " + "AKIA" + "Q3ZT7LBN2WXK5RPM" + " here\n",   # not AWS's documented example: that is no finding
])
def test_secret_is_refused_before_any_approval_request_exists(ws, payload):
    ctx = make_ctx(ws, "unattended")
    before = snapshot(ws.root)
    with pytest.raises(ToolError) as info:
        run_memory_write({"path": "wifi.md", "content": payload}, ctx)
    msg = str(info.value)
    assert "secret" in msg and SECRET not in msg and "AKIA" + "Q3ZT7LBN2WXK5RPM" not in msg
    # issue 10 item 5 reverses "tell the model the name": a vault secret is never named to the
    # model (a named refusal is an oracle); a credential shape still says which kind it is
    assert "wifi" not in msg
    assert ("aws" in msg) == ("AKIA" in payload)
    assert snapshot(ws.root) == before                 # no note, no request, no audit line
    assert os.listdir(ws.approvals_dir) == []


def test_secret_in_the_path_is_refused_too(ws):
    ctx = make_ctx(ws, "watched")
    with pytest.raises(ToolError, match="secret"):
        run_memory_write({"path": f"{SECRET}.md", "content": "x\n"}, ctx)
    assert SECRET not in ws.audit_path.read_text() if ws.audit_path.exists() else True
    assert not (ws.memory_dir / f"{SECRET}.md").exists()


def test_read_redacts_a_secret_added_to_the_vault_after_the_note_was_written(ws):
    from assistant.secrets.vault import Vault, load_scanner

    ctx = make_ctx(ws, "watched", scanner=Scanner({}))
    run_memory_write({"path": "router.md", "content": f"router admin login: {SECRET}\n"}, ctx)
    raw = (ws.memory_dir / "router.md").read_bytes()
    # later, the person stores that value in the vault
    os.environ["ASSISTANT_VAULT_PASSPHRASE"] = "correct horse battery staple"
    try:
        v = Vault.create(ws.vault_path, "correct horse battery staple", opslimit=1, memlimit=8 * 1024 * 1024)
        v.set("router-admin", SECRET)
        scanner = load_scanner(ws, interactive=False)
    finally:
        del os.environ["ASSISTANT_VAULT_PASSPHRASE"]
    ctx2 = make_ctx(ws, "watched", scanner=scanner)
    note = ctx2.memory.read("router.md")
    assert SECRET not in note.content and "[redacted:router-admin]" in note.content
    assert note.revision == revision_in(ws, raw)            # revision is of the bytes on disk
    out = run_memory_read({"path": "router.md"}, ctx2)
    assert SECRET not in out
    assert SECRET not in ctx2.memory.catalog()
    # and rewriting the note with the secret is now refused
    with pytest.raises(SecretRefused) as info:
        ctx2.memory.write("router.md", raw.decode(), base=note.revision)
    # the name is for the person (CLI, audit), never in the message the model gets (issue 10)
    assert info.value.names == ("router-admin",) and info.value.vault
    assert "router-admin" not in str(info.value)


# --- read before overwrite --------------------------------------------------------------------

def test_overwrite_requires_the_current_revision(ws):
    ctx = make_ctx(ws)
    with pytest.raises(ToolError, match="already exists; nothing was written. To add a line to it: memory_edit"):
        run_memory_write({"path": "people/lina.md", "content": "clobber\n"}, ctx)
    with pytest.raises(ToolError, match=CONFLICT_MESSAGE):
        run_memory_write({"path": "people/lina.md", "content": "clobber\n", "base": "0123456789ab"}, ctx)
    rev = ctx.memory.read("people/lina.md").revision
    out = run_memory_write({"path": "people/lina.md", "content": "updated\n", "base": rev}, ctx)
    assert out.startswith("replaced people/lina.md")
    assert (ws.memory_dir / "people/lina.md").read_text() == "updated\n"
    # the old base is stale now
    with pytest.raises(ToolError, match=CONFLICT_MESSAGE):
        run_memory_write({"path": "people/lina.md", "content": "again\n", "base": rev}, ctx)


def test_hand_edit_between_read_and_write_is_a_conflict(ws):
    ctx = make_ctx(ws)
    rev = ctx.memory.read("people/lina.md").revision
    (ws.memory_dir / "people/lina.md").write_text("the person fixed this by hand\n")
    with pytest.raises(ToolError) as info:
        run_memory_write({"path": "people/lina.md", "content": "model's version\n", "base": rev}, ctx)
    assert "changed since you read it, read it again" in str(info.value)
    assert (ws.memory_dir / "people/lina.md").read_text() == "the person fixed this by hand\n"


def test_hand_edit_while_the_approval_is_pending_is_a_conflict(ws):
    ctx = make_ctx(ws, "unattended")
    rev = ctx.memory.read("people/lina.md").revision
    target = ws.memory_dir / "people/lina.md"
    approver = Approver(ws, before=lambda: target.write_text("edited while waiting\n"))
    approver.start()
    with pytest.raises(ToolError, match=CONFLICT_MESSAGE):
        run_memory_write({"path": "people/lina.md", "content": "model's version\n", "base": rev}, ctx)
    approver.join(5)
    assert approver.error is None
    assert target.read_text() == "edited while waiting\n"


def test_create_needs_no_base_but_create_over_existing_is_refused(ws):
    ctx = make_ctx(ws)
    run_memory_write({"path": "new.md", "content": "one\n"}, ctx)
    with pytest.raises(ToolError, match="already exists"):
        run_memory_write({"path": "new.md", "content": "two\n"}, ctx)
    assert (ws.memory_dir / "new.md").read_text() == "one\n"
    # base for a note that no longer exists
    rev = ctx.memory.read("new.md").revision
    (ws.memory_dir / "new.md").unlink()
    with pytest.raises(Conflict, match="no longer exists"):
        ctx.memory.write("new.md", "three\n", base=rev)


# --- path rules -------------------------------------------------------------------------------

BAD_PATHS = [
    ("", "empty"),
    ("/etc/passwd.md", "absolute"),
    ("../escape.md", "'..'"),
    ("people/../../escape.md", "'..'"),
    ("./people/lina.md", "'.'"),
    ("people//lina.md", "empty"),
    ("people/", "trailing slash"),
    (".hidden.md", "dot"),
    ("people/.tmp-123.md", "dot"),
    ("notes.txt", "does not end in .md"),
    ("people/lina", "does not end in .md"),
    ("people\\lina.md", "backslash"),
    ("a\x00b.md", "NUL"),
    ("a\nb.md", "control"),
    ("\u202egnp.md", "bidi"),
    ("people\uff0flina.md", "fullwidth solidus"),
    ("x" * 256 + ".md", "255 bytes"),
    ("/".join(["d"] * 33) + ".md", "components"),
]


@pytest.mark.parametrize("path,why", BAD_PATHS)
def test_every_path_rule_refusal(ws, path, why):
    ctx = make_ctx(ws, "unattended")
    before = snapshot(ws.root)
    with pytest.raises(ToolError) as info:
        run_memory_write({"path": path, "content": "x\n"}, ctx)
    assert why in str(info.value)
    with pytest.raises(ToolError):
        run_memory_read({"path": path}, ctx)
    assert snapshot(ws.root) == before      # nothing written, nothing asked, nothing audited


def test_non_string_path_and_content(ws):
    ctx = make_ctx(ws)
    with pytest.raises(ToolError, match="path must be a string"):
        run_memory_write({"path": 7, "content": "x"}, ctx)
    with pytest.raises(PathRefused, match="must be a string"):
        ctx.memory.write(["a.md"], "x")
    with pytest.raises(ToolError, match="content must be a string"):
        run_memory_write({"path": "a.md", "content": {"x": 1}}, ctx)


def test_percent_encoding_is_a_literal_name_inside_memory(ws):
    ctx = make_ctx(ws)
    run_memory_write({"path": "%2e%2e%2fx.md", "content": "literal\n"}, ctx)
    assert (ws.memory_dir / "%2e%2e%2fx.md").read_text() == "literal\n"
    assert not (ws.root / "x.md").exists()


def test_symlinked_folder_in_memory_is_refused(ws, tmp_path):
    ctx = make_ctx(ws)
    os.symlink(ws.files_dir, ws.memory_dir / "linked")
    before = snapshot(ws.files_dir)
    with pytest.raises(ToolError, match="path refused|symlink|cannot be read"):
        run_memory_write({"path": "linked/x.md", "content": "x\n"}, ctx)
    with pytest.raises(ToolError):
        run_memory_read({"path": "linked/reading-list.md"}, ctx)
    assert snapshot(ws.files_dir) == before


def test_unreadable_notes_give_clear_errors(ws, tmp_path):
    ctx = make_ctx(ws)
    outside = tmp_path / "outside.md"
    outside.write_text("OUTSIDE\n")
    os.symlink(outside, ws.memory_dir / "link.md")
    os.mkfifo(ws.memory_dir / "pipe.md")
    (ws.memory_dir / "latin.md").write_bytes("caf\xe9\n".encode("latin-1"))
    (ws.memory_dir / "big.md").write_bytes(b"x" * (ws.config.memory.max_note_bytes + 1))
    (ws.memory_dir / "folder.md").mkdir()
    cases = {"link.md": "symlink", "pipe.md": "FIFO", "latin.md": "not UTF-8",
             "big.md": "larger than", "folder.md": "directory|folder", "missing.md": "no note at"}
    for path, why in cases.items():
        with pytest.raises(ToolError, match=why):
            run_memory_read({"path": path}, ctx)
    # overwriting through the leaf symlink is refused and the target is untouched
    with pytest.raises(Unreadable):
        ctx.memory.write("link.md", "replaced\n", base="0" * 12)
    assert outside.read_text() == "OUTSIDE\n"


# --- content rules ----------------------------------------------------------------------------

def test_content_rules(ws):
    ws.config = ws.config.updated({"memory": {"max_note_bytes": 100}})
    ctx = make_ctx(ws)
    with pytest.raises(ToolError, match="NUL"):
        run_memory_write({"path": "a.md", "content": "a\x00b"}, ctx)
    with pytest.raises(ToolError, match="101 bytes; a note may be at most 100"):
        run_memory_write({"path": "a.md", "content": "x" * 101}, ctx)
    with pytest.raises(ToolError, match="not valid UTF-8"):
        run_memory_write({"path": "a.md", "content": "bad \udc80 surrogate"}, ctx)
    from assistant.memory import ContentRefused

    with pytest.raises(ContentRefused, match="not valid UTF-8"):
        ctx.memory.write("a.md", b"\xff\xfe")
    assert not (ws.memory_dir / "a.md").exists()
    run_memory_write({"path": "a.md", "content": "\u00e9" * 50}, ctx)  # exactly 100 bytes
    assert len((ws.memory_dir / "a.md").read_bytes()) == 100


def test_gate_that_fails_is_a_deny(ws):
    ctx = make_ctx(ws)
    ws.audit_path.mkdir()  # the gate cannot write its audit line -> deny
    with pytest.raises(ToolError, match="denied"):
        run_memory_write({"path": "a.md", "content": "x\n"}, ctx)
    assert not (ws.memory_dir / "a.md").exists()


# --- listing and tool shapes ------------------------------------------------------------------

def test_memory_list_pages_in_catalog_order(ws):
    ctx = make_ctx(ws)
    for i in range(7):
        Root(ws.memory_dir).write_bytes(f"t/{i}.md", f"note {i}\n".encode())
        os.utime(ws.memory_dir / f"t/{i}.md", (2_000_000_000 + i, 2_000_000_000 + i))
    out = run_memory_list({"offset": 1, "limit": 3}, ctx)
    lines = out.splitlines()
    assert lines[0] == "Notes 1-3 of 12 (pinned first, then most recently changed):"
    assert lines[1:4] == ["- t/6.md: note 6", "- t/5.md: note 5", "- t/4.md: note 4"]
    assert lines[4] == "8 more: memory_list(offset=4, limit=3)."
    assert run_memory_list({}, ctx).splitlines()[1].startswith("- index.md")
    with pytest.raises(ToolError, match="limit"):
        run_memory_list({"limit": 0}, ctx)
    with pytest.raises(ToolError, match="offset"):
        run_memory_list({"offset": -1}, ctx)
    assert "there are 12 notes" in run_memory_list({"offset": 50}, ctx)


def test_tool_definitions_bound_strings_and_carry_the_judgement():
    tools = {t.name: t for t in memory_tools()}
    assert set(tools) == {"memory_write", "memory_edit", "memory_read", "memory_list", "memory_search"}
    assert tools["memory_write"].kind == "memory" and tools["memory_edit"].kind == "memory"
    assert tools["memory_read"].kind is None and tools["memory_list"].kind is None

    def strings(schema):
        if schema.get("type") == "string":
            yield schema
        for sub in schema.get("properties", {}).values():
            yield from strings(sub)

    for t in tools.values():
        assert t.parameters["additionalProperties"] is False
        for s in strings(t.parameters):
            assert isinstance(s.get("maxLength"), int)
    d = tools["memory_write"].description.lower()
    for phrase in ("names", "preferences", "projects", "corrections", "web page", "one-off",
                   "never secrets", "memory_read", "base", "one topic per note"):
        assert phrase in d, phrase
    assert tools["memory_write"].parameters["required"] == ["path", "content"]
    assert tools["memory_edit"].parameters["required"] == ["path", "base", "op", "text"]
    assert tools["memory_edit"].parameters["properties"]["op"]["enum"] == [
        "append", "replace", "insert_after", "replace_section"]


def test_tools_without_memory_say_so(ws):
    ctx = ToolContext(workspace=ws, scanner=Scanner({}), gate=None, memory=None)
    with pytest.raises(ToolError, match="not available"):
        run_memory_read({"path": "a.md"}, ctx)


def test_a_writer_holding_the_lock_too_long_is_a_clear_refusal(ws):
    from assistant.notes.locking import FileLock

    ctx = make_ctx(ws)
    ctx.memory.lock_timeout = 0.3
    with FileLock(ws.lock_path):
        with pytest.raises(ToolError, match=r"memory is locked by process \d+.*nothing was written"):
            run_memory_write({"path": "a.md", "content": "x\n"}, ctx)
    assert not (ws.memory_dir / "a.md").exists()
    run_memory_write({"path": "a.md", "content": "x\n"}, ctx)   # free again
    assert (ws.memory_dir / "a.md").read_text() == "x\n"


def test_session_start_sweeps_stale_temp_files_only(tmp_path):
    """A writer killed mid-write leaves `.tmp-*` beside the note; a new session removes the old
    ones and leaves notes and fresh temp files alone."""
    import os
    import time

    from assistant.session import open_session
    from assistant.workspace.layout import init_workspace, open_workspace

    root = tmp_path / "ws"
    init_workspace(root, example=True)
    # issue 10 item 14: the sweep takes only our exact temp pattern (0o600, ours)
    stale = root / "memory" / "people" / ".tmp-assistant-0123456789abcdef"
    fresh = root / "memory" / ".tmp-assistant-fedcba9876543210"
    stale.write_bytes(b"half a no")
    fresh.write_bytes(b"in progress")
    stale.chmod(0o600)
    fresh.chmod(0o600)
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    parts = open_session(open_workspace(root), "watched", kind="test", interactive=False)
    try:
        assert not stale.exists() and fresh.exists()
        assert (root / "memory" / "people" / "lina.md").exists()
    finally:
        parts.close()


# acceptance (issue 5: plain-function API), written from the issue's words
def test_plain_memory_write_read_base(vault_ws, monkeypatch):
    # issue 9: the plain API is assistant.memory only (the tool functions no longer switch on a
    # str first argument), and a Note is read by its fields (no tuple/dict shapes)
    import assistant.memory as mod

    monkeypatch.setenv("ASSISTANT_WORKSPACE", str(vault_ws))
    mod.memory_write("api/a.md", "first\n")
    note = mod.memory_read("api/a.md")
    content, rev = note.content, note.revision
    assert content == "first\n" and note.path == "api/a.md" and len(rev) == 12
    # creating over an existing note without base is refused
    with pytest.raises(Exception, match="memory_read|base|exists"):
        mod.memory_write("api/a.md", "clobber\n")
    # the person edits it meanwhile: the stale base is refused with the issue's words
    (vault_ws / "memory/api/a.md").write_text("hand edit\n")
    with pytest.raises(Exception, match="changed since you read it, read it again"):
        mod.memory_write("api/a.md", "second\n", rev)
    assert (vault_ws / "memory/api/a.md").read_text() == "hand edit\n"
    fresh = mod.memory_read("api/a.md")
    mod.memory_write("api/a.md", "second\n", base=fresh.revision)
    assert (vault_ws / "memory/api/a.md").read_text() == "second\n"


def test_plain_memory_refusals(vault_ws):
    from assistant.memory import memory_read, memory_write

    for bad in ("../x.md", "a\x00.md", "/abs.md", "x.txt", ".dot.md"):
        with pytest.raises(Exception):
            memory_write(bad, "hi\n", workspace=vault_ws)
    with pytest.raises(Exception):
        memory_write("nul.md", "a\x00b", workspace=vault_ws)
    os.mkfifo(vault_ws / "memory" / "fifo.md")
    (vault_ws / "memory" / "ln.md").symlink_to("index.md")
    (vault_ws / "memory" / "bad.md").write_bytes(b"\xff\xfe")
    for p in ("fifo.md", "ln.md", "bad.md", "missing.md"):
        with pytest.raises(Exception) as ei:
            memory_read(p, workspace=vault_ws)
        assert str(ei.value)


def test_plain_memory_read_redacts_later_secret(vault_ws):
    from assistant.memory import memory_read, memory_write

    memory_write("code.md", f"door code {acc_SECRET}\n", workspace=vault_ws)
    with_vault(vault_ws)
    os.environ["ASSISTANT_VAULT_PASSPHRASE"] = PASS
    try:
        note = memory_read("code.md", workspace=vault_ws)
    finally:
        del os.environ["ASSISTANT_VAULT_PASSPHRASE"]
    assert acc_SECRET not in note.content and "[redacted:bank]" in note.content
    with pytest.raises(Exception) as ei:
        memory_read("code.md", workspace=vault_ws)   # vault locked: fail closed
    assert acc_SECRET not in str(ei.value)


def test_plain_memory_list(vault_ws):
    # issue 9: the plain API is assistant.memory only (the tool function takes (args, ctx))
    from assistant.memory import memory_list as plain_list

    paths = [e.path for e in plain_list(workspace=vault_ws)]
    assert paths[0] == "index.md" and "people/lina.md" in paths
    assert [e.path for e in plain_list(1, limit=2, workspace=vault_ws)] == paths[1:3]


def test_base_is_the_keyed_revision_only(vault_ws, tmp_path):
    """Issue 10 item 6 deliberately changes issue 2's "a caller that hashed the note itself is
    accepted too": a plain sha256 (full or a prefix) would be an oracle for a redacted secret
    (a right guess succeeds, a wrong one conflicts), so only the keyed revision memory_read
    gives is a base."""
    import hashlib

    from assistant.memory import memory_read, memory_write

    data = (vault_ws / "memory/people/lina.md").read_bytes()
    for plain in (hashlib.sha256(data).hexdigest(), hashlib.sha256(data).hexdigest()[:12],
                  hashlib.sha256(data).hexdigest()[:8]):
        with pytest.raises(Exception, match="changed since you read it"):
            memory_write("people/lina.md", "x\n", base=plain, workspace=vault_ws)
    assert (vault_ws / "memory/people/lina.md").read_bytes() == data
    memory_write("people/lina.md", "Lina, updated.\n", base=memory_read("people/lina.md", workspace=vault_ws).revision,
                 workspace=vault_ws)
    assert (vault_ws / "memory/people/lina.md").read_text() == "Lina, updated.\n"
    # and through a scripted watched chat: a plain-sha256 base is refused, the keyed one works
    rev = memory_read("people/lina.md", workspace=vault_ws).revision
    sub(vault_ws, "chat", "--model", script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "people/lina.md", "content": "Lina v2.\n",
                                          "base": hashlib.sha256(b"Lina, updated.\n").hexdigest()[:12]}},
        {"tool": "memory_write", "args": {"path": "people/lina.md", "content": "Lina v3.\n", "base": rev}},
        {"reply": "ok"}]), input="update lina\n/quit\n")
    assert (vault_ws / "memory/people/lina.md").read_text() == "Lina v3.\n"


# acceptance (issue 5): the names the issue spells out. This was `test_modules_exist`, which imported
# four modules and asserted nothing; it now holds the contract: the plain functions' signatures and
# the model's memory tools by name.
def test_the_issue_five_names_keep_their_shape():
    import inspect

    import assistant.memory as memory_api
    from assistant.agent.prompt import Conversation
    from assistant.tools.memory import memory_tools as tool_defs

    write = inspect.signature(memory_api.memory_write).parameters
    assert list(write)[:3] == ["path", "content", "base"] and write["base"].default is None
    assert list(inspect.signature(memory_api.memory_read).parameters)[:1] == ["path"]
    assert list(inspect.signature(memory_api.memory_list).parameters)[:2] == ["offset", "limit"]
    names = {t.name for t in tool_defs()}
    assert {"memory_write", "memory_read", "memory_list"} <= names
    assert callable(Conversation.system_prompt)


REVIEW_LONG = "Zq8#pL2!vN7xR4tWsecretvalue123456"


# review (secrets): 9. memory: a non-revision base was echoed back cut to 16 characters
def test_conflict_message_never_echoes_a_base_that_is_not_a_revision(tmp_path):
    from assistant.memory import Conflict, Memory
    from assistant.workspace.layout import init_workspace, open_workspace
    from policy.gate import Gate

    init_workspace(tmp_path / "ws", example=True)
    ws = open_workspace(tmp_path / "ws")
    ws.ensure_state()
    scanner = Scanner({"k": REVIEW_LONG})
    gate = Gate.for_workspace("watched", run_id="review", config=ws.config, grants_path=ws.grants_path,
                              approvals_dir=ws.approvals_dir, audit_path=ws.audit_path, redact=scanner.redact)
    mem = Memory(ws, scanner, gate)
    mem.write("n.md", "first\n")
    with pytest.raises(Conflict) as info:
        mem.write("n.md", "second\n", base=REVIEW_LONG)
    msg = str(info.value)
    assert "changed since you read it" in msg and REVIEW_LONG[:6] not in msg
    with pytest.raises(Conflict, match="'abcdef123456'"):
        mem.write("n.md", "second\n", base="abcdef123456")
