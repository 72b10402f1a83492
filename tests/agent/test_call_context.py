"""The per-call tool context and the one gated-write pipeline (issue 9 items 4 and 6).

Each tool call gets its own `gate` view and `cancel` flag in its ToolContext (no thread-local
state): a call the agent gave up on cannot pass the gate and writes nothing. memory_write and
file_write take the same steps (path, content, leak scan, base, gate, locked recheck, write, audit), on a real workspace,
the real policy Gate and the real confined Root."""

import json
import threading

import pytest

from assistant.agent.loop import GateRecord, ObservedGate, ToolCallState
from assistant.memory import Conflict, Denied
from assistant.session import open_session
from assistant.tools.base import ToolError
from assistant.tools.registry import all_tools
from assistant.workspace.layout import init_workspace, open_workspace
from policy.engine import Ruling
from policy.gate import Decision


@pytest.fixture
def session(tmp_path):
    root = tmp_path / "ws"
    init_workspace(root, example=True)
    s = open_session(open_workspace(root), "watched", kind="test")
    yield s
    s.close()


def run_tool(session, name, ctx, **args):
    return {t.name: t for t in all_tools()}[name].run(args, ctx)


def audit(session):
    path = session.ws.audit_path
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_gate_record_and_engine_ruling_are_different_types():
    assert GateRecord is not Ruling
    assert {"tool", "allowed"} <= set(GateRecord.__dataclass_fields__)
    assert "tool" not in Ruling.__dataclass_fields__


def test_a_cancelled_call_is_denied_without_reaching_the_gate(session):
    calls = []

    class Counting:
        def authorize(self, kind, target, *, content=None, current=None, summary="", url=None):
            calls.append(target)
            return Decision(True, "allow", "ok", None)

    observed = ObservedGate(Counting())
    state = ToolCallState("memory_write", observed)
    assert state.authorize("memory", "a.md").allowed and calls == ["a.md"]
    state.cancel()
    d = state.authorize("memory", "b.md")
    assert not d.allowed and "ran out of time" in d.reason
    assert calls == ["a.md"]                      # never reached the gate
    assert [(r.tool, r.target, r.allowed) for r in observed.rulings] == [
        ("memory_write", "a.md", True), ("memory_write", "b.md", False)]


@pytest.mark.parametrize("tool,path,workdir", [("memory_write", "late.md", "memory"),
                                               ("file_write", "late.txt", "files")])
def test_a_call_cancelled_while_the_gate_decides_writes_nothing(session, tool, path, workdir):
    """The gate allows, but the call timed out meanwhile: the pipeline checks `cancel` under
    the lock, just before the write, and refuses."""
    state = ToolCallState(tool, session.gate)

    class CancelWhileDeciding:
        def authorize(self, kind, target, **kw):
            state.cancel()   # the agent gives up while a person is still deciding
            return Decision(True, "allow", "approved", None)

    state.observed = ObservedGate(CancelWhileDeciding())
    from dataclasses import replace
    ctx = replace(session.ctx, gate=state, cancel=state)
    with pytest.raises(ToolError, match="ran out of time|denied"):
        run_tool(session, tool, ctx, path=path, content="late\n")
    assert not (session.ws.root / workdir / path).exists()


def test_a_cancelled_call_object_stops_memory_write_directly(session):
    class Allow:
        def authorize(self, kind, target, **kw):
            return Decision(True, "allow", "ok", None)

    class Cancelled:              # the Cancellation protocol of a call given up on
        def cancelled(self):
            return True

        def commit(self):
            return False

    from assistant.gating.context import Call
    with pytest.raises(Denied, match="ran out of time"):
        session.memory.write("x.md", "x\n", call=Call(Allow(), Cancelled()))
    assert not (session.ws.memory_dir / "x.md").exists()


@pytest.mark.parametrize("tool,path,workdir", [("memory_write", "people/sam.md", "memory"),
                                               ("file_write", "notes/sam.txt", "files")])
def test_a_change_while_the_gate_decides_is_a_conflict_for_both_writers(session, tool, path, workdir):
    """Same step 6 for both writers: the bytes the gate ruled on must still be on disk."""
    target = session.ws.root / workdir / path
    target.parent.mkdir(parents=True, exist_ok=True)

    class EditWhileDeciding:
        def authorize(self, kind, t, **kw):
            target.write_text("the person's edit\n")
            return Decision(True, "allow", "ok", None)

    from dataclasses import replace
    ctx = replace(session.ctx, gate=EditWhileDeciding())
    with pytest.raises(ToolError, match="changed|created by another writer"):
        run_tool(session, tool, ctx, path=path, content="model text\n")
    assert target.read_text() == "the person's edit\n"


@pytest.mark.parametrize("tool,path", [("memory_write", "keys.md"), ("file_write", "keys.txt")])
def test_both_writers_refuse_a_secret_before_the_gate(session, tool, path):
    asked = []

    class Recording:
        def authorize(self, kind, target, **kw):
            asked.append(target)
            return Decision(True, "allow", "ok", None)

    from dataclasses import replace
    ctx = replace(session.ctx, gate=Recording())
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with pytest.raises(ToolError, match="secret"):
        run_tool(session, tool, ctx, path=path, content=f"token {key}\n")
    assert asked == []


def test_both_writers_leave_the_same_audit_line(session):
    run_tool(session, "memory_write", session.ctx, path="a.md", content="a\n")
    run_tool(session, "file_write", session.ctx, path="a.txt", content="a\n")
    written = [ln for ln in audit(session) if ln["event"] == "written"]
    assert [(ln["kind"], ln["target"], ln["bytes"], ln["run"]) for ln in written] == [
        ("memory", "a.md", 2, session.id), ("file", "a.txt", 2, session.id)]
    assert all(len(ln["sha256"]) == 64 and "content" not in ln for ln in written)


def test_tool_calls_run_concurrently_with_their_own_cancel_flags(session):
    """No thread-local: a state belongs to its call, whichever thread asks."""
    observed = ObservedGate(session.policy_gate)
    a, b = ToolCallState("file_write", observed), ToolCallState("file_write", observed)
    a.cancel()
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("b", b.authorize("file", "b.txt", content=b"b")))
    t.start()
    t.join(10)
    assert out["b"].allowed and not a.authorize("file", "a.txt", content=b"a").allowed


@pytest.mark.parametrize("tool,path,workdir,lock", [("memory_write", "people/sam.md", "memory", "lock_path"),
                                                    ("file_write", "notes/sam.txt", "files", "files_lock_path")])
def test_both_writers_write_only_under_their_writers_lock(session, tool, path, workdir, lock):
    """Step 6 runs under the mount's writers' lock for both writers (files/ had none: noticed in
    review, 2026-12-01): while another writer holds it, nothing lands; once released, it does."""
    from policy.fileio import FileLock

    target = session.ws.root / workdir / path
    holder = FileLock(getattr(session.ws, lock), what="test")
    holder.acquire()
    outcome: list = []
    t = threading.Thread(target=lambda: outcome.append(run_tool(session, tool, session.ctx, path=path,
                                                                content="model text\n")), daemon=True)
    try:
        t.start()
        t.join(0.5)
        assert t.is_alive() and not target.exists()      # waiting for the lock, nothing written
    finally:
        holder.release()
    t.join(15)
    assert outcome and target.read_text() == "model text\n"
