"""policy.match: Go path.Match semantics, as a table.

Rows marked GO are Go's own published cases (src/path/match_test.go): facts about the
semantics. Rows marked FN / PP are where Python's fnmatch / PurePath.match say otherwise;
the third column of those rows is checked against Python too, so the table proves the
difference rather than asserting it.
"""

import fnmatch
from pathlib import PurePosixPath

import pytest

from policy.match import PatternError, escape, is_literal, literal_prefix, match
import json
from policy.engine import Session, decide
from policy.grants import GrantStore

E = PatternError  # expected: malformed pattern

GO = [
    ("abc", "abc", True), ("*", "abc", True), ("*c", "abc", True), ("a*", "a", True),
    ("a*", "abc", True), ("a*", "ab/c", False), ("a*/b", "abc/b", True), ("a*/b", "a/c/b", False),
    ("a*b*c*d*e*/f", "axbxcxdxe/f", True), ("a*b*c*d*e*/f", "axbxcxdxexxx/f", True),
    ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", False), ("a*b*c*d*e*/f", "axbxcxdxexxx/fff", False),
    ("a*b?c*x", "abxbbxdbxebxczzx", True), ("a*b?c*x", "abxbbxdbxebxczzy", False),
    ("ab[c]", "abc", True), ("ab[b-d]", "abc", True), ("ab[e-g]", "abc", False),
    ("ab[^c]", "abc", False), ("ab[^b-d]", "abc", False), ("ab[^e-g]", "abc", True),
    ("a\\*b", "a*b", True), ("a\\*b", "ab", False), ("a?b", "a☺b", True),
    ("a[^a]b", "a☺b", True), ("a???b", "a☺b", False), ("a[^a][^a][^a]b", "a☺b", False),
    ("[a-ζ]*", "α", True), ("*[a-ζ]", "A", False), ("a?b", "a/b", False), ("a*b", "a/b", False),
    ("[\\]a]", "]", True), ("[\\-]", "-", True), ("[x\\-]", "x", True), ("[x\\-]", "-", True),
    ("[x\\-]", "z", False), ("[\\-x]", "x", True), ("[\\-x]", "-", True), ("[\\-x]", "a", False),
    ("[]a]", "]", E), ("[-]", "-", E), ("[x-]", "x", E), ("[x-]", "-", E), ("[x-]", "z", E),
    ("[-x]", "x", E), ("[-x]", "-", E), ("[-x]", "a", E), ("\\", "a", E), ("[a-b-c]", "a", E),
    ("[", "a", E), ("[^", "a", E), ("[^bc", "a", E), ("a[", "a", E), ("a[", "ab", E),
    ("a[", "x", E), ("a/b[", "x", E), ("*x", "xxx", True),
]

# (pattern, name, Go answer); each row differs from fnmatch.fnmatchcase
FN = [
    ("people/*", "people/sub/x.md", False),   # fnmatch's * crosses /
    ("*.md", "people/lina.md", False),
    ("a/*/c", "a/b/x/c", False),
    ("?", "/", False),                        # fnmatch's ? matches /
    ("[!a]", "b", False),                     # Go: ! is a literal class member, not negation
    ("[^a]", "a", False),                     # fnmatch: ^ is a literal class member
    ("a\\*b", "a\\xb", False),                # fnmatch: backslash is literal
    ("[", "[", E),                            # fnmatch: unclosed [ is literal
    ("[a-b-c]", "-", E),
    ("a[", "a[", E),
]

# (pattern, name, Go answer); each row differs from PurePosixPath(name).match(pattern)
PP = [
    ("b/*.md", "a/b/c.md", False),            # PurePath.match anchors on the right
    ("*.md", "people/lina.md", False),
    ("*", "people/lina.md", False),
    ("lina.md", "people/lina.md", False),
    ("people/[^x]*.md", "people/lina.md", True),  # PurePath (3.11): [^x] is a literal ^ or x
]

# more facts the grant store relies on
MORE = [
    ("people/*", "people/x.md", True),
    ("people/*", "people/", True),            # * may be empty
    ("*", "", True), ("", "", True), ("", "a", False),
    ("a[^b]c", "a/c", True),                  # Go: a negated class may match /, only * and ? stop
    ("[z-a]", "m", False),                    # reversed range: valid, matches nothing
    ("[^z-a]", "m", True),
    ("*.example.com", "api.example.com", True),
    ("*.example.com", "example.com", False),
    ("\\[draft\\].md", "[draft].md", True),
    ("[draft].md", "[draft].md", False),
]


@pytest.mark.parametrize("pattern,name,want", GO + FN + PP + MORE)
def test_table(pattern, name, want):
    if want is E:
        with pytest.raises(PatternError):
            match(pattern, name)
    else:
        assert match(pattern, name) is want


def test_table_is_large_enough():
    assert len(GO + FN + PP + MORE) >= 40


@pytest.mark.parametrize("pattern,name,want", FN)
def test_fnmatch_really_differs(pattern, name, want):
    assert fnmatch.fnmatchcase(name, pattern) is not (want is True)


@pytest.mark.parametrize("pattern,name,want", PP)
def test_purepath_really_differs(pattern, name, want):
    assert PurePosixPath(name).match(pattern) is not want


@pytest.mark.parametrize("literal", ["people/lina.md", "a*b", "[x]", "q?", "back\\slash", "*", ""])
def test_escape_matches_exactly_itself(literal):
    pat = escape(literal)
    assert match(pat, literal)
    assert literal_prefix(pat) == literal
    assert is_literal(pat) == is_literal(literal)
    assert not match(pat, literal + "x")


def test_literal_prefix():
    assert literal_prefix("people/*") == "people/"
    assert literal_prefix("a\\*b*") == "a*b"
    assert literal_prefix("*.example.com") == ""
    assert literal_prefix("proj/x?") == "proj/x"


def test_error_message_is_specific():
    with pytest.raises(PatternError, match="unclosed"):
        match("people/[ab", "people/a")
    with pytest.raises(PatternError, match="backslash"):
        match("people\\", "people")


def test_literal_suffix():
    from policy.match import literal_suffix
    assert literal_suffix("*.example.com") == ".example.com"
    assert literal_suffix("people/*") == ""
    assert literal_suffix("*x\\*") == "x*"
    assert literal_suffix("a[\\]]b.md") == "b.md"
    assert literal_suffix("*[^a-z]end") == "end"


# The matcher cases were Go's published table (the GO rows of test_table, valid and
# invalid patterns alike: the same assertions, so they are asserted there once) and these, where
# fnmatch / PurePath.match differ from Go:
GO_CASES = [
    ("people/*", "people/lina.md", True), ("people/*", "people/sub/x.md", False),
    ("*.md", "a/b.md", False), ("*", "", True), ("[!a]", "!", True), ("[!a]", "b", False),
    ("*.md", ".hidden.md", True), ("a*", "A", False), ("people/*", "people/", True),
    ("people/*", "people", False), ("*/*.md", "a/b.md", True), ("a/*", "a/b/c", False),
]


# acceptance (issue 3: matcher), written from the words
@pytest.mark.parametrize("pattern,name,expected", GO_CASES)
def test_match_go_semantics(pattern, name, expected):
    assert match(pattern, name) is expected


# review (policy): match: Go's algorithm, not a regex
# Go's path.Match matches each chunk after a star at its leftmost position and never backtracks
# into an earlier chunk. A regex backtracks, so a class that can match '/' let a grant reach
# below its folder. Traced against src/path/match.go:
#   Match("*[^a]*", "x/y"): chunk [^a] matches 'x', rest "/y" is left to a trailing '*',
#   which refuses a '/': false.
@pytest.mark.parametrize("pattern,name,want", [
    ("*[^a]*", "x/y", False),
    ("notes/*[^x]*", "notes/a/b", False),
    ("*[.-0]*", "./b", False),        # the range . - 0 includes '/'; '.' is matched first
    ("*[.-0]*", "a/b", True),         # 'a' is not in it, so the star slides to '/'
    ("*[^a]", "x/", True),            # the last chunk slides until the name is used up
    ("*[^a]", "/", True),
    ("[^a]*", "/x", True),
    ("*[^a]*", "xy", True),
    ("a*b?c*x", "abxbbxdbxebxczzx", True),
    ("a*b?c*x", "abxbbxdbxebxczzy", False),
    ("a*/b", "abc/b", True),
    ("a*b*c*d*e*/f", "axbxcxdxexxx/f", True),
    ("a*b*c*d*e*/f", "axbxcxdxexxx/fff", False),
])
def test_match_follows_go_leftmost_chunks(pattern, name, want):
    assert match(pattern, name) is want


def test_grant_with_a_slash_matching_class_does_not_reach_below_its_folder(tmp_path):
    (tmp_path / "grants.json").write_text(json.dumps(
        {"version": 1, "grants": [{"kind": "memory", "target": "notes/*[^x]*"}]}))
    s = Session("r", grants=GrantStore(tmp_path / "grants.json"))
    assert decide("memory", "notes/ab.md", "unattended", s).verdict == "allow"
    assert decide("memory", "notes/a/b.md", "unattended", s).verdict == "ask"
