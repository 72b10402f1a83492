"""Review (io): reading the audit log never hangs and never follows a link.

`audit verify`, `audit show`, `approvals show` (request_lines) and AuditLog.read opened
state/audit.jsonl with a plain open(): a FIFO planted there made `assistant audit verify` wait
for a writer forever (every wait must be bounded), and a symlink there was followed (verify
then vouched for a file outside state/). Appends already refused both. Real FIFOs and symlinks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from policy.audit import AuditError, AuditLog, request_lines, verify


def _bounded(fn) -> BaseException | object:
    """Run fn in a daemon thread; what it returned or raised, or TimeoutError if it hung."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["out"] = fn()
        except BaseException as exc:   # noqa: BLE001 - handed back
            box["out"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(20)
    return box.get("out", TimeoutError("hung"))


@pytest.fixture
def fifo_log(tmp_path: Path) -> Path:
    """state/audit.jsonl as a FIFO: a plain open() for reading would wait for a writer forever."""
    (tmp_path / "state").mkdir()
    os.mkfifo(tmp_path / "state" / "audit.jsonl")
    return tmp_path / "state" / "audit.jsonl"


def test_verify_refuses_a_fifo_instead_of_hanging(fifo_log: Path) -> None:
    out = _bounded(lambda: verify(fifo_log))
    assert isinstance(out, AuditError), out
    assert "FIFO" in str(out)


def test_read_and_request_lines_do_not_hang_on_a_fifo(fifo_log: Path) -> None:
    assert isinstance(_bounded(lambda: AuditLog(fifo_log).read()), AuditError)
    assert _bounded(lambda: request_lines(fifo_log, "r1", run="x", target="a.md", sha256="0" * 64)) == []


def test_verify_does_not_follow_a_symlinked_log(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real = AuditLog(elsewhere / "audit.jsonl")
    real.append({"event": "x"})
    state = tmp_path / "state"
    state.mkdir()
    os.symlink(elsewhere / "audit.jsonl", state / "audit.jsonl")
    os.symlink(elsewhere / "audit.head", state / "audit.head")
    with pytest.raises(AuditError, match="symlink"):
        verify(state / "audit.jsonl")


def test_cli_audit_verify_and_show_end_on_a_fifo(tmp_path: Path) -> None:
    from assistant.workspace.layout import init_workspace

    ws = tmp_path / "ws"
    init_workspace(ws)
    log = ws / "state" / "audit.jsonl"
    if log.exists():
        log.unlink()
    os.mkfifo(log)
    env = {**os.environ, "ASSISTANT_WORKSPACE": str(ws)}
    for cmd in (["audit", "verify"], ["audit", "show"]):
        proc = subprocess.run([sys.executable, "-m", "assistant", *cmd], env=env, capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert proc.returncode != 0, cmd
        assert "FIFO" in proc.stderr, (cmd, proc.stderr)


def test_hand_edit_cache_fifo_does_not_hang_a_session(tmp_path: Path) -> None:
    """state/history-seen.json (a cache read at every session start) was read with open():
    a FIFO there hung the session before its first turn."""
    from assistant.notes.intake import _load

    cache = tmp_path / "history-seen.json"
    os.mkfifo(cache)
    assert _bounded(lambda: _load(cache)) == {}
    link = tmp_path / "linked.json"
    (tmp_path / "elsewhere.json").write_text('{"notes": {"a.md": [1, 2, "x"]}}')
    os.symlink(tmp_path / "elsewhere.json", link)
    assert _load(link) == {}
