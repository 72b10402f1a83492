"""The composition root is the only builder of a policy Gate, and no writer duck-types the gate
(issue 9): parsed from the source, so a new door that wires its own Gate fails here."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _modules():
    for base in ("assistant", "policy"):
        yield from sorted((ROOT / base).rglob("*.py"))


def test_only_session_py_constructs_a_gate():
    builders = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name in ("Gate", "for_workspace") and path.name != "gate.py":
                    builders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert [b.split(":")[0] for b in builders] == ["assistant/session.py"], builders


def test_no_writer_asks_the_gate_for_attributes_by_name():
    """Cancellation and the decision are typed (ToolContext.cancel, Decision), not getattr'd."""
    offenders = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in ("still_wanted", "allowed", "sha256", "verdict", "run_id", "audit")):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
