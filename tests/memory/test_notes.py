"""Note format: frontmatter parsing, revisions, summaries from a bounded head."""

import hashlib

import pytest

from assistant.notes.frontmatter import (
    clean_line, cut, decode_head, parse, revision, summary_from_head, with_meta,
)


def test_revision_is_12_hex_of_hmac_sha256_of_bytes():
    # issue 10 item 6: keyed (was 12 hex of the plain sha256, an offline oracle)
    import hmac

    key = b"k" * 32
    data = "café\n".encode()
    assert revision(data, key) == hmac.new(key, data, hashlib.sha256).hexdigest()[:12]
    assert revision(data, key) != hashlib.sha256(data).hexdigest()[:12]
    assert revision(data, key) != revision(data, b"j" * 32)
    assert len(revision(b"", key)) == 12
    assert revision(b"a", key) != revision(b"a\n", key)
    with pytest.raises(ValueError):
        revision(data, b"")


def test_parse_frontmatter_and_keep_unknown_lines():
    text = "---\ndescription: Lina, Sam's sister\ncategory: person\n# a comment\nodd line\n---\nbody\n"
    n = parse(text)
    assert n.has_frontmatter
    assert n.meta == {"description": "Lina, Sam's sister", "category": "person"}
    assert n.front_lines == ["description: Lina, Sam's sister", "category: person", "# a comment", "odd line"]
    assert n.body == "body\n"


def test_bare_description_outside_fences_is_body():
    n = parse("description: not metadata\n\nmore\n")
    assert not n.has_frontmatter and n.meta == {}
    assert n.body.startswith("description: not metadata")
    assert summary_from_head("description: not metadata\nmore\n", True) == "description: not metadata"
    # ...and after the closing fence too
    text = "---\ncategory: x\n---\ndescription: in the body\n"
    assert parse(text).meta == {"category": "x"}
    assert summary_from_head(text, True) == "description: in the body"


def test_unclosed_fence_is_all_body():
    n = parse("---\ndescription: x\nno closing fence\n")
    assert not n.has_frontmatter and n.meta == {}


def test_quoted_values_and_crlf():
    n = parse('---\r\ndescription: "quoted: yes"\r\n---\r\nbody\r\n')
    assert n.meta["description"] == "quoted: yes"


def test_with_meta_preserves_other_lines():
    text = "---\ndescription: old\nx-custom: keep me\n# comment\n---\nbody line\n"
    out = with_meta(text, "description", "new")
    assert out == "---\ndescription: new\nx-custom: keep me\n# comment\n---\nbody line\n"
    added = with_meta("just body\n", "category", "misc")
    assert parse(added).meta == {"category": "misc"} and parse(added).body == "just body\n"
    with pytest.raises(ValueError):
        with_meta(text, "description", "two\nlines")


@pytest.mark.parametrize(
    "head,complete,expected",
    [
        ("---\ndescription: From front\n---\nBody first\n", True, "From front"),
        ("---\ncategory: x\n---\n\n\n  Body first  \nsecond\n", True, "Body first"),
        ("---\ndescription:\n---\nfallback line\n", True, "fallback line"),
        ("# Heading\ntext\n", True, "# Heading"),
        ("", True, ""),
        ("\n\n   \n", True, ""),
        # head cut inside the frontmatter: a description already seen still counts
        ("---\ndescription: early\ncategory: x\npadd", False, "early"),
        ("---\ncategory: x\npadd", False, ""),
    ],
)
def test_summary_from_head(head, complete, expected):
    assert summary_from_head(head, complete) == expected


def test_clean_line_removes_controls_and_bidi():
    assert clean_line("a\tb\x1b[31mc\u202ed\u2028e") == "a b [31mc d e"


def test_cut_marks_truncation():
    assert cut("short", 10) == "short"
    out = cut("x" * 50, 10)
    assert len(out) == 10 and out.endswith("\u2026")


def test_decode_head_drops_only_a_cut_multibyte_char():
    data = ("a" * 10 + "é").encode()
    assert decode_head(data[:-1], complete=False) == "a" * 10
    with pytest.raises(UnicodeDecodeError):
        decode_head(data[:-1], complete=True)
    with pytest.raises(UnicodeDecodeError):
        decode_head(b"ok \xff\xfe then more text here", complete=False)
    assert decode_head(b"\xef\xbb\xbfbom", complete=True) == "bom"
