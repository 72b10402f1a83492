"""`assistant memory ...` end to end: the person is the watcher; writes allowed, still scanned."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from assistant.notes.catalog import render_catalog
from assistant.cli import main
from assistant.secrets.scanner import Scanner
from assistant.notes.frontmatter import revision as keyed_revision
from assistant.secrets.revision_key import load_key


def revision(data, ws):
    """The keyed revision of `data` in workspace `ws` (issue 10: HMAC under state/revision.key)."""
    root = ws if isinstance(ws, Path) else ws.root
    return keyed_revision(data, load_key(root / "state"))
from assistant.workspace.layout import open_workspace
from bounded import AnswersFirstRequest
from acceptance_support import SECRET as acc_SECRET, _env, _set_config, cli as acc_cli, pending_files, sub, with_vault

SECRET = "tangerine-Dream-4412-xyzzy"
PASS = "correct horse battery staple"


# `ws` (the example workspace, a Path) comes from tests/conftest.py

def run(ws, *args, input=None, env=None):
    r = CliRunner().invoke(main, ["-w", str(ws), "memory", *args], input=input, env=env or {})
    return r


def out_err(r):
    return r.stdout, r.stderr


def approvals_files(ws):
    return os.listdir(ws / "state" / "approvals")


def test_write_from_stdin_is_allowed_and_audited(ws):
    r = run(ws, "write", "people/anna.md", input="Anna keeps bees.\n")
    assert r.exit_code == 0, r.output
    data = (ws / "memory/people/anna.md").read_bytes()
    assert data == b"Anna keeps bees.\n"
    assert f"created people/anna.md (17 bytes, revision {revision(data, ws)})" in r.stdout
    events = [json.loads(ln)["event"] for ln in (ws / "state/audit.jsonl").read_text().splitlines()]
    assert events == ["ruling", "written"]
    assert approvals_files(ws) == []


def test_leaf_commands_take_workspace_option_too(ws):
    r = CliRunner().invoke(main, ["memory", "ls", "-w", str(ws)])
    assert r.exit_code == 0 and "people/lina.md" in r.stdout


def test_write_over_existing_needs_base_or_force(ws):
    lina = ws / "memory/people/lina.md"
    old = lina.read_bytes()
    r = run(ws, "write", "people/lina.md", input="clobbered\n")
    assert r.exit_code != 0
    assert "already exists" in r.stderr and "--base" in r.stderr and "--force" in r.stderr
    assert lina.read_bytes() == old
    r = run(ws, "write", "people/lina.md", "--base", "0123456789ab", input="clobbered\n")
    assert r.exit_code != 0 and "changed since you read it, read it again" in r.stderr
    assert lina.read_bytes() == old
    r = run(ws, "cat", "--json", "people/lina.md")
    rev = json.loads(r.stdout)["revision"]
    assert rev == revision(old, ws)
    r = run(ws, "write", "people/lina.md", "--base", rev, input="with base\n")
    assert r.exit_code == 0, r.output
    assert lina.read_text() == "with base\n"
    r = run(ws, "write", "people/lina.md", "--force", input="forced\n")
    assert r.exit_code == 0 and lina.read_text() == "forced\n" and "replaced" in r.stdout
    r = run(ws, "write", "people/lina.md", "--force", "--base", rev, input="x\n")
    assert r.exit_code != 0 and "not both" in r.stderr


def test_secret_is_refused_without_any_approval_request(ws):
    env = {"ASSISTANT_VAULT_PASSPHRASE": PASS}
    make_vault(ws, {"wifi": SECRET})
    before = sorted(os.listdir(ws / "memory"))
    r = run(ws, "write", "wifi.md", input=f"password {SECRET}\n", env=env)
    assert r.exit_code != 0
    assert "wifi" in r.stderr and SECRET not in r.output and SECRET not in r.stderr
    assert sorted(os.listdir(ws / "memory")) == before
    assert approvals_files(ws) == []
    audit = ws / "state/audit.jsonl"
    assert not audit.exists() or SECRET not in audit.read_text()


def make_vault(ws, secrets):
    from assistant.secrets.vault import Vault

    v = Vault.create(ws / "vault.enc", PASS, opslimit=1, memlimit=8 * 1024 * 1024)
    for k, val in secrets.items():
        v.set(k, val)


def test_cat_redacts_a_secret_added_to_the_vault_later(ws):
    assert run(ws, "write", "router.md", input=f"login: {SECRET}\n").exit_code == 0
    make_vault(ws, {"router": SECRET})
    env = {"ASSISTANT_VAULT_PASSPHRASE": PASS}
    r = run(ws, "cat", "router.md", env=env)
    assert r.exit_code == 0
    assert r.stdout == "login: [redacted:router]\n" and SECRET not in r.output
    raw = (ws / "memory/router.md").read_bytes()
    # the revision goes to stderr only on a terminal (captured output is exactly the note)
    assert r.output == r.stdout
    assert json.loads(run(ws, "cat", "router.md", "--json", env=env).stdout)["revision"] == revision(raw, ws)


def test_locked_vault_fails_closed_with_how_to_unlock(ws):
    make_vault(ws, {"wifi": SECRET})
    for args, inp in ((["cat", "people/lina.md"], None), (["write", "x.md"], "x\n"),
                      (["ls"], None), (["catalog"], None), (["rm", "people/lina.md"], None)):
        r = run(ws, *args, input=inp)
        assert r.exit_code != 0, args
        assert "locked" in r.stderr and "ASSISTANT_VAULT_PASSPHRASE" in r.stderr, r.stderr
    assert not (ws / "memory/x.md").exists() and (ws / "memory/people/lina.md").exists()
    r = run(ws, "cat", "people/lina.md", env={"ASSISTANT_VAULT_PASSPHRASE": "wrong one"})
    assert r.exit_code != 0 and "passphrase" in r.stderr.lower()


@pytest.mark.parametrize("path,why", [
    ("../x.md", "'..'"), ("/abs.md", "absolute"), (".hidden.md", "dot"), ("notes.txt", ".md"),
    ("a//b.md", "empty"), ("a\\b.md", "backslash"), ("\u202ex.md", "bidi"), ("people/", "trailing"),
])
def test_cli_path_refusals(ws, path, why):
    run(ws, "ls")   # the first session records the notes' first versions in history/ (issue 12)
    before = sorted(p for p in (ws).rglob("*"))
    for args, inp in ((["write", path], "x\n"), (["cat", path], None), (["rm", path], None)):
        r = run(ws, *args, input=inp)
        assert r.exit_code != 0 and why in r.stderr and r.stderr.startswith("error: "), (args, r.stderr)
    # state/ housekeeping (the audit log, the lock the session's temp sweep takes) may appear
    housekeeping = ("audit.jsonl", "memory.lock")
    assert sorted(p for p in ws.rglob("*") if p.name not in housekeeping) == [
        p for p in before if p.name not in housekeeping]


def test_ls_json_and_catalog_is_exactly_the_models_block(ws):
    r = run(ws, "ls", "--json")
    assert r.exit_code == 0
    entries = json.loads(r.stdout)
    assert entries[0]["path"] == "index.md" and entries[0]["pinned"] is True
    assert {e["path"] for e in entries} == {"index.md", "people/lina.md", "people/marek.md",
                                            "preferences.md", "projects/kirkstall-park.md"}
    r = run(ws, "catalog")
    assert r.exit_code == 0
    assert r.stdout == render_catalog(open_workspace(ws), Scanner({})) + "\n"
    assert r.stdout.startswith("## Memory catalog\n")


def test_rm_and_missing_note(ws):
    r = run(ws, "rm", "people/marek.md")
    assert r.exit_code == 0 and "removed people/marek.md" in r.stdout
    assert not (ws / "memory/people/marek.md").exists()
    r = run(ws, "rm", "people/marek.md")
    assert r.exit_code != 0 and "no note at people/marek.md" in r.stderr
    r = run(ws, "rm", "people/lina.md", "--base", "0123456789ab")
    assert r.exit_code != 0 and "changed since you read it" in r.stderr
    assert (ws / "memory/people/lina.md").exists()
    r = run(ws, "cat", "nope.md")
    assert r.exit_code != 0 and "no note at nope.md" in r.stderr


def editor_script(tmp_path, body: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text(f"import sys, pathlib\np = pathlib.Path(sys.argv[1])\n{body}\n")
    return f"{sys.executable} {script}"


def test_edit_writes_back_through_the_same_path(ws, tmp_path):
    editor = editor_script(tmp_path, "p.write_text(p.read_text().replace('Bristol', 'Cardiff'))")
    r = run(ws, "edit", "people/lina.md", env={"EDITOR": editor, "VISUAL": ""})
    assert r.exit_code == 0, r.output
    assert "Cardiff" in (ws / "memory/people/lina.md").read_text()
    assert "saved people/lina.md" in r.stdout
    events = [json.loads(ln)["event"] for ln in (ws / "state/audit.jsonl").read_text().splitlines()]
    assert events == ["ruling", "written"]


def test_edit_without_changes_writes_nothing(ws, tmp_path):
    editor = editor_script(tmp_path, "pass")
    before = (ws / "memory/people/lina.md").stat().st_mtime_ns
    r = run(ws, "edit", "people/lina.md", env={"EDITOR": editor, "VISUAL": ""})
    assert r.exit_code == 0 and "no changes" in r.stdout
    assert (ws / "memory/people/lina.md").stat().st_mtime_ns == before


def test_edit_refuses_if_the_note_changed_meanwhile(ws, tmp_path):
    note = ws / "memory/people/lina.md"
    # the "editor" saves its buffer, but meanwhile someone else changed the note on disk
    editor = editor_script(
        tmp_path,
        f"p.write_text('my edit\\n')\npathlib.Path({str(note)!r}).write_text('someone else\\n')",
    )
    r = run(ws, "edit", "people/lina.md", env={"EDITOR": editor, "VISUAL": ""})
    assert r.exit_code != 0
    assert "changed since you read it, read it again" in r.stderr
    assert note.read_text() == "someone else\n"
    kept = r.stderr.split("kept at ")[1].strip()
    assert Path(kept).read_text() == "my edit\n"


def test_edit_refuses_a_secret_and_a_failing_editor(ws, tmp_path):
    make_vault(ws, {"wifi": SECRET})
    env = {"ASSISTANT_VAULT_PASSPHRASE": PASS, "VISUAL": ""}
    editor = editor_script(tmp_path, f"p.write_text(p.read_text() + 'wifi: {SECRET}\\n')")
    before = (ws / "memory/people/lina.md").read_bytes()
    r = run(ws, "edit", "people/lina.md", env={**env, "EDITOR": editor})
    assert r.exit_code != 0 and "wifi" in r.stderr and SECRET not in r.stderr
    assert (ws / "memory/people/lina.md").read_bytes() == before
    assert approvals_files(ws) == []
    failing = editor_script(tmp_path, "sys.exit(3)")
    r = run(ws, "edit", "people/lina.md", env={**env, "EDITOR": failing})
    assert r.exit_code != 0 and "status 3" in r.stderr


def test_watch_prints_changes_as_they_happen(ws):
    import select

    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant", "-w", str(ws), "memory", "watch", "--json", "--timeout", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        # keep changing the note until the watcher (which may start slowly on a busy machine)
        # reports it; never block on a read that may not come
        deadline = time.monotonic() + 50
        line = ""
        i = 0
        while time.monotonic() < deadline and not line:
            (ws / "memory" / ".tmp-ignored").write_text("x")
            (ws / "memory" / "people" / "new.md").write_text(f"v{i}\n")
            i += 1
            if select.select([proc.stdout], [], [], 0.5)[0]:
                line = proc.stdout.readline()
        change = json.loads(line)
        assert change["path"] == "people/new.md" and change["change"] in ("added", "modified")
    finally:
        proc.kill()
        proc.wait()


# --- unattended memory_write answered with `assistant approvals` from another terminal ----------

def cli(ws, *args):
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args],
                          capture_output=True, text=True, timeout=30)


class CliApprover(AnswersFirstRequest):
    """A person at another terminal: waits for the request, checks it, answers with the CLI."""

    def __init__(self, ws, verb, *extra):
        super().__init__(timeout=20)
        self.ws, self.verb, self.extra = ws, verb, extra
        self.shown = None
        self.answered = None

    def first(self):
        rows = json.loads(cli(self.ws, "approvals", "list", "--json").stdout or "[]")
        return rows[0]["id"] if rows else None

    def answer(self, request_id):
        self.shown = json.loads(cli(self.ws, "approvals", "show", request_id, "--json").stdout)
        self.answered = cli(self.ws, "approvals", self.verb, request_id, *self.extra)


def unattended_memory(ws_path, timeout="20s"):
    from assistant.memory import Memory
    from assistant.tools.base import ToolContext
    from policy.gate import Gate

    w = open_workspace(ws_path)
    w.config = w.config.updated({"approvals": {"timeout": timeout}})
    w.ensure_state()
    scanner = Scanner({})
    gate = Gate.for_workspace("unattended", run_id="scheduled-1", config=w.config, grants_path=w.grants_path,
                              approvals_dir=w.approvals_dir, audit_path=w.audit_path, redact=scanner.redact)
    return ToolContext(workspace=w, scanner=scanner, gate=gate, memory=Memory(w, scanner, gate))


def test_unattended_write_approved_with_the_approvals_cli(ws):
    from assistant.tools.memory import run_memory_write

    ctx = unattended_memory(ws)
    content = "---\ndescription: Anna, neighbour\n---\nAnna keeps bees at number 12.\n"
    person = CliApprover(ws, "approve")
    person.start()
    out = run_memory_write({"path": "people/anna.md", "content": content}, ctx)
    person.join(20)
    assert person.error is None, person.error
    assert person.answered.returncode == 0, person.answered.stderr
    assert person.shown["content"] == content
    data = (ws / "memory/people/anna.md").read_bytes()
    assert data == content.encode()
    assert __import__("hashlib").sha256(data).hexdigest() == person.shown["sha256"]
    assert out.startswith("created people/anna.md")


def test_unattended_write_denied_with_the_approvals_cli(ws):
    from assistant.tools.base import ToolError
    from assistant.tools.memory import run_memory_write

    ctx = unattended_memory(ws)
    before = (ws / "memory/people/lina.md").read_bytes()
    rev = revision(before, ws)
    person = CliApprover(ws, "deny", "--reason", "not from a scheduled run")
    person.start()
    with pytest.raises(ToolError, match="denied.*not from a scheduled run"):
        run_memory_write({"path": "people/lina.md", "content": "rewritten\n", "base": rev}, ctx)
    person.join(20)
    assert person.error is None and person.answered.returncode == 0
    assert (ws / "memory/people/lina.md").read_bytes() == before


def test_edit_without_an_editor_or_a_terminal_is_refused_not_vi_on_a_pipe(ws):
    """No $VISUAL/$EDITOR and stdin is not a terminal (cron, a pipe): starting vi there paints
    escape codes and fails; say what to set instead."""
    before = (ws / "memory/people/lina.md").read_bytes()
    r = run(ws, "edit", "people/lina.md", env={"EDITOR": None, "VISUAL": None})
    assert r.exit_code == 1
    assert "set $EDITOR" in r.output and "memory write" in r.output
    assert (ws / "memory/people/lina.md").read_bytes() == before


def test_edit_with_a_malformed_editor_variable_is_a_clear_error(ws):
    r = run(ws, "edit", "people/lina.md", env={"EDITOR": "vim '", "VISUAL": None})
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert "$EDITOR" in r.output and "quot" in r.output


def test_rm_of_something_that_is_not_a_note_says_how_to_remove_it(ws):
    """A symlink or FIFO in memory/ is listed as unreadable; `memory rm` refuses to touch it (it
    never follows links), and says the person can remove the entry by hand."""
    link = ws / "memory" / "link.md"
    link.symlink_to("/etc/hostname")
    r = run(ws, "rm", "link.md")
    assert r.exit_code == 1
    assert f"rm {link}" in r.output, r.output
    assert link.is_symlink()


def _editor(tmp_path: Path, body: str) -> str:
    ed = tmp_path / "ed.py"
    ed.write_text("import sys\n" + body)
    return f"{sys.executable} {ed}"


# acceptance (issue 5: memory), written from the words
def test_memory_ls_and_json(vault_ws):
    r = acc_cli(vault_ws, "memory", "ls")
    assert "people/lina.md" in r.output
    r = acc_cli(vault_ws, "memory", "ls", "--json")
    data = json.loads(r.output)
    assert "people/lina.md" in json.dumps(data)


def test_memory_write_cat_rm_roundtrip(vault_ws):
    acc_cli(vault_ws, "memory", "write", "notes/tea.md", input="---\ndescription: tea likes\n---\nGreen tea.\n")
    assert (vault_ws / "memory/notes/tea.md").read_text() == "---\ndescription: tea likes\n---\nGreen tea.\n"
    r = acc_cli(vault_ws, "memory", "cat", "notes/tea.md")
    assert "Green tea." in r.output
    assert "notes/tea.md" in acc_cli(vault_ws, "memory", "ls").output
    acc_cli(vault_ws, "memory", "rm", "notes/tea.md")
    assert not (vault_ws / "memory/notes/tea.md").exists()
    r = acc_cli(vault_ws, "memory", "rm", "notes/tea.md", ok=False)
    assert r.exit_code != 0 and r.output.strip()


@pytest.mark.parametrize("bad", [
    "/etc/x.md", "../x.md", "a/../../x.md", "a/./x.md", "x.txt", "x", "a\\b.md", ".hidden.md",
    "a/.git/x.md", "a//b.md", "a/", "", "a\x01b.md", "a\u202eb.md", "x" * 300 + ".md",
    "/".join(["d"] * 40) + "/x.md",
])
def test_cli_write_path_rules(vault_ws, bad):
    before = sorted(p.relative_to(vault_ws) for p in (vault_ws / "memory").rglob("*"))
    r = acc_cli(vault_ws, "memory", "write", bad, input="hello\n", ok=False)
    assert r.exit_code != 0, bad
    assert r.output.strip()
    after = sorted(p.relative_to(vault_ws) for p in (vault_ws / "memory").rglob("*"))
    assert before == after
    assert not (vault_ws / "x.md").exists() and not (vault_ws.parent / "x.md").exists()


def test_cli_write_content_rules(vault_ws):
    r = CliRunner().invoke(main, ["memory", "write", "bin.md"], input=b"\xff\xfe bad",
                           env=_env(vault_ws))
    assert r.exit_code != 0 and not (vault_ws / "memory/bin.md").exists()
    r = acc_cli(vault_ws, "memory", "write", "nul.md", input="a\x00b", ok=False)
    assert r.exit_code != 0 and not (vault_ws / "memory/nul.md").exists()
    r = acc_cli(vault_ws, "memory", "write", "big.md", input="a" * (256 * 1024 + 10), ok=False)
    assert r.exit_code != 0 and not (vault_ws / "memory/big.md").exists()
    # exactly at the cap is fine
    acc_cli(vault_ws, "memory", "write", "cap.md", input="a" * (256 * 1024))
    assert (vault_ws / "memory/cap.md").stat().st_size == 256 * 1024


def test_cli_write_size_cap_from_config(vault_ws):
    _set_config(vault_ws, "memory", "max_note_bytes", "100")
    r = acc_cli(vault_ws, "memory", "write", "n.md", input="a" * 101, ok=False)
    assert r.exit_code != 0 and not (vault_ws / "memory/n.md").exists()
    acc_cli(vault_ws, "memory", "write", "n.md", input="a" * 100)


def test_cli_write_secret_blocked_names_secret_not_value(vault_ws):
    with_vault(vault_ws)
    r = acc_cli(vault_ws, "memory", "write", "leak.md", input=f"my pin is {acc_SECRET}\n", ok=False)
    assert r.exit_code != 0
    assert "bank" in r.output
    assert acc_SECRET not in r.output
    assert not (vault_ws / "memory/leak.md").exists()
    assert pending_files(vault_ws) == []


def test_cat_redacts_secret_added_after_the_note(vault_ws):
    acc_cli(vault_ws, "memory", "write", "acct.md", input=f"account code {acc_SECRET} here\n")
    with_vault(vault_ws)
    r = acc_cli(vault_ws, "memory", "cat", "acct.md")
    assert acc_SECRET not in r.output
    assert "[redacted:bank]" in r.output
    assert "account code" in r.output and "here" in r.output


def test_cli_edit_writes_back(vault_ws, tmp_path):
    acc_cli(vault_ws, "memory", "write", "e.md", input="old\n")
    ed = _editor(tmp_path, "p=sys.argv[-1]\ns=open(p).read()\nopen(p,'w').write(s.replace('old','new'))\n")
    acc_cli(vault_ws, "memory", "edit", "e.md", env={"EDITOR": ed, "VISUAL": ed})
    assert (vault_ws / "memory/e.md").read_text() == "new\n"


def test_cli_edit_conflict_refused(vault_ws, tmp_path):
    acc_cli(vault_ws, "memory", "write", "e.md", input="old\n")
    target = vault_ws / "memory" / "e.md"
    ed = _editor(tmp_path, f"open({str(target)!r},'w').write('someone else\\n')\n"
                 "p=sys.argv[-1]\nopen(p,'w').write('mine\\n')\n")
    r = acc_cli(vault_ws, "memory", "edit", "e.md", env={"EDITOR": ed, "VISUAL": ed}, ok=False)
    assert r.exit_code != 0
    assert "changed since you read it" in r.output
    assert target.read_text() == "someone else\n"


def test_cli_edit_secret_refused(vault_ws, tmp_path):
    with_vault(vault_ws)
    acc_cli(vault_ws, "memory", "write", "e.md", input="old\n")
    ed = _editor(tmp_path, f"p=sys.argv[-1]\nopen(p,'w').write('pin {acc_SECRET}\\n')\n")
    r = acc_cli(vault_ws, "memory", "edit", "e.md", env={"EDITOR": ed, "VISUAL": ed}, ok=False)
    assert r.exit_code != 0 and acc_SECRET not in r.output
    assert (vault_ws / "memory/e.md").read_text() == "old\n"


def test_cli_read_before_overwrite(vault_ws):
    # issue 5: overwriting an existing note requires base = the revision memory_read gave
    acc_cli(vault_ws, "memory", "write", "p.md", input="one\n")
    r = acc_cli(vault_ws, "memory", "write", "p.md", input="two\n", ok=False)
    assert r.exit_code != 0 and "p.md" in r.output
    assert (vault_ws / "memory/p.md").read_text() == "one\n"
    rev = json.loads(acc_cli(vault_ws, "memory", "cat", "p.md", "--json").output)["revision"]
    (vault_ws / "memory/p.md").write_text("hand edit\n")
    r = acc_cli(vault_ws, "memory", "write", "p.md", "--base", rev, input="two\n", ok=False)
    assert "changed since you read it, read it again" in r.output
    assert (vault_ws / "memory/p.md").read_text() == "hand edit\n"
    rev = json.loads(acc_cli(vault_ws, "memory", "cat", "p.md", "--json").output)["revision"]
    acc_cli(vault_ws, "memory", "write", "p.md", "--base", rev, input="two\n")
    assert (vault_ws / "memory/p.md").read_text() == "two\n"


def test_cli_edit_uses_editor_even_when_visual_is_set(vault_ws, tmp_path):
    acc_cli(vault_ws, "memory", "write", "v.md", input="old\n")
    ed = _editor(tmp_path, "p=sys.argv[-1]\nopen(p,'w').write('via EDITOR\\n')\n")
    r = acc_cli(vault_ws, "memory", "edit", "v.md", env={"EDITOR": ed, "VISUAL": "/bin/false"})
    assert (vault_ws / "memory/v.md").read_text() == "via EDITOR\n", r.output


def test_cli_cat_output_is_exactly_the_note(vault_ws):
    text = "---\ndescription: exact\n---\nbody line\n"
    acc_cli(vault_ws, "memory", "write", "exact.md", input=text)
    assert acc_cli(vault_ws, "memory", "cat", "exact.md").output == text
    assert sub(vault_ws, "memory", "cat", "exact.md").stdout == text


REVIEW_LONG = "Zq8#pL2!vN7xR4tWsecretvalue123456"


# review (secrets): 11. `memory edit` handed the vault passphrase to the editor
def test_memory_edit_does_not_pass_the_vault_passphrase_to_the_editor(tmp_path):
    import sys

    from click.testing import CliRunner

    from assistant.cli import main
    from assistant.secrets.vault import Vault
    from assistant.workspace.layout import init_workspace

    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    Vault.create(ws / "vault.enc", "pw-for-tests", opslimit=1, memlimit=8 * 1024).set("k", REVIEW_LONG)
    seen = tmp_path / "editor-env.txt"
    script = tmp_path / "editor.py"
    script.write_text(
        "import os, sys, pathlib\n"
        f"pathlib.Path({str(seen)!r}).write_text(os.environ.get('ASSISTANT_VAULT_PASSPHRASE', '<unset>'))\n"
        "p = pathlib.Path(sys.argv[1]); p.write_text(p.read_text() + 'edited\\n')\n")
    r = CliRunner().invoke(main, ["-w", str(ws), "memory", "edit", "people/lina.md"],
                           env={"ASSISTANT_VAULT_PASSPHRASE": "pw-for-tests", "VISUAL": "",
                                "EDITOR": f"{sys.executable} {script}"})
    assert r.exit_code == 0, r.output
    assert seen.read_text() == "<unset>"
    assert (ws / "memory/people/lina.md").read_text().endswith("edited\n")
