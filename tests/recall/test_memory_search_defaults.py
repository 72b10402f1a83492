"""memory_search's defaults serve a small model: several matches even when it asks for one, and
the word as typed ranks above a word that only shares its stem ("meeting" is not "meet")."""

from __future__ import annotations

from recall_support import make_ws, session

from assistant.tools.registry import tools_by_name


def _paths(output: str) -> list[str]:
    return [line[2:].split(" [", 1)[0] for line in output.splitlines() if line.startswith("- ")]


def _search(s, **args) -> str:
    return tools_by_name(s.tools)["memory_search"].run(args, s.ctx)


def test_limit_one_still_gets_three_matches_and_the_default_is_five(tmp_path):
    ws = make_ws(tmp_path)
    for i in range(8):
        (ws / f"memory/otters/otter{i}.md").parent.mkdir(exist_ok=True)
        (ws / f"memory/otters/otter{i}.md").write_text(f"Otter {i}\nOtters seen at the weir, visit {i}.\n")
    with session(ws) as s:
        assert len(_paths(_search(s, query="otters weir", limit=1))) == 3
        assert len(_paths(_search(s, query="otters weir"))) == 5
        assert len(_paths(_search(s, query="otters weir", limit=7))) == 7


def test_the_word_as_typed_ranks_above_its_stem(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory/groups").mkdir()
    # the short note shares only the stem; porter alone ranks it first (shorter document)
    (ws / "memory/groups/sketchers.md").write_text("Sketchers\nThe sketchers meet.\n")
    (ws / "memory/groups/team.md").write_text(
        "Team\nThe weekly team meeting is on Monday at 10:00 in the small room, with the whole studio.\n")
    with session(ws) as s:
        paths = _paths(_search(s, query="meeting"))
    assert paths[0] == "groups/team.md"
    assert "groups/sketchers.md" in paths          # the stem still matches, below
