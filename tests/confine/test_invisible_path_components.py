"""Review (io): a path component may not hide an invisible (Unicode default-ignorable) character.

The grammar refuses format/bidi characters (category Cf, e.g. U+200B) as "invisible", but the
other default-ignorable code points are not Cf: COMBINING GRAPHEME JOINER U+034F, the variation
selectors U+FE00-FE0F and U+E0100-E01EF, the Hangul fillers U+115F/U+1160/U+3164/U+FFA0, the
Mongolian free variation selectors, KHMER VOWEL INHERENT AQ/AA. None is removed by NFC, and the
terminal escape shows them as nothing, so `people/al\\u034fice.md` was a second note displayed as
`people/alice.md` in the catalog, the transcript and an approval request, and `\\u3164.md`
showed as a dot-leading `.md`. Checked through the real writer on the real filesystem.
"""

from __future__ import annotations

import pytest

from policy.paths import PathGrammarError, check

INVISIBLE = ["\u034f", "\ufe00", "\ufe0f", "\U000e0100", "\u115f", "\u1160", "\u3164", "\uffa0",
             "\u180b", "\u180f", "\u17b4", "\u17b5"]


@pytest.mark.parametrize("ch", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_grammar_refuses_default_ignorable_characters(ch: str) -> None:
    with pytest.raises(PathGrammarError, match="invisible"):
        check(f"people/al{ch}ice.md")


def test_visible_names_stay_allowed() -> None:
    assert check("people/josé.md") == ["people", "josé.md"]
    assert check("people/Łukasz Nowak.md") == ["people", "Łukasz Nowak.md"]
    assert check("日本/メモ.md") == ["日本", "メモ.md"]


def test_memory_write_refuses_a_second_alice_that_displays_as_the_first(tmp_path) -> None:
    from assistant.memory import PathRefused
    from assistant.session import open_session
    from assistant.workspace.layout import init_workspace, open_workspace

    root = tmp_path / "ws"
    init_workspace(root)
    session = open_session(open_workspace(root), "watched", kind="test", interactive=False)
    try:
        session.memory.write("people/alice.md", "Alice likes tea.\n")
        with pytest.raises(PathRefused, match="invisible"):
            session.memory.write("people/al\u034fice.md", "Alice's bank changed: pay to X.\n")
        with pytest.raises(PathRefused, match="invisible"):
            session.memory.write("\u3164.md", "looks like a dot-leading note\n")
    finally:
        session.close()
    assert sorted(p.name for p in (root / "memory" / "people").iterdir()) == ["alice.md"]
