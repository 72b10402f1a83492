"""The one answer to "can a person see this character?", for every door and the path grammar.

Guards that what a person reads (an approval request, a note, a transcript) is all that is
there: a character that renders as nothing is never shown as nothing. The path grammar
(policy.paths) refuses such characters in names, the leak scanner's view
(assistant.secrets.view) drops them before matching, and every display (the terminal's escape,
the approval page) shows them as escapes and counts them. All three read the table here.

`DEFAULT_IGNORABLE` is Unicode's Default_Ignorable_Code_Point property, written out from
DerivedCoreProperties.txt (Unicode 15.1; unchanged since 14.0): the format characters (Cf) but
the visible ones, plus the variation selectors, U+034F, the Hangul fillers and the reserved
ranges kept for future invisible characters. It is a table, not a category test: U+3164 is a
letter (Lo) and U+FE0F a mark (Mn) to unicodedata, yet both render as nothing.
`invisible()` is membership in that table; `visible()` is what a display may print as is.
"""

from __future__ import annotations

import bisect
import unicodedata

__all__ = ["DEFAULT_IGNORABLE", "FORMAT_SHOWN", "TAGS", "invisible", "invisible_name", "visible",
           "is_tag", "emoji_presentation_ok"]

# (first, last, what it is): Default_Ignorable_Code_Point, DerivedCoreProperties.txt 15.1.
DEFAULT_IGNORABLE: tuple[tuple[int, int, str], ...] = (
    (0x00AD, 0x00AD, "soft hyphen"),
    (0x034F, 0x034F, "combining grapheme joiner"),
    (0x061C, 0x061C, "Arabic letter mark"),
    (0x115F, 0x1160, "Hangul filler"),
    (0x17B4, 0x17B5, "Khmer inherent vowel"),
    (0x180B, 0x180D, "Mongolian variation selector"),
    (0x180E, 0x180E, "Mongolian vowel separator"),
    (0x180F, 0x180F, "Mongolian variation selector"),
    (0x200B, 0x200F, "zero-width character or direction mark"),
    (0x202A, 0x202E, "bidi embedding or override"),
    (0x2060, 0x2064, "word joiner or invisible operator"),
    (0x2065, 0x2065, "reserved invisible code point"),
    (0x2066, 0x206F, "bidi isolate or deprecated format character"),
    (0x3164, 0x3164, "Hangul filler"),
    (0xFE00, 0xFE0F, "variation selector"),
    (0xFEFF, 0xFEFF, "zero width no-break space"),
    (0xFFA0, 0xFFA0, "halfwidth Hangul filler"),
    (0xFFF0, 0xFFF8, "reserved invisible code point"),
    (0x1BCA0, 0x1BCA3, "shorthand format control"),
    (0x1D173, 0x1D17A, "musical symbol format control"),
    (0xE0000, 0xE0000, "reserved invisible code point"),
    (0xE0001, 0xE0001, "language tag"),
    (0xE0002, 0xE001F, "reserved invisible code point"),
    (0xE0020, 0xE007F, "tag character"),
    (0xE0080, 0xE00FF, "reserved invisible code point"),
    (0xE0100, 0xE01EF, "variation selector"),
    (0xE01F0, 0xE0FFF, "reserved invisible code point"),
)

# Format characters (Cf) that Unicode keeps out of Default_Ignorable because they are meant to
# render (prepended concatenation marks such as the Arabic number sign, interlinear annotation,
# Egyptian hieroglyph format controls). A display still escapes them (they are Cf), the scanner
# still drops them, but they are not counted as invisible.
FORMAT_SHOWN: tuple[tuple[int, int], ...] = (
    (0x0600, 0x0605), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2),
    (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x1343F),
)

TAGS = (0xE0000, 0xE007F)     # the tag block: ASCII spelled invisibly (the "ASCII smuggling" block)

_STARTS = [lo for lo, _, _ in DEFAULT_IGNORABLE]

# Categories a display never prints as is: controls, format, surrogates, private use,
# unassigned, line/paragraph separators.
_NOT_SHOWN = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))

# Emoji that take a presentation selector (U+FE0E text / U+FE0F emoji style) right after them.
# The blocks where Unicode's emoji-variation-sequences.txt has its bases, plus the keycap bases.
_EMOJI_BASES = (
    (0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049), (0x2122, 0x2122),
    (0x2139, 0x2139), (0x2194, 0x21AA), (0x231A, 0x23FF), (0x24C2, 0x24C2), (0x25AA, 0x25FE),
    (0x2600, 0x27BF), (0x2934, 0x2935), (0x2B05, 0x2B55), (0x3030, 0x3030), (0x303D, 0x303D),
    (0x3297, 0x3297), (0x3299, 0x3299), (0x1F000, 0x1FAFF),
)
_KEYCAP_BASES = "0123456789#*"


def invisible_name(ch: str) -> str | None:
    """What the default-ignorable character `ch` is ("variation selector"), or None if it is not one."""
    code = ord(ch)
    if code < 0xAD:
        return None
    i = bisect.bisect_right(_STARTS, code) - 1
    if i >= 0:
        lo, hi, name = DEFAULT_IGNORABLE[i]
        if lo <= code <= hi:
            return name
    return None


def invisible(ch: str) -> bool:
    """True for a Default_Ignorable_Code_Point: a character that renders as nothing."""
    return invisible_name(ch) is not None


def is_tag(ch: str) -> bool:
    return TAGS[0] <= ord(ch) <= TAGS[1]


def visible(ch: str) -> bool:
    """True if a display may print `ch` as is: not a control, format, separator, surrogate,
    private-use or unassigned character, and not default-ignorable. (`\\n` and `\\t` are
    controls: a display that keeps them decides so itself.)"""
    if " " <= ch <= "~":
        return True
    return not invisible(ch) and unicodedata.category(ch) not in _NOT_SHOWN


def emoji_presentation_ok(text: str, i: int) -> bool:
    """True if text[i] is a single U+FE0E/U+FE0F right after an emoji (or a keycap base followed
    by U+20E3): the one invisible a display shows as is, since emoji carry it routinely."""
    if text[i] not in "\ufe0e\ufe0f" or i == 0:
        return False
    before = text[i - 1]
    if before in _KEYCAP_BASES:
        return i + 1 < len(text) and text[i + 1] == "\u20e3"
    code = ord(before)
    return any(lo <= code <= hi for lo, hi in _EMOJI_BASES)
