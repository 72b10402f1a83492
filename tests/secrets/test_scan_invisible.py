"""Values split by invisible characters (issue 10 item 9): the scanner's normalised view drops
format characters (category Cf) and the other default-ignorables as it drops whitespace, maps
hits back to the original text, and the catalog redacts after cleaning and cutting, so a split
value is never shown, space-split or otherwise."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest


from assistant.notes.catalog import CatalogSettings, render  # noqa: E402
from assistant.secrets.scanner import Scanner  # noqa: E402
from assistant.tools.base import ToolError  # noqa: E402
from assistant.tools.registry import tools_by_name  # noqa: E402

from leak_corpus import fake_tokens  # noqa: E402
from e2e_support import make_ws  # noqa: E402

SECRET = "Marmalade" + "-Orbit-" + "5519"
INVISIBLE = ["\u200b", "\u00ad", "\u2060", "\ufeff", "\u200c", "\u200d", "\u2063", "\u180e",
             "\U000e0020", "\u034f", "\ufe0f"]
PIECES = (SECRET[:4], SECRET[4:9], SECRET[9:14], SECRET[14:])


def split_with(ch: str, value: str = SECRET, every: int = 3) -> str:
    return ch.join(value[i:i + every] for i in range(0, len(value), every))


@pytest.mark.parametrize("ch", INVISIBLE, ids=lambda c: f"U+{ord(c):04X}")
def test_value_split_by_an_invisible_character_is_found_and_redacted_whole(ch):
    scanner = Scanner({"WIFI": SECRET})
    split = split_with(ch)
    text = f"wifi: {split} (garage)"
    found = scanner.find(text)
    assert [(f.name, f.rule) for f in found] == [("WIFI", "vault")]
    assert text[found[0].start:found[0].end] == split
    assert scanner.redact(text) == "wifi: [redacted:WIFI] (garage)"


def test_mixed_invisible_whitespace_and_backslashes_still_line_up():
    scanner = Scanner({"WIFI": SECRET})
    text = "x " + SECRET[:3] + "\u200b \u00ad" + SECRET[3:8] + "\\\n\u2060" + SECRET[8:] + " y"
    assert scanner.redact(text) == "x [redacted:WIFI] y"


def test_every_format_character_is_dropped():
    from assistant.secrets.scanner import _DROP_CHARS

    dropped = set(_DROP_CHARS)
    cf = [c for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
    assert cf and all(chr(c) in dropped for c in cf)


@pytest.mark.parametrize("ch", ["\u200b", "\u00ad", "\u2060"], ids=lambda c: f"U+{ord(c):04X}")
def test_shape_token_split_by_an_invisible_character_is_found(ch):
    token = fake_tokens()["github-token"][0]
    text = "token " + split_with(ch, token, 7) + " end"
    found = Scanner({}).find(text)
    assert [f.rule for f in found] == ["github-token"]
    assert Scanner({}).redact(text) == "token [redacted:github-token] end"


@pytest.fixture
def session(tmp_path, sessions):
    made = []

    def make():
        made.append(sessions(make_ws(tmp_path / f"s{len(made)}"), vault={"WIFI": SECRET}))
        return made[-1]

    return make


@pytest.mark.parametrize("ch", ["\u200b", "\u00ad", "\u2060"], ids=lambda c: f"U+{ord(c):04X}")
def test_memory_write_of_a_split_value_is_refused(session, ch):
    parts = session()
    with pytest.raises(ToolError, match="secret"):
        tools_by_name(parts.tools)["memory_write"].run(
            {"path": "wifi.md", "content": f"garage wifi: {split_with(ch)}\n"}, parts.ctx)
    assert not (parts.ws.memory_dir / "wifi.md").exists()


@pytest.mark.parametrize("ch", ["\u200b", "\u00ad", "\u2060"], ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("layout", ["description", "body", "long-description"])
def test_catalog_never_shows_a_split_value(tmp_path, ch, layout):
    mem = tmp_path / "memory"
    mem.mkdir()
    split = split_with(ch)
    if layout == "description":
        note = f"---\ndescription: wifi {split}\n---\nbody\n"
    elif layout == "body":
        note = f"wifi {split} in the garage\n"
    else:   # the value sits where the summary is cut
        note = f"---\ndescription: {'w' * 80} {split} and more words after it\n---\n"
    (mem / "wifi.md").write_text(note, encoding="utf-8")
    block = render(mem, CatalogSettings(width=100), Scanner({"WIFI": SECRET}))
    line = next(ln for ln in block.splitlines() if ln.startswith("- wifi.md"))
    flat = "".join(line.split())
    assert not any(piece in flat for piece in PIECES[1:]), line
    assert SECRET[:7] not in flat
