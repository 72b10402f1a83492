"""memory_write and file_write are two mounts of one gated-write pipeline (issue 9, item 4):
the same refusal, in the same words, for the same fault, on a real workspace, the real
policy Gate and the real confined Root."""

import json
import os

import pytest

from assistant.notes.writer import GatedWriter, Mount, PathRefused
from assistant.session import open_session
from assistant.tools.base import ToolError
from assistant.tools.registry import all_tools
from assistant.workspace.layout import init_workspace, open_workspace
from policy.gate import Decision

from secrets_support import cli_vault_ws, run_assistant

TOOLS = {t.name: t for t in all_tools()}


@pytest.fixture
def session(tmp_path):
    """A watched session on the example workspace (open_session is a context manager)."""
    init_workspace(tmp_path / "ws", example=True)
    with open_session(open_workspace(tmp_path / "ws"), "watched", kind="test", interactive=False) as opened:
        yield opened


def refusal(session, tool, **args):
    with pytest.raises(ToolError) as info:
        TOOLS[tool].run(args, session.ctx)
    return str(info.value)


def written(session):
    path = session.ws.audit_path
    lines = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
    return [ln for ln in lines if ln["event"] == "written"]


def both(note, file):
    return [("memory_write", note, "note"), ("file_write", file, "file")]


@pytest.mark.parametrize("tool,path,noun", both("a.md", "a.txt"))
def test_nul_and_oversize_content_get_the_same_words(session, tool, path, noun):
    assert refusal(session, tool, path=path, content="a\x00b") == (
        f"content contains a NUL character (at character 1); {noun}s are text")
    assert not written(session)


@pytest.mark.parametrize("tool,path,noun", both("link.md", "link.txt"))
def test_a_link_at_the_leaf_is_refused_by_both_and_left_alone(session, tool, path, noun, tmp_path):
    outside = tmp_path / "outside"
    outside.write_text("keep\n")
    mount = session.ws.memory_dir if noun == "note" else session.ws.files_dir
    os.symlink(outside, mount / path)
    msg = refusal(session, tool, path=path, content="new\n")
    assert msg.startswith(f"refused: {path} is a symbolic link; {noun}s are never read or written")
    assert (mount / path).is_symlink() and outside.read_text() == "keep\n"


@pytest.mark.parametrize("tool,path,noun", both("k.md", "k.txt"))
def test_a_credential_in_the_path_is_refused_before_the_gate(session, tool, path, noun):
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    msg = refusal(session, tool, path=f"{key}/{path}", content="x\n")
    assert msg.startswith(f"refused: the {noun} would carry a secret") and key not in msg
    assert not any(key in p.name for p in session.ws.root.rglob("*"))


@pytest.mark.parametrize("tool,path,noun", both("g.md", "g.txt"))
def test_a_failing_gate_is_a_deny_for_both(session, tool, path, noun):
    class Broken:
        def authorize(self, kind, target, **kw):
            raise RuntimeError("boom")

    from dataclasses import replace

    ctx = replace(session.ctx, gate=Broken())
    with pytest.raises(ToolError) as info:
        TOOLS[tool].run({"path": path, "content": "x\n"}, ctx)
    assert str(info.value) == "denied: the gate failed (RuntimeError); nothing was written"
    mount = session.ws.memory_dir if noun == "note" else session.ws.files_dir
    assert not (mount / path).exists() and not written(session)


@pytest.mark.parametrize("tool,path,noun", both("s.md", "s.txt"))
def test_the_approval_must_be_for_these_bytes(session, tool, path, noun):
    class OtherBytes:
        def authorize(self, kind, target, **kw):
            return Decision(True, "allow", "approved", "0" * 64)

    from dataclasses import replace

    ctx = replace(session.ctx, gate=OtherBytes())
    with pytest.raises(ToolError, match="^denied: the approval was for different content; nothing was written$"):
        TOOLS[tool].run({"path": path, "content": "x\n"}, ctx)
    mount = session.ws.memory_dir if noun == "note" else session.ws.files_dir
    assert not (mount / path).exists()


def test_the_mount_rule_runs_after_the_grammar_and_before_any_content_check(tmp_path):
    """A mount's own path rule (memory: `.md`; files: hidden) is step 1: a path it refuses is
    refused whatever the content, and the Root is never opened."""
    opened = []

    def root():
        opened.append(1)
        raise AssertionError("the Root must not be opened for a refused path")

    from assistant.secrets.scanner import Scanner

    writer = GatedWriter(Mount(kind="file", tool="t", noun="file", root=root, scanner=Scanner({}),
                               max_bytes=10, read_limit=10, path_rule=lambda p: "no" if p == "x" else None))
    with pytest.raises(PathRefused, match="^no$"):
        writer.check_path("x")
    with pytest.raises(PathRefused, match="path refused"):
        writer.check_path("../x")
    assert writer.check_path("y") == "y" and not opened


# review (one gated writer): a vault value split across path components passed the path scan
SPLIT_SECRET = "Zq7-Plum-Orbit-9931"


def test_vault_value_split_across_path_components_is_refused(tmp_path):
    """check_secrets scanned the path as one string ("Zq7-Plum-/Orbit-9931.txt"); the '/' broke
    the match, so the model could park a vault value in the files/ tree (and the catalog of
    memory/) as folder + file name: `find files/` printed it whole."""
    ws = cli_vault_ws(tmp_path, SPLIT_SECRET)
    script = tmp_path / "s.json"
    script.write_text(json.dumps([
        {"tool": "file_write", "args": {"path": f"{SPLIT_SECRET[:9]}/{SPLIT_SECRET[9:]}.txt", "content": "x"}},
        {"tool": "memory_write", "args": {"path": f"{SPLIT_SECRET[:9]}/{SPLIT_SECRET[9:]}.md", "content": "x\n"}},
        {"reply": "done"},
    ]))
    run_assistant(["-w", str(ws), "chat", "--model", f"script:{script.name}"], stdin="go\n/quit\n", cwd=tmp_path)
    leaked = [str(p.relative_to(ws)) for p in ws.rglob("*")
              if SPLIT_SECRET in str(p.relative_to(ws)).replace("/", "")]
    assert not leaked, leaked
