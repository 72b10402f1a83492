"""The audit log is hash-chained: verify names the first line changed, removed, inserted or
reordered, and lines cut off the end; several processes append under a bounded lock."""

from __future__ import annotations

import json
import multiprocessing
import sys
from pathlib import Path

import pytest

from policy.approvals import ApprovalSettings
from click.testing import CliRunner

from assistant.cli import main
from assistant.workspace.layout import init_workspace
from policy.audit import AuditError, AuditLog, read_head, verify


def make_log(path: Path, n: int = 20) -> list[bytes]:
    log = AuditLog(path)
    for i in range(n):
        log.append({"event": "ruling", "kind": "memory", "target": f"n{i}.md", "verdict": "allow", "i": i})
    return path.read_bytes().split(b"\n")[:-1]


def put(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"\n".join(lines) + b"\n")


@pytest.fixture
def log(tmp_path):
    p = tmp_path / "audit.jsonl"
    return p, make_log(p)


def test_intact_chain_verifies(log):
    p, lines = log
    v = verify(p)
    assert v.intact and v.lines == 20 and v.start == 1 and v.problem is None
    assert [json.loads(ln)["seq"] for ln in lines] == list(range(1, 21))
    head = read_head(p.with_suffix(".head"))
    assert head.lines == 20 and head.bytes == p.stat().st_size


@pytest.mark.parametrize("where", [0, 7, 18])
def test_a_changed_byte_is_named(log, where):
    p, lines = log
    lines[where] = lines[where].replace(b'"verdict": "allow"', b'"verdict": "allOw"')
    put(p, lines)
    v = verify(p)
    assert not v.intact and v.line == where + 1 and "changed" in v.problem


def test_a_changed_byte_in_the_last_line_is_caught_by_the_head(log):
    p, lines = log
    lines[-1] = lines[-1].replace(b"n19.md", b"n91.md")
    put(p, lines)
    v = verify(p)
    assert not v.intact and v.line == 20 and "changed" in v.problem


def test_a_changed_chain_field_is_named(log):
    p, lines = log
    lines[5] = lines[5][:25] + (b"0" if lines[5][25:26] != b"0" else b"1") + lines[5][26:]   # inside prev
    put(p, lines)
    v = verify(p)
    assert not v.intact and v.line == 6 and "changed" in v.problem


def test_a_removed_line_is_named(log):
    p, lines = log
    del lines[9]
    put(p, lines)
    v = verify(p)
    assert not v.intact and v.line == 10 and "line 10 was removed" in v.problem


def test_an_inserted_line_is_named(log):
    p, lines = log
    lines.insert(4, b'{"time": "2026-01-01T00:00:00.000Z", "event": "ruling", "verdict": "allow"}')
    put(p, lines)
    v = verify(p)
    assert not v.intact and v.line == 5 and "inserted" in v.problem


def test_a_copied_line_inserted_is_named(log):
    p, lines = log
    lines.insert(12, lines[3])
    put(p, lines)
    v = verify(p)
    assert not v.intact and v.line == 13 and "inserted" in v.problem


def test_swapped_lines_are_named(log):
    p, lines = log
    lines[6], lines[7] = lines[7], lines[6]
    put(p, lines)
    v = verify(p)
    assert not v.intact and v.line == 7 and "swapped" in v.problem


def test_truncation_is_caught_by_the_head(log):
    p, lines = log
    put(p, lines[:-3])
    v = verify(p)
    assert not v.intact and "last 3 line(s) were removed" in v.problem and v.line == 18


def test_a_deleted_head_file_is_reported(log):
    p, lines = log
    p.with_suffix(".head").unlink()
    v = verify(p)
    assert not v.intact and "head file" in v.problem


def test_an_unchained_log_keeps_its_lines_and_the_chain_starts_after_them(tmp_path):
    p = tmp_path / "audit.jsonl"
    old = b'{"time": "2025-01-01T00:00:00.000Z", "event": "ruling"}\n{"time": "2025-01-02T00:00:00.000Z", "event": "answer"}\n'
    p.write_bytes(old)
    AuditLog(p).append({"event": "ruling"})
    AuditLog(p).append({"event": "answer"})
    assert p.read_bytes().startswith(old)
    v = verify(p)
    assert v.intact and v.start == 3 and any("lines 1-2 predate the hash chain" in n for n in v.notes)
    lines = p.read_bytes().split(b"\n")[:-1]
    lines[1] = lines[1].replace(b"answer", b"ANSWER")        # the old line just before the chain
    put(p, lines)
    assert not verify(p).intact


def test_reserved_and_content_keys_are_refused(tmp_path):
    for key in ("seq", "prev", "content"):
        with pytest.raises(AuditError):
            AuditLog(tmp_path / "a.jsonl").append({key: 1})


def _writer(path: str, n: int, tag: int) -> None:
    log = AuditLog(path)
    for i in range(n):
        log.append({"event": "ruling", "target": f"p{tag}-{i}.md", "verdict": "allow"})


def test_several_processes_append_one_intact_chain(tmp_path):
    p = tmp_path / "audit.jsonl"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(p), 60, t)) for t in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    v = verify(p)
    assert v.intact and v.lines == 240, v


def test_a_held_lock_is_a_bounded_wait_then_an_error(tmp_path):
    import fcntl
    import os

    p = tmp_path / "audit.jsonl"
    fd = os.open(tmp_path / "audit.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(AuditError, match="locked"):
            AuditLog(p, lock_timeout=0.2).append({"event": "x"})
    finally:
        os.close(fd)


# --- the CLI -----------------------------------------------------------------------------------

# `ws` (the example workspace, a Path) comes from tests/conftest.py

def audit_cli(ws, *args):
    return CliRunner().invoke(main, ["-w", str(ws), "audit", *args])


def test_audit_verify_and_show_from_the_cli(ws):
    r = CliRunner().invoke(main, ["-w", str(ws), "memory", "write", "x.md"], input="hello\n")
    assert r.exit_code == 0, r.output
    r = audit_cli(ws, "verify")
    assert r.exit_code == 0 and r.stdout.startswith("intact: 2 line(s)")
    r = audit_cli(ws, "show")
    assert r.exit_code == 0
    assert "ruling memory x.md: allow" in r.stdout and "written memory x.md revision" in r.stdout
    rows = json.loads(audit_cli(ws, "show", "--json", "--since", "1h").stdout)
    assert [row["line"] for row in rows] == [1, 2] and rows[1]["source"] == "person"
    assert json.loads(audit_cli(ws, "show", "--json", "--since", "0s").stdout) == []
    path = ws / "state" / "audit.jsonl"
    lines = path.read_bytes().split(b"\n")[:-1]
    put(path, [lines[0].replace(b"allow", b"alloW"), lines[1]])
    r = audit_cli(ws, "verify")
    assert r.exit_code == 1 and "line 1 was changed" in r.stderr
    r = audit_cli(ws, "verify", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["line"] == 1
    r = audit_cli(ws, "show", "--since", "never")
    assert r.exit_code != 0 and "--since" in r.stderr


def test_the_notify_command_and_approvals_show_name_the_request_place_in_the_chain(tmp_path):
    from policy.approvals import Inbox
    from policy.audit import AuditLog as Log
    from policy.gate import Gate

    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    said = tmp_path / "notified.txt"
    notify = [sys.executable, "-c", f"import sys; open({str(said)!r}, 'w').write(sys.argv[1])", "{summary}"]
    gate = Gate("unattended", run_id="run-1", audit=Log(ws / "state" / "audit.jsonl"),
                approvals=ApprovalSettings(channel="inbox", timeout=0.5, notify=tuple(notify)),
                inbox=Inbox(ws / "state" / "approvals"))
    d = gate.authorize("memory", "x.md", content=b"hi\n", current=None, summary="memory_write x.md")
    assert not d.allowed and d.request_id
    records = Log(ws / "state" / "audit.jsonl").read()
    ruling = next(r for r in records if r["event"] == "ruling" and r["verdict"] == "ask")
    assert f"audit line {ruling['seq']}" in said.read_text()
    r = CliRunner().invoke(main, ["-w", str(ws), "approvals", "show", d.request_id])
    assert r.exit_code == 0, r.output
    answer = next(r for r in records if r.get("request") == d.request_id)
    assert f"line {ruling['seq']} (ruling), line {answer['seq']} (answer)" in r.stdout
    r = CliRunner().invoke(main, ["-w", str(ws), "approvals", "show", d.request_id, "--json"])
    assert json.loads(r.stdout)["audit_lines"][0] == {"line": ruling["seq"], "event": "ruling"}
