"""The leak scanner: finds vault values (raw and encoded) and credential shapes in text.

Guards the boundary in both directions: memory writes carrying a secret are refused before
anyone is asked, and everything read back out (notes, tool output, transcripts, approval
requests, logs) is redacted. Findings carry the secret's *name* and a span, never the value,
and nothing here ever puts a value in a repr, a log line or an exception.

How the vault values are matched, in one pass whatever their number:
- every value is expanded into its encoded variants (raw in any case, base64 standard and
  URL-safe at all three byte alignments, of its UTF-8 and of its UTF-16LE/BE, base32 at all
  five, hex, percent-encoding, JSON / backslash escapes, HTML numeric entities, decimal and hex
  byte lists, rot13, reversed); for base64 and base32 only the characters fully determined by
  the value are kept, so the value is found inside larger encoded data such as
  base64("user:" + value) or base64(value + "\\n");
- the text is normalised once (assistant/secrets/view.py): whitespace removed (so wrapped base64
  and values split by spaces or line breaks line up), invisible characters removed (format
  characters such as U+200B, U+00AD, U+2060, and the other default-ignorables), lone control
  characters and terminal escape sequences removed, backslashes removed (so any backslash
  escaping lines up), every character NFKC-folded and dash look-alikes made "-" (fullwidth
  or hyphen-disguised values line up; non-ASCII text only) and case-folded (so hex of any
  case matches); the values' variants are folded the same way. A text from which an escape
  sequence was removed is scanned once more with only the ESC removed, so what a sequence
  carries (an OSC title) is seen too;
- one Aho-Corasick automaton (ahocorasick-rs: Rust's aho-corasick crate, a DFA for up to
  ~370 values, a contiguous NFA beyond) holds (the first 16 characters of) every variant of every value, so the
  cost is one pass over the text's UTF-8 bytes, not one search per value or per variant;
- each candidate is then verified case-sensitively where the encoding is case-sensitive, and
  its span is mapped back from the normalised view to the original text.
The shape rules (assistant/secrets/rules.py) run on the original text (and, if it has invisible
characters, lone controls or escape sequences, once more on the text without them), and only
those whose literal needles the
same automaton pass saw, plus the few rules with no needles; each regex starts with a literal
so re's fast prefix search keeps it cheap. The needles are in the automaton with or without
vault values: a note with no credential-like literal costs one automaton pass, whatever the
number of rules. This gate never drops a match: a rule matches only where one of its
needles occurs (its regex's leading literal, case-folded), and the needles are looked for in
views that only remove characters (whitespace, backslashes, invisible and control characters,
escape sequences) and fold case and non-ASCII characters (a needle is ASCII, and an ASCII
character is its own NFKC form), so a needle in the text is in the view with only ESC removed,
and one in the text without hidden characters is in the sequence-free view
(tests/secrets/test_scan_prefilter.py and test_scanner_folds_disguises.py check both).
"""

from __future__ import annotations

import base64
import bisect
import codecs
import json
import re
import urllib.parse
from dataclasses import dataclass
from typing import Iterable, Mapping

import ahocorasick_rs

from assistant.secrets.rules import RULES, Rule
from assistant.secrets.view import (  # noqa: F401  (_WS_ALL, _DROP_CHARS: the tests check the tables)
    _DROP_CHARS, _WS_ALL, View, strip, without_hidden,
)
from assistant.secrets.view import fold as view_of

VAULT_RULE = "vault"

# Encoded variants shorter than this (after whitespace removal) are not indexed: too short
# to scan for without false alarms. The vault refuses values under 8 characters anyway.
MIN_VARIANT = 6

# The automaton holds only the first KEY_PREFIX characters of each variant; a prefix hit is
# then verified against the whole variant. A shallow trie stays in cache, so 1,000 values
# cost little more than 10 (and a 16-character prefix of random data almost never recurs).
KEY_PREFIX = 16

# Automata with at most this many keys (vault variant prefixes plus rule needles) are built
# as a DFA; larger ones as a contiguous NFA (see Scanner.__init__).
DFA_MAX_KEYS = 4096

# Scanner.redact_prefix drops this many trailing non-whitespace characters of a truncated
# text: room for the longest shape token that only matches whole (a 256-character URL
# password before its "@", a 93-character fine-grained GitHub token) and for a vault value
# cut before KEY_PREFIX of its characters.
TAIL_GUARD = 320

_B64_STD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_CHARS = frozenset(_B64_STD + "-_")
# base32 -> base32hex (RFC 4648 section 7: the same bits, the alphabet 0-9A-V)
_BASE32HEX = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789ABCDEFGHIJKLMNOPQRSTUV")

# How the case-insensitive parts of an encoding are canonicalised before comparing a
# candidate with the variant ("cs": compare exactly).
_CS, _HEX, _PCT, _CI = "cs", "hex", "pct", "ci"
_PCT_ESC = re.compile(r"%[0-9A-Fa-f]{2}")


@dataclass(frozen=True)
class Finding:
    """One hit: which secret (vault name) or shape rule, and where. Never the value."""

    name: str
    rule: str
    start: int
    end: int

    def __repr__(self) -> str:
        return f"Finding(name={self.name!r}, rule={self.rule!r}, start={self.start}, end={self.end})"


@dataclass(frozen=True)
class _Variant:
    name: str
    encoding: str           # e.g. "base64-std/1": for debugging, never the value
    exact: str              # the variant, whitespace removed, case preserved
    fold: str               # how to compare: _CS, _HEX, _PCT
    ext_left: bool = False  # base64 with a partial first character: extend the span by one
    ext_right: bool = False
    lead_escape: bool = False  # the encoded form starts with a backslash escape: span covers it

    def __repr__(self) -> str:  # never the value
        return f"_Variant(name={self.name!r}, encoding={self.encoding!r})"


# The view (assistant/secrets/view.py) drops whitespace (wrapped base64, values split across
# lines or by spaces), backslashes (any backslash-escaping: JSON, shell, regex, C strings),
# invisible characters (every format character, Unicode category Cf: U+00AD soft hyphen, U+200B
# zero width space, U+2060 word joiner, bidi controls, tags, ...; and the other
# default-ignorables: variation selectors, the combining grapheme joiner, Hangul fillers), lone
# control characters and terminal escape sequences; it folds dash look-alikes to "-" and every
# character to its NFKC form. A value split or spelled by any of them is still the value.


def _casefold_same_length(s: str) -> str:
    """Lower-cased, same length, and context-free: str.lower() maps a capital sigma to "ς"
    or "σ" depending on its neighbours, which differ between a value alone and the value
    inside text (so the automaton's key missed it); both become "σ"."""
    low = s.lower()
    if len(low) != len(s):
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in s)
    return low.replace("\u03c2", "\u03c3") if "\u03c2" in low else low


def _canon(fold: str, s: str) -> str:
    if fold == _HEX:
        return s.lower()
    if fold == _CI:
        return _casefold_same_length(s)
    if fold == _PCT:
        return _PCT_ESC.sub(lambda m: m.group().upper(), s)
    return s


def _base32_variants(data: bytes) -> Iterable[tuple[str, str, bool, bool]]:
    """As _base64_variants, for base32 (5 bits a character, 5-byte groups): one stable run for
    each of the five byte alignments."""
    n = len(data)
    for a in range(5):
        enc = base64.b32encode(b"\0" * a + data).decode("ascii")
        first = -(-8 * a // 5)
        last = (8 * (a + n)) // 5
        yield f"base32/{a}", enc[first:last], (8 * a) % 5 != 0, (8 * (a + n)) % 5 != 0


def _base64_variants(data: bytes) -> Iterable[tuple[str, str, bool, bool]]:
    """(encoding, stable substring, partial-left, partial-right) for each alignment.

    The value sits at byte offset a (mod 3) inside some larger data; base64 character k
    covers bits [6k, 6k+6), and is determined by the value alone iff those bits lie in
    [8a, 8(a+n)). Those characters form one contiguous run, the same whatever surrounds it.
    """
    n = len(data)
    for a in (0, 1, 2):
        enc = base64.b64encode(b"\0" * a + data).decode("ascii")
        first = -(-8 * a // 6)
        last = (8 * (a + n)) // 6          # exclusive
        stable = enc[first:last]
        partial_left = (8 * a) % 6 != 0
        partial_right = (8 * (a + n)) % 6 != 0
        yield f"base64/{a}", stable, partial_left, partial_right
        # (the padded full encoding needs no variant of its own: it contains the a=0 run,
        # and the span is extended over the partial last character and the padding.)


def variants(name: str, value: str) -> list[_Variant]:
    """Every encoded form of one value that the scanner looks for."""
    raw = value.encode("utf-8")
    out: list[_Variant] = []

    def add(encoding: str, text: str, fold: str = _CS, left: bool = False, right: bool = False):
        exact = view_of(text)
        # The raw value is always looked for (the caller asked for it); encoded forms only
        # when long enough not to raise false alarms.
        if exact and (encoding == "raw" or len(exact) >= MIN_VARIANT):
            out.append(_Variant(name, encoding, exact, fold, left, right, text.startswith("\\")))

    add("raw", value, _CI)                # in any case: upper, lower, mixed
    # reversed and rot13 in any case too: a value readable but for its case is the value
    # (review 23: rot13 lower-cased went through)
    add("reversed", value[::-1], _CI)
    add("rot13", codecs.encode(value, "rot13"), _CI)
    for prefix, data in (("", raw), ("utf16le-", value.encode("utf-16-le", "surrogatepass")),
                         ("utf16be-", value.encode("utf-16-be", "surrogatepass"))):
        for enc, stable, left, right in _base64_variants(data):
            add(prefix + enc, stable, _CS, left, right)
            url = stable.replace("+", "-").replace("/", "_")
            if url != stable:
                add(prefix + enc + "-url", url, _CS, left, right)
    for enc, stable, left, right in _base32_variants(raw):
        add(enc, stable, _CI, left, right)  # base32 is written in either case
        add(enc.replace("base32", "base32hex"), stable.translate(_BASE32HEX), _CI, left, right)  # RFC 4648 sec. 7
    add("html-dec", "".join(f"&#{ord(c)};" for c in value))
    add("html-hex", "".join(f"&#x{ord(c):x};" for c in value), _HEX)
    # byte lists: "104, 101, 108" / "[104,101,108]" / "104 101 108" (the view drops the
    # spaces), "0x68 0x65" / "0x68, 0x65"
    add("dec-list", ",".join(str(b) for b in raw))
    add("dec-list-spaced", "".join(str(b) for b in raw))
    add("hex-list", "".join(f"0x{b:02x}" for b in raw), _HEX)
    add("hex-list-comma", ",".join(f"0x{b:02x}" for b in raw), _HEX)
    # other separators a byte list is written with (review 23): "115;107", "73:6b" (a
    # fingerprint, a MAC), "0x73;0x6b"
    add("dec-list-semicolon", ";".join(str(b) for b in raw))
    add("hex-colon", ":".join(f"{b:02x}" for b in raw), _HEX)
    add("hex-list-semicolon", ";".join(f"0x{b:02x}" for b in raw), _HEX)
    # the UTF-16 bytes as hex (review 23), as base64 of them is above
    add("utf16le-hex", value.encode("utf-16-le", "surrogatepass").hex(), _HEX)
    add("utf16be-hex", value.encode("utf-16-be", "surrogatepass").hex(), _HEX)
    add("hex", raw.hex(), _HEX)
    add("hex-escaped", "".join(f"\\x{b:02x}" for b in raw), _HEX)
    add("percent", urllib.parse.quote(value, safe=""), _PCT)
    add("percent-default", urllib.parse.quote(value), _PCT)
    add("percent-path", urllib.parse.quote(value, safe="/:@!$&'()*+,;="), _PCT)
    add("percent-js", urllib.parse.quote(value, safe="!*'()~"), _PCT)   # encodeURIComponent
    add("percent-form", urllib.parse.quote_plus(value, safe=""), _PCT)
    add("percent-all", "".join(f"%{b:02X}" for b in raw), _PCT)
    add("json", json.dumps(value)[1:-1])
    add("json-unicode", json.dumps(value, ensure_ascii=False)[1:-1])
    add("json-u-all", "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else c for c in value), _HEX)
    add("unicode-escape", value.encode("unicode_escape").decode("ascii"))
    # C / Python-bytes style: printable ASCII as is, every other UTF-8 byte as \xHH
    # (repr(value.encode()), a C string literal, a hexdump-ish log line).
    add("bytes-escape", "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02x}" for b in raw), _HEX)
    # JSON encoders that \u-escape HTML-significant characters: Go's encoding/json (<, >, &,
    # U+2028, U+2029; other characters raw) and PHP's JSON_HEX_* flags (also ' and ").
    go = json.dumps(value, ensure_ascii=False)[1:-1]
    for ch in "<>&\u2028\u2029":
        go = go.replace(ch, f"\\u{ord(ch):04x}")
    add("json-go", go, _HEX)
    php = json.dumps(value)[1:-1].replace('\\"', '"')
    for ch in "<>&'\"":
        php = php.replace(ch, f"\\u{ord(ch):04X}")
    add("json-php-hex", php, _HEX)
    # Drop duplicates (a value with nothing to escape looks the same in several encodings).
    # The first of equal forms is kept: the raw value, compared in any case, comes first.
    seen: set[str] = set()
    unique = []
    for v in out:
        key = v.exact
        if key not in seen:
            seen.add(key)
            unique.append(v)
    return unique


def _starts(auto: "ahocorasick_rs.BytesAhoCorasick", folded: str) -> list[tuple[int, int]]:
    """(key index, start in `folded`, in characters) of every occurrence of every key,
    overlapping ones included.

    The automaton runs over UTF-8 bytes ("surrogatepass": a lone surrogate in a note is
    scanned, not an error); for ASCII text byte and character offsets are the same, and
    otherwise each distinct start is converted by decoding the bytes up to it, in order, in
    one pass (a key starts with a lead byte, so every start is a character boundary)."""
    data = folded.encode("utf-8", "surrogatepass")
    hits = auto.find_matches_as_indexes(data, overlapping=True)
    if len(data) == len(folded) or not hits:
        return [(k, s) for k, s, _ in hits]
    where: dict[int, int] = {}
    b = c = 0
    for s in sorted({s for _, s, _ in hits}):
        c += len(data[b:s].decode("utf-8", "surrogatepass"))
        b = s
        where[s] = c
    return [(k, where[s]) for k, s, _ in hits]


class Scanner:
    """Vault values (plus encodings) and credential shapes -> findings / redaction."""

    def __init__(self, secrets: Mapping[str, str] | None = None, *, rules: Iterable[Rule] = RULES):
        secrets = dict(secrets or {})
        for name, value in secrets.items():
            if not isinstance(name, str) or not name:
                raise ValueError("secret names must be non-empty strings")
            if not isinstance(value, str):
                raise TypeError(f"secret {name!r}: value must be a string")
        self._names = tuple(sorted(secrets))
        self._rules = tuple(rules)
        self._always = frozenset(r for r, rule in enumerate(self._rules) if not rule.needles)
        self._variants: list[_Variant] = []
        self._auto: ahocorasick_rs.BytesAhoCorasick | None = None
        # key -> ([variant indices], [rule indices]): the vault variants' prefixes and the
        # shape rules' needles share the one automaton, so the same pass that finds vault
        # values also tells which shape rules can match at all (with no vault, the pass is
        # over the needles alone: a few milliseconds per MiB, less than the regexes it skips).
        by_key: dict[str, tuple[list[int], list[int]]] = {}
        for name in self._names:
            for v in variants(name, secrets[name]):
                idx = len(self._variants)
                self._variants.append(v)
                key = _casefold_same_length(v.exact)[:KEY_PREFIX]
                by_key.setdefault(key, ([], []))[0].append(idx)
        for r, rule in enumerate(self._rules):
            for needle in rule.needles:
                key = _casefold_same_length(strip(needle))
                if not key:
                    raise ValueError(f"rule {rule.id}: empty needle")
                by_key.setdefault(key, ([], []))[1].append(r)
        # Pattern i of the automaton is keys[i]; its payload is (length in characters,
        # variant indices, rule indices).
        self._payload: list[tuple[int, tuple[int, ...], frozenset[int]]] = []
        if by_key:
            keys = []
            for key, (idxs, ridxs) in by_key.items():
                keys.append(key.encode("utf-8", "surrogatepass"))
                self._payload.append((len(key), tuple(idxs), frozenset(ridxs)))
            # A DFA scans fastest (~5-8 ms per MiB) but costs ~15 us per key to build and
            # ~3 KiB per key of memory: used up to DFA_MAX_KEYS (~370 vault values: < 100 ms,
            # ~13 MB); past that the contiguous NFA (~11-13 ms per MiB, built ten times
            # faster, a tenth of the memory: 1,000 values build in ~25 ms, ~3 MB).
            impl = (ahocorasick_rs.Implementation.DFA if len(keys) <= DFA_MAX_KEYS
                    else ahocorasick_rs.Implementation.ContiguousNFA)
            self._auto = ahocorasick_rs.BytesAhoCorasick(
                keys, matchkind=ahocorasick_rs.MatchKind.Standard, implementation=impl)

    def __repr__(self) -> str:
        return f"Scanner(secrets={len(self._names)}, variants={len(self._variants)}, rules={len(self._rules)})"

    @property
    def secret_names(self) -> tuple[str, ...]:
        return self._names

    # -- matching ---------------------------------------------------------------------

    def _scan(self, text: str, truncated: bool = False) -> tuple[list[Finding], set[int] | None]:
        """(vault findings, indices of the shape rules whose needles occur; None = all).

        `truncated`: the text is the beginning of a longer one, so a variant whose indexed
        prefix is present but which runs past the end counts as a hit up to the end."""
        if self._auto is None:
            return [], None
        views = View.views(text)
        if len(views) == 1:
            return self._scan_view(views[0], truncated)
        # An escape sequence was removed: scan once more with only the ESC removed, so a value
        # inside a sequence (an OSC window title, CSI parameters) is seen too, and every
        # needle of the text itself is in one of the two views (the prefilter's guarantee);
        # and, after a two-byte ESC form, without CSI sequences alone (View.views)
        found: list[Finding] = []
        active: set[int] = set()
        for view in views:
            more, more_active = self._scan_view(view, truncated)
            found += more
            active |= more_active
        return found, active

    def _scan_view(self, view: View, truncated: bool) -> tuple[list[Finding], set[int]]:
        text, norm = view.text, view.norm
        folded = _casefold_same_length(norm)
        raw_hits: list[tuple[int, int, _Variant]] = []
        variants_ = self._variants
        active: set[int] = set()
        payload = self._payload
        for k, start in _starts(self._auto, folded):
            length, idxs, ridxs = payload[k]
            if ridxs:
                active |= ridxs
                if not idxs:
                    continue
            for i in idxs:
                v = variants_[i]
                end = start + len(v.exact)
                seg = norm[start:end]
                ref = v.exact
                if truncated and end > len(norm):
                    ref, end = ref[: len(seg)], len(norm)
                if v.fold == _CS:
                    ok = seg == ref
                else:
                    ok = _canon(v.fold, seg) == _canon(v.fold, ref)
                if ok:
                    raw_hits.append((start, end, v))
        if not raw_hits:
            return [], active
        raw_hits.sort(key=lambda h: (h[0], h[1]))
        # Overlapping hits of the same variant become one span (find() would merge them
        # anyway): a value like "aaaa..." in a run of "a"s is one hit, not one per offset.
        merged: list[tuple[int, int, _Variant]] = []
        open_: dict[int, int] = {}      # id(variant) -> index in merged of its latest span
        for start, end, v in raw_hits:
            k = open_.get(id(v))
            if k is not None and start < merged[k][1]:
                if end > merged[k][1]:
                    merged[k] = (merged[k][0], end, v)
                continue
            open_[id(v)] = len(merged)
            merged.append((start, end, v))
        raw_hits = merged
        # Map each span back to the original text: starts and (inclusive) ends together, in
        # one ordered walk.
        starts, ends = view.spans([h[0] for h in raw_hits], [h[1] - 1 for h in raw_hits])
        found: list[Finding] = []
        for (_, _, v), s, e in zip(raw_hits, starts, ends):
            if v.ext_left and s > 0 and text[s - 1] in _B64_CHARS:
                s -= 1
            if v.lead_escape:   # the escape's backslash(es) before the first kept character
                while s > 0 and text[s - 1] == "\\":
                    s -= 1
            if v.ext_right:
                if e < len(text) and text[e] in _B64_CHARS:
                    e += 1
            if "base64" in v.encoding or "base32" in v.encoding:   # (base32hex too)
                while e < len(text) and text[e] == "=":
                    e += 1
            found.append(Finding(v.name, VAULT_RULE, s, e))
        return found, active

    def _shape_findings(self, text: str, active: set[int] | None = None) -> list[Finding]:
        # Each regex starts with a literal (re's fast prefix search keeps it ~0.5 ms/MiB),
        # and only rules whose needles the automaton pass saw are run at all.
        # (A rule without needles has no literal to gate it by, and always runs.)
        rules = self._rules if active is None else [self._rules[i] for i in sorted(active | self._always)]
        found = self._run_rules(rules, text)
        # A token split by invisible characters (U+200B, U+00AD, U+2060, ...), lone control
        # characters or escape sequences is still the token: the rules run again over the
        # text without them, spans mapped back.
        view = without_hidden(text)
        if view is not None:
            clean, where = view
            for f in self._run_rules(rules, clean):
                start = f.start + bisect.bisect_right(where, f.start)
                end = f.end - 1 + bisect.bisect_right(where, f.end - 1) + 1
                found.append(Finding(f.name, f.rule, start, end))
        return found

    @staticmethod
    def _run_rules(rules, text: str) -> list[Finding]:
        lowered = None
        if any(rule.on_lower for rule in rules):
            lowered = _casefold_same_length(text)
        found: list[Finding] = []
        for rule in rules:
            for s, e in rule.spans(text, lowered):
                found.append(Finding(rule.id, rule.id, s, e))
        return found

    def find(self, text: str, *, truncated: bool = False) -> list[Finding]:
        """All hits, sorted by position; overlapping hits of the same secret/rule are merged.

        `truncated`: `text` is the beginning of a longer text; a vault value cut by its end
        (at least KEY_PREFIX characters of an encoded form present) is a hit up to the end."""
        if not isinstance(text, str):
            raise TypeError("Scanner.find expects str")
        vault_hits, active = self._scan(text, truncated)
        hits = vault_hits + self._shape_findings(text, active)
        hits.sort(key=lambda f: (f.start, -f.end, f.rule != VAULT_RULE, f.name))
        last: dict[tuple[str, str], int] = {}   # (name, rule) -> index in out of its latest span
        out: list[Finding] = []
        for f in hits:
            key = (f.name, f.rule)
            i = last.get(key)
            if i is not None and f.start < out[i].end:
                if f.end > out[i].end:
                    prev = out[i]
                    out[i] = Finding(prev.name, prev.rule, prev.start, f.end)
                continue
            last[key] = len(out)
            out.append(f)
        out.sort(key=lambda f: (f.start, -f.end, f.rule != VAULT_RULE, f.name))
        return out

    def redact(self, text: str) -> str:
        """`text` with each hit replaced by "[redacted:NAME]"; overlapping hits replaced once.

        A run of overlapping hits becomes one label: the vault name if a vault value is in
        it (the most specific), else the first rule.
        """
        hits = self.find(text)
        if not hits:
            return text
        return self._render(text, hits, len(text))

    def redact_record(self, text: str) -> str:
        """`redact(text)` for a record kept for the person (a transcript, an audit line), where
        the text may be a path: a vault value split across its folder names ("ab-/cd") is the
        value once the separators are taken out (the gated writer scans paths that way), so
        then the whole text is one marker."""
        if "/" in text:
            names = [f.name for f in self.find(text.replace("/", "")) if f.rule == VAULT_RULE]
            if names:
                return marker(names[0])
        return self.redact(text)

    def redact_prefix(self, text: str, marker: str = "\u2026") -> str:
        """Redact `text`, the beginning of a longer text (a note's head, output cut at a limit).

        Truncation must not turn a secret into an unrecognisable part of one: a vault value
        cut by the end is redacted (`find(truncated=True)`), and the last TAIL_GUARD
        non-whitespace characters, where the start of a shorter cut value or token cannot be
        told from ordinary text, are replaced by `marker`. Cut text before redacting it only
        through this method.
        """
        hits = self.find(text, truncated=True)
        view = View.views(text)[0]   # sequences removed: the fewest kept characters
        kept = len(view.norm)
        cut = 0 if kept <= TAIL_GUARD else view.start_of(kept - TAIL_GUARD)
        return self._render(text, hits, cut) + marker

    def _render(self, text: str, hits: list[Finding], cut: int) -> str:
        """`text[:cut]` with the hits replaced by labels; a hit running past `cut` ends it."""
        parts: list[str] = []
        pos = 0
        for start, end, label in _with_introducers(text, _spans(hits, cut)):
            parts.append(text[pos:start])
            parts.append(marker(label))
            pos = end
        parts.append(text[pos:cut])
        return "".join(parts)

    def redaction_spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, label) of each span `redact(text)` replaces, in order: what stands behind
        each "[redacted:LABEL]" (the person's editor puts the values back from these)."""
        return _with_introducers(text, _spans(self.find(text), len(text)))

    def names_found(self, text: str) -> list[str]:
        """Distinct secret names / rule ids present in `text`, in order of first appearance."""
        return list(dict.fromkeys(f.name for f in self.find(text)))


MARKER_RE = re.compile(r"\[redacted:[^\]\n]{1,200}\]")


def marker(label: str) -> str:
    """The text a redacted span is shown as."""
    return f"[redacted:{label}]"


# an escape sequence's introducer with nothing after it yet: ESC (with intermediates) or 8-bit CSI
_DANGLING_INTRODUCER = re.compile(r"(?:\x1b[\x20-\x2f]*|\x9b)\Z")


def _with_introducers(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Each span takes in an escape introducer right before it (`ESC Zq7...`: the terminal reads
    ESC and the value's first letter as one sequence): left in place it would join the marker's
    "[" into an escape sequence that was not in the text (review 2026-12-01)."""
    out: list[tuple[int, int, str]] = []
    floor = 0
    for start, end, label in spans:
        m = _DANGLING_INTRODUCER.search(text, max(floor, start - 8), start)
        out.append((m.start() if m else start, end, label))
        floor = end
    return out


def _spans(hits: list[Finding], cut: int) -> list[tuple[int, int, str]]:
    """Overlapping hits merged into one span each, labelled with the vault name if a vault
    value is in it (the most specific), else the first rule; spans start before `cut`."""
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(hits):
        start, end = hits[i].start, hits[i].end
        if start >= cut:
            break
        label = hits[i].name if hits[i].rule == VAULT_RULE else None
        first_rule = hits[i].name
        j = i + 1
        while j < len(hits) and hits[j].start < end:
            end = max(end, hits[j].end)
            if label is None and hits[j].rule == VAULT_RULE:
                label = hits[j].name
            j += 1
        out.append((start, end, label or first_rule))
        i = j
    return out


__all__ = ["Finding", "MARKER_RE", "Scanner", "VAULT_RULE", "marker", "variants"]
