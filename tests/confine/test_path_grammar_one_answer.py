"""One path grammar (policy.paths) for model-facing paths: every layer gives a path the same
answer (issue 9 item 4). A note 20 levels deep used to pass confine (depth 32) and the memory
writer but be denied by the gate (policy.kinds, depth 16) with another reason."""

import pytest

from assistant.confine import ConfinementError, Root, validate_relpath
from assistant.memory import PathRefused
from assistant.session import open_session
from assistant.tools.base import ToolError
from assistant.tools.registry import all_tools
from assistant.workspace.layout import init_workspace, open_workspace
from policy.kinds import KINDS, TargetError
from policy.paths import MAX_DEPTH, PathGrammarError, check

DEEP20 = "/".join(f"d{i}" for i in range(19)) + "/note.md"   # 20 components
DEEP33 = "/".join(f"d{i}" for i in range(32)) + "/note.md"   # 33 components


@pytest.fixture
def session(tmp_path):
    root = tmp_path / "ws"
    init_workspace(root, example=True)
    s = open_session(open_workspace(root), "watched", kind="test", interactive=False)
    yield s
    s.close()


def tool(name):
    return {t.name: t for t in all_tools()}[name]


def layer_answers(session, path):
    """(accepted, message) from each layer that checks a model-facing path."""
    answers = {}
    for name, fn, errs in [
        ("grammar", lambda: check(path), PathGrammarError),
        ("confine", lambda: validate_relpath(path), ConfinementError),
        ("policy memory", lambda: KINDS["memory"].normalise(path), TargetError),
        ("policy file", lambda: KINDS["file"].normalise(path), TargetError),
        ("memory writer", lambda: session.memory.check_path(path), PathRefused),
        ("file tools", lambda: tool("file_read").run({"path": path}, session.ctx), ToolError),
    ]:
        try:
            fn()
            answers[name] = (True, "")
        except errs as exc:
            answers[name] = (False, str(exc))
    return answers


def test_a_note_20_levels_deep_gets_the_same_answer_from_every_layer(session):
    answers = layer_answers(session, DEEP20)
    # every layer accepts the path; the file tool then only finds no such file
    assert all(ok for name, (ok, _) in answers.items() if name != "file tools"), answers
    assert "no such file" in answers["file tools"][1]
    # and the whole stack agrees: the watched gate allows it and the note is written
    d = session.gate.authorize("memory", DEEP20, content=b"deep\n", summary="deep")
    assert d.allowed, d.reason
    result = session.memory.write(DEEP20, "deep\n")
    assert result.path == DEEP20 and result.created
    with Root(session.ws.memory_dir) as r:
        assert r.read_bytes(DEEP20) == b"deep\n"


@pytest.mark.parametrize("path", [DEEP33, "people/.hidden.md", "a\u202eb.md", "a\\b.md", "x" * 300 + ".md",
                                  "a//b.md", "../x.md", "people/\uff0e\uff0e/x.md"])
def test_a_refused_path_is_refused_by_every_layer_for_the_same_reason(session, path):
    answers = layer_answers(session, path)
    try:
        check(path)
    except PathGrammarError as exc:
        reason = str(exc)
    assert all(not ok for ok, _ in answers.values()), answers
    assert all(reason in msg for _, msg in answers.values()), answers


def test_depth_is_32_as_documented_for_root():
    assert MAX_DEPTH == 32
    assert len(check("/".join(["d"] * 32))) == 32
    with pytest.raises(PathGrammarError, match="33 components; at most 32"):
        check("/".join(["d"] * 33))


def test_bounds_in_bytes_and_characters():
    check("é" * 127)                          # 254 bytes in one component
    with pytest.raises(PathGrammarError, match="longer than 255 bytes"):
        check("é" * 128)                      # 128 characters, 256 bytes
    with pytest.raises(PathGrammarError, match="characters; at most 8191"):
        check("a" * 10_000_000)               # refused before any per-character work
