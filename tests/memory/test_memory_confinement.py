"""The file tools' Root (at files/) cannot reach memory/, its sibling, by any path.

Real filesystem, real symlinks and hard links, both resolvers (openat2 and the walk).
"""

import os
from pathlib import Path

import pytest

from assistant.confine import ConfinementError, Root
from assistant.secrets.scanner import Scanner
from assistant.tools.base import ToolContext, ToolError
from assistant.tools.files import file_list, file_read, file_write
from assistant.workspace.layout import init_workspace, open_workspace
from policy.gate import Gate

SENTINEL = b"---\ndescription: sentinel\n---\nMEMORY SENTINEL\n"


@pytest.fixture
def ws(tmp_path):
    init_workspace(tmp_path / "ws", example=True)
    w = open_workspace(tmp_path / "ws")
    (w.memory_dir / "x.md").write_bytes(SENTINEL)
    return w


def memory_state(ws):
    out = {}
    for dp, dns, fns in os.walk(ws.memory_dir):
        for n in fns + dns:
            p = Path(dp, n)
            st = os.lstat(p)
            out[str(p.relative_to(ws.memory_dir))] = (st.st_ino, st.st_size, st.st_mtime_ns,
                                                      p.read_bytes() if p.is_file() else None)
    return out


ESCAPES = [
    "../memory/x.md",
    "../memory",
    "..",
    "../../ws/memory/x.md",
    "sub/../../memory/x.md",
    "./../memory/x.md",
    "memory/../../memory/x.md",
    "%2e%2e/memory/x.md",          # literal name: stays inside files/
    "..%2fmemory%2fx.md",          # literal name
    "\u2025/memory/x.md",          # two-dot leader lookalike
    "\uff0e\uff0e/memory/x.md",    # fullwidth dots
    "..\\memory\\x.md",
    "..\x00/memory/x.md",
    "",
]


@pytest.mark.parametrize("openat2", [None, False], ids=["auto", "walk"])
@pytest.mark.parametrize("path", ESCAPES)
def test_files_root_cannot_reach_memory_by_any_path(ws, path, openat2):
    before = memory_state(ws)
    abs_path = str(ws.memory_dir / "x.md")
    with Root(ws.files_dir, use_openat2=openat2) as r:
        for p in (path, abs_path):
            for op in (lambda: r.read_bytes(p), lambda: r.read_head(p, 10), lambda: r.stat(p),
                       lambda: r.write_bytes(p, b"PWNED"), lambda: r.remove(p),
                       lambda: r.rename("reading-list.md", p), lambda: r.listdir(p)):
                try:
                    got = op()
                except (ConfinementError, FileNotFoundError, NotADirectoryError):
                    continue
                # a literal odd name may be allowed, but only ever inside files/
                assert got is None or b"SENTINEL" not in (got if isinstance(got, bytes) else b"")
    assert memory_state(ws) == before


@pytest.mark.parametrize("openat2", [None, False], ids=["auto", "walk"])
def test_symlink_in_files_pointing_at_memory_is_refused(ws, openat2):
    os.symlink("../memory/x.md", ws.files_dir / "link.md")
    os.symlink("../memory", ws.files_dir / "mem")
    os.symlink(str(ws.memory_dir), ws.files_dir / "absmem")
    before = memory_state(ws)
    with Root(ws.files_dir, use_openat2=openat2) as r:
        with pytest.raises(ConfinementError, match="symlink"):
            r.read_bytes("link.md")
        with pytest.raises(ConfinementError):
            r.read_head("link.md", 100)
        for via in ("mem/x.md", "absmem/x.md"):
            with pytest.raises(ConfinementError):
                r.read_bytes(via)
            with pytest.raises(ConfinementError):
                r.write_bytes(via, b"PWNED")
            with pytest.raises(ConfinementError):
                r.listdir(via.split("/")[0])
        # writing "through" the leaf link replaces the link entry; its target is never touched
        r.write_bytes("link.md", b"replaced the link\n")
    assert memory_state(ws) == before
    assert not (ws.files_dir / "link.md").is_symlink()
    assert (ws.files_dir / "link.md").read_bytes() == b"replaced the link\n"


def test_hard_link_in_files_is_never_written_through(ws):
    os.link(ws.memory_dir / "x.md", ws.files_dir / "hard.md")
    before_bytes = (ws.memory_dir / "x.md").read_bytes()
    with Root(ws.files_dir) as r:
        r.write_bytes("hard.md", b"PWNED")
    assert (ws.memory_dir / "x.md").read_bytes() == before_bytes


def test_file_tools_cannot_reach_memory(ws):
    scanner = Scanner({})
    ws.ensure_state()
    gate = Gate.for_workspace("watched", run_id="t", config=ws.config, grants_path=ws.grants_path,
                              approvals_dir=ws.approvals_dir, audit_path=ws.audit_path)
    os.symlink("../memory/x.md", ws.files_dir / "link.md")
    os.symlink("../memory", ws.files_dir / "mem")
    before = memory_state(ws)
    with Root(ws.files_dir) as files:
        ctx = ToolContext(workspace=ws, scanner=scanner, gate=gate, files=files)
        for path in ("../memory/x.md", "link.md", "mem/x.md", str(ws.memory_dir / "x.md")):
            with pytest.raises(ToolError):
                file_read({"path": path}, ctx)
        for path in ("../memory/x.md", "mem/x.md", "mem/new.md", str(ws.memory_dir / "x.md")):
            with pytest.raises(ToolError):
                file_write({"path": path, "content": "PWNED"}, ctx)
        for path in ("..", "mem", "../memory"):
            with pytest.raises(ToolError):
                file_list({"path": path}, ctx)
    assert memory_state(ws) == before
