"""Imports point down only: the layer map of assistant/ and policy/, checked by parsing every module.

Layers (top first) follow /work/shared/DESIGN.md: cli -> session -> agent -> prompt/models/tools ->
memory/index/history -> vault/leaks -> confine -> workspace -> policy (fileio and paths at its
bottom). A module may import modules of its own layer or of any layer below; an import of a module
in a higher layer fails this test, unless it is listed in EXCEPTIONS with the reason it is allowed.
Every import counts: module level, inside functions, and under `if TYPE_CHECKING:` (a type-only
import still ties the lower module's meaning to the higher one). A module that is in no layer fails
too: a new module is placed here deliberately, not by accident.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Layer name -> module prefixes (a module belongs to the layer of its longest matching prefix).
# Top first. Policy is split into its own sub-layers, fileio/paths at the very bottom.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cli", ("assistant", "assistant.__main__", "assistant.cli",
             # other doors into the same session (DESIGN.md): they start at open_session like cli
             "assistant.mcp", "assistant.web")),
    ("session", ("assistant.session",)),
    ("agent", ("assistant.agent", "assistant.gate_view", "assistant.streaming")),
    ("prompt/models/tools", ("assistant.prompt", "assistant.actions", "assistant.models",
                             "assistant.tools")),
    ("memory/index/history", ("assistant.memory", "assistant.index", "assistant.history",
                              "assistant.history_scan", "assistant.catalog", "assistant.notes",
                              "assistant.names", "assistant.recall", "assistant.embed",
                              "assistant.gated_write",
                              # the approval side channels (web approvals, issue 16)
                              "assistant.approving", "assistant.approval_links", "assistant.push",
                              "assistant.revision_key", "assistant.call_context",
                              "assistant.transcript", "assistant.runs", "assistant.watch")),
    ("vault/leaks", ("assistant.vault", "assistant.leaks", "assistant.leak_rules", "assistant.leak_view",
                     "assistant.remembered", "assistant.unredact")),
    # terminal escapes what is shown (ConfinementError texts included); it and the other display
    # helpers (colour, local time) sit beside confine
    ("confine", ("assistant.confine", "assistant.terminal", "assistant.colour", "assistant.localtime",
                 "assistant.screen_lines")),
    ("workspace", ("assistant.workspace", "assistant.config", "assistant.hidden", "assistant.schedule",
                   "assistant.locking", "assistant.interrupt")),
    ("policy.gate", ("policy", "policy.gate")),
    ("policy.approvals/engine", ("policy.approvals", "policy.engine", "policy.notify")),
    ("policy.grants/audit", ("policy.grants", "policy.audit")),
    ("policy.kinds", ("policy.kinds",)),
    ("policy.match/hosts/duration", ("policy.match", "policy.hosts", "policy.duration")),
    ("policy.fileio/paths/strict_json", ("policy.fileio", "policy.paths", "policy.strict_json")),
)

# (importer, imported) -> why this upward import is allowed. Keep it short; each is a debt.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("assistant.memory", "assistant.session"):
        "open_memory(), the plain Python API entry point kept for the memory_write contract, "
        "opens a session at the composition root (imported inside the function)",
}

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


GRAPH = {m: imports_of(m) for m in MODULES}


def test_the_modules_are_found():
    # the walk itself works: a broken path would make every other check here pass vacuously
    assert "assistant.confine" in MODULES and "policy.fileio" in MODULES and len(MODULES) > 40
    assert "policy.fileio" in GRAPH["assistant.confine"]
    assert "assistant.leaks" in GRAPH["assistant.vault"]


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
    missing = sorted(m for m in MODULES if layer_of(m) is None)
    assert missing == [], ("place these modules in LAYERS in " + __file__ + ":\n" + "\n".join(missing))


def test_imports_point_down_only():
    upward = []
    for module, deps in sorted(GRAPH.items()):
        mine = layer_of(module)
        for dep in sorted(deps):
            theirs = layer_of(dep)
            if mine is None or theirs is None or theirs >= mine:
                continue          # same layer or below (index grows downward); unplaced: see above
            if (module, dep) in EXCEPTIONS:
                continue
            upward.append(f"{module} ({LAYERS[mine][0]}) imports {dep} ({LAYERS[theirs][0]})")
    assert upward == [], "imports must point down the layers:\n" + "\n".join(upward)


def test_every_exception_is_still_needed():
    # an exception whose import is gone is removed from the list, so the list stays the true debt
    stale = sorted(f"{a} -> {b}" for a, b in EXCEPTIONS if b not in GRAPH.get(a, set()))
    assert stale == [], "remove these from EXCEPTIONS:\n" + "\n".join(stale)


@pytest.mark.parametrize("source, expected", [
    ("from .confine import Root\n", {"assistant.confine"}),
    ("from . import catalog\n", {"assistant.catalog"}),
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
