"""Imports point down only: the folder tree of assistant/ is the layer map, checked by parsing every module.

Layers (top first) follow DESIGN.md: the doors (cli/, mcp/, web/, the plain memory API) -> session
-> agent/ -> tools/ -> sync/ -> recall/ -> models/ -> approvals/ -> notes/ -> records/ -> gating/ -> secrets/
-> workspace/ -> display/ -> confine -> policy (fileio, paths and visible at its bottom). A module may import
modules of its own folder or of any layer below; an import of a module in a higher layer fails
this test, and there are no exceptions. Every import counts: module level, inside functions, and
under `if TYPE_CHECKING:` (a type-only import still ties the lower module's meaning to the higher
one). A module that is in no layer fails too: a new module is placed here deliberately, not by
accident. The import graph has no circles, and only a few imports wait inside a function body.

An old module name kept importable (`assistant.leaks` is assistant.secrets.scanner) is an alias
module: it replaces itself in sys.modules by its new home. Aliases are for people's scripts; no
module of the project imports one.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Layer name -> module prefixes (a module belongs to the layer of its longest matching prefix).
# Top first. One entry per folder of assistant/ (a folder is one layer, with no exceptions); the
# few modules that sit directly in assistant/ are placed by name. Policy is split into its own
# sub-layers, fileio/paths at the very bottom.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # the doors into a session: the CLI, the MCP server, the approval page, and the plain Python
    # API of memory (assistant/memory.py), which opens a session like the CLI does
    ("doors", ("assistant", "assistant.__main__", "assistant.cli", "assistant.mcp", "assistant.web",
               "assistant.memory")),
    ("session", ("assistant.session",)),
    ("agent", ("assistant.agent",)),
    ("tools", ("assistant.tools",)),
    # git-backed sync between enrolled devices: above the note store (its changes land through
    # the memory writer), below the tools (nothing below imports it)
    ("sync", ("assistant.sync",)),
    ("recall", ("assistant.recall",)),
    ("models", ("assistant.models",)),
    ("approvals", ("assistant.approvals",)),
    ("notes", ("assistant.notes",)),
    ("records", ("assistant.records",)),
    ("gating", ("assistant.gating",)),
    ("secrets", ("assistant.secrets",)),
    ("workspace", ("assistant.workspace",)),
    ("display", ("assistant.display",)),
    ("confine", ("assistant.confine",)),
    ("policy.gate", ("policy", "policy.gate")),
    ("policy.approvals/engine", ("policy.approvals", "policy.engine", "policy.notify")),
    ("policy.grants/audit", ("policy.grants", "policy.audit")),
    ("policy.kinds", ("policy.kinds",)),
    ("policy.match/hosts/duration", ("policy.match", "policy.hosts", "policy.duration")),
    ("policy.fileio/paths/strict_json/visible", ("policy.fileio", "policy.paths", "policy.strict_json",
                                                 "policy.visible")),
)

PACKAGES = ("assistant", "policy")


def module_files() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


MODULES = module_files()


def alias_target(path: Path) -> str | None:
    """The new home of an alias module (docstring, `import sys`, `from P import M as _moved`,
    `sys.modules[__name__] = _moved`), or None for a real module."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 3:
        return None
    imp, frm, assign = body
    ok = (isinstance(imp, ast.Import) and [a.name for a in imp.names] == ["sys"]
          and isinstance(frm, ast.ImportFrom) and frm.level == 0 and len(frm.names) == 1
          and frm.names[0].asname == "_moved" and isinstance(assign, ast.Assign)
          and ast.unparse(assign) == "sys.modules[__name__] = _moved")
    return f"{frm.module}.{frm.names[0].name}" if ok else None


ALIASES = {m: t for m, p in MODULES.items() if (t := alias_target(p)) is not None}


def owning_module(name: str) -> str | None:
    """The project module a dotted name lives in (`assistant.confine.Root` -> `assistant.confine`)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from . import catalog` imports a module; `from .confine import Root` a name in one
            names = [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source
                     for a in node.names]
        else:
            continue
        for name in names:
            owner = owning_module(name)
            if owner is not None and owner != module:
                found.add(owner)
    return found


def layer_of(module: str) -> int | None:
    """The index in LAYERS of MODULE's longest matching prefix. A top package's own name
    (`assistant`, `policy`: its __init__) matches only itself, so a new module is never placed
    by accident under the package's layer."""
    best: tuple[int, int] | None = None   # (prefix length, layer index)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix not in PACKAGES and module.startswith(prefix + ".")):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), index)
    return None if best is None else best[1]


GRAPH = {m: imports_of(m) for m in MODULES if m not in ALIASES}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of the graph: each strongly connected component of more than one module,
    sorted (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        part.append(top)
                        if top == node:
                            break
                    if len(part) > 1:
                        found.append(sorted(part))
    return sorted(found)


def imports_in_functions() -> list[tuple[str, int, str]]:
    """(module, line, comment) of every import of a project module inside a function body; the
    comment is the one on the import's line or the line above ('' if none)."""
    found = []
    for module, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for func in ast.walk(ast.parse(text)):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else ["." if node.level else (node.module or "")])
                if not any(n == "." or n.split(".")[0] in PACKAGES for n in names):
                    continue
                here, above = lines[node.lineno - 1], lines[node.lineno - 2] if node.lineno > 1 else ""
                why = here.partition("#")[2] or (above.strip()[1:] if above.strip().startswith("#") else "")
                found.append((module, node.lineno, why.strip()))
    return sorted(set(found))


def test_the_modules_are_found():
    # the walk itself works: a broken path would make every other check here pass vacuously
    assert "assistant.confine" in MODULES and "policy.fileio" in MODULES and len(MODULES) > 40
    assert "policy.fileio" in GRAPH["assistant.confine"]
    assert "assistant.secrets.scanner" in GRAPH["assistant.secrets.vault"]


def test_policy_never_imports_assistant():
    bad = sorted(f"{m} imports {d}" for m, deps in GRAPH.items() if m.split(".")[0] == "policy"
                 for d in deps if d.split(".")[0] == "assistant")
    assert bad == [], "policy/ must not depend on assistant/:\n" + "\n".join(bad)


def test_a_new_module_is_not_placed_by_its_package_name():
    assert layer_of("assistant") is not None and layer_of("policy") is not None
    assert layer_of("assistant.brand_new_module") is None
    assert layer_of("policy.brand_new_module") is None
    assert layer_of("assistant.cli.brand_new_command") == layer_of("assistant.cli")


def test_every_module_has_a_layer():
    missing = sorted(m for m in MODULES if layer_of(m) is None and m not in ALIASES)
    assert missing == [], ("place these modules in LAYERS in " + __file__ + ":\n" + "\n".join(missing))


def test_imports_point_down_only():
    upward = []
    for module, deps in sorted(GRAPH.items()):
        mine = layer_of(module)
        for dep in sorted(deps):
            theirs = layer_of(dep)
            if mine is None or theirs is None or theirs >= mine:
                continue          # same layer or below (index grows downward); unplaced: see above
            upward.append(f"{module} ({LAYERS[mine][0]}) imports {dep} ({LAYERS[theirs][0]})")
    assert upward == [], "imports must point down the layers:\n" + "\n".join(upward)


def test_old_names_are_aliases_nobody_inside_imports():
    assert ALIASES, "the kept old names (assistant.leaks, ...) were not found as aliases"
    for name, target in ALIASES.items():
        assert target in MODULES and target not in ALIASES, (name, target)
    inside = sorted(f"{m} imports {d}" for m, deps in GRAPH.items() for d in deps if d in ALIASES)
    assert inside == [], "import the module's real home, not its old name:\n" + "\n".join(inside)


def test_the_import_graph_has_no_circles():
    circles = strongly_connected(GRAPH)
    assert circles == [], "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_a_circle_is_caught(monkeypatch):
    monkeypatch.setitem(GRAPH, "policy.paths", GRAPH["policy.paths"] | {"policy.fileio"})
    monkeypatch.setitem(GRAPH, "policy.fileio", GRAPH["policy.fileio"] | {"policy.paths"})
    with pytest.raises(AssertionError, match="policy.fileio <-> policy.paths"):
        test_the_import_graph_has_no_circles()


# Imports inside function bodies hide a dependency from the top of the module. The few left wait
# for an optional heavy dependency or keep start-up cheap (measured), and each says so in a
# comment on its line or the line above.
MAX_IMPORTS_IN_FUNCTIONS = 15


def test_few_imports_wait_inside_functions_and_each_says_why():
    found = imports_in_functions()
    uncommented = [f"{m}:{line}" for m, line, why in found if not why]
    assert uncommented == [], "say why this import waits (a comment on its line or above):\n" + "\n".join(uncommented)
    assert len(found) <= MAX_IMPORTS_IN_FUNCTIONS, "\n".join(f"{m}:{line}" for m, line, _ in found)


def test_few_modules_sit_directly_in_assistant():
    direct = sorted(m for m in MODULES if m.count(".") == 1 and m.startswith("assistant.")
                    and m not in ALIASES and (REPO / "assistant" / (m.split(".")[1] + ".py")).exists())
    assert len(direct) <= 12, direct


@pytest.mark.parametrize("source, expected", [
    ("from .confine import Root\n", {"assistant.confine"}),
    ("from . import confine\n", {"assistant.confine"}),
    ("from .secrets import vault\n", {"assistant.secrets.vault"}),
    ("import assistant.session\n", {"assistant.session"}),
    ("def f():\n    from policy.gate import Gate\n", {"policy.gate"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .agent import Agent\n",
     {"assistant.agent"}),
    ("import json\nfrom click import echo\n", set()),
])
def test_the_parser_sees_every_form_of_import(tmp_path, monkeypatch, source, expected):
    fake = tmp_path / "probe.py"
    fake.write_text(source)
    monkeypatch.setitem(MODULES, "assistant.probe", fake)
    assert imports_of("assistant.probe") == expected


def test_an_upward_import_is_caught(monkeypatch):
    monkeypatch.setitem(GRAPH, "policy.fileio", {"policy.gate"})
    with pytest.raises(AssertionError, match="policy.fileio .* imports policy.gate"):
        test_imports_point_down_only()
    monkeypatch.setitem(GRAPH, "policy.paths", {"assistant.confine"})
    with pytest.raises(AssertionError, match="policy.paths imports assistant.confine"):
        test_policy_never_imports_assistant()
