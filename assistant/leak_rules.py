"""Credential-shape rules for the leak scanner: what a live token looks like, by published format.

Guards against secrets that were never put in the vault (a pasted AWS key, a bearer token in a
curl line, a private key block). Each rule is a regex written from the issuer's documented
token format and starting with a literal (so re searches for it fast), the lowercase
`needles` every match contains (documentation, checked by the tests), an optional
`group` naming the part of the match that is the secret (so "Authorization: Bearer" stays
readable after redaction), and an optional `check` that rejects look-alikes (placeholders,
kebab-case words).

Rule ids are stable: they appear in refusals and in "[redacted:RULE]" labels.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator

# Characters that may not touch a token on either side: a token embedded in a longer
# identifier-like run is not that token.
_T = r"[A-Za-z0-9_\-]"
_E = r"(?!" + _T + r")"


def _tok(prefix: str, rest: str, before: str = _T) -> re.Pattern[str]:
    """A token regex: `prefix` (fixed width) not preceded by a `before` character, then `rest`.

    The boundary is a lookbehind placed *after* the prefix: re still searches for the
    literal prefix fast, and a start inside a longer run (e.g. the 1,000th "eyJ" of
    "eyJeyJeyJ...") is rejected in O(1) instead of rescanning the run from every start,
    which made such input quadratic.
    """
    return re.compile(prefix + r"(?<!" + before + prefix + r")" + rest)


@dataclass(frozen=True)
class Rule:
    id: str
    pattern: re.Pattern[str]
    needles: tuple[str, ...]
    group: str | int = 0
    check: Callable[[str], bool] | None = None
    finder: Callable[["Rule", str], Iterator[tuple[int, int]]] | None = field(default=None)
    # Run the (lowercase) pattern over the case-folded text: a case-insensitive rule that
    # still gets re's fast literal-prefix search.
    on_lower: bool = False
    # The character just before the match must match this (e.g. a URL scheme before "://").
    left_required: re.Pattern[str] | None = None

    def spans(self, text: str, lowered: str | None = None) -> Iterator[tuple[int, int]]:
        """(start, end) of each secret this rule sees in `text`.

        `lowered` is `text` case-folded with the same length (computed once by the caller).
        """
        if self.finder is not None:
            yield from self.finder(self, text)
            return
        haystack = text
        if self.on_lower:
            haystack = lowered if lowered is not None else text.lower()
            if len(haystack) != len(text):
                haystack = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
        for m in self.pattern.finditer(haystack):
            start, end = m.span(self.group)
            if start < 0 or end <= start:
                continue
            if self.left_required is not None and (
                m.start() == 0 or not self.left_required.match(text, m.start() - 1)
            ):
                continue
            if self.check is not None and not self.check(text[start:end]):
                continue
            yield start, end


def _not_words(token: str) -> bool:
    """Reject kebab/snake-case word runs ("sk-some-config-name-...") that merely share a prefix."""
    body = token.split("-", 1)[-1]
    return not re.fullmatch(r"[a-z_\-]+", body)


_PLACEHOLDER = re.compile(
    r"""^(?:
        \$\{?[A-Za-z_][A-Za-z0-9_]*\}?      # $VAR / ${VAR}
      | \{\{.*\}\}                          # {{ template }}
      | <[^>]*>                             # <password>
      | \*+ | x+ | X+ | \.\.\.+             # ****, xxxx, ...
      | %\(?[A-Za-z_]*\)?s                  # %s / %(pw)s
    )$""",
    re.X,
)


def _not_placeholder(value: str) -> bool:
    return not _PLACEHOLDER.match(value)


# PEM / OpenSSH private key blocks: from the BEGIN line to the matching END line; a block
# with no END line runs to the end of its base64 body (a truncated paste is still a leak).
_PEM_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]{1,16} ){0,3})PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY_LINE = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+:[^\n]*)[ \t]*\r?(?:\n|$)")
_PEM_END = re.compile(r"-----END ((?:[A-Z0-9]{1,16} ){0,3})PRIVATE KEY(?: BLOCK)?-----")
_PEM_MAX = 64 * 1024


def _pem_finder(rule: Rule, text: str) -> Iterator[tuple[int, int]]:
    # Linear whatever the input: the END lines are found in one pass (indexed by kind, then
    # looked up by bisection), and nothing copies the text before a match. Searching for
    # each kind's END line separately, or slicing text[:end], made a MiB of distinct (or
    # unterminated) BEGIN lines cost tens of seconds.
    pos = 0
    ends: dict[str, list[tuple[int, int]]] | None = None   # kind -> [(start, end)] in order
    while True:
        m = _PEM_BEGIN.search(text, pos)
        if m is None:
            return
        if ends is None:
            ends = {}
            for e in _PEM_END.finditer(text, m.end()):
                ends.setdefault(e.group(1), []).append((e.start(), e.end()))
        found = ends.get(m.group(1), ())
        i = bisect.bisect_left(found, (m.end(), -1))
        if i < len(found) and found[i][0] - m.end() <= _PEM_MAX:
            end = found[i][1]
        else:
            end = m.end()
            if end < len(text) and text[end] == "\r":
                end += 1
            if end < len(text) and text[end] == "\n":
                end += 1
            while end < len(text):
                b = _PEM_BODY_LINE.match(text, end)
                if b is None or b.end() == end:
                    break
                end = b.end()
            end = m.end() + len(text[m.end():end].rstrip())
        yield m.start(), end
        pos = max(end, m.end())


def _r(p: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(p, flags)


RULES: tuple[Rule, ...] = (
    # AWS access key ids: a 4-letter type prefix (AKIA long-term, ASIA temporary STS) + 16.
    Rule("aws-access-key", _tok("A(?:KIA|SIA)", r"[A-Z0-9]{16}+(?![A-Za-z0-9])", "[A-Za-z0-9]"),
         ("akia", "asia")),
    # AWS secret access keys have no prefix: only caught next to their usual name.
    Rule("aws-secret-key",
         _r(r"aws_?secret_?(?:access_?)?key[\"']?\s*+[:=]\s*+[\"']?(?P<secret>[a-z0-9/+]{40})"
            r"(?![a-z0-9/+])"),
         ("aws_secret", "awssecret"), group="secret", on_lower=True),
    # GitHub: classic ghp_/gho_/ghu_/ghs_/ghr_ + 36 base62 (server tokens may be longer);
    # fine-grained PATs github_pat_ + 22 + "_" + 59.
    Rule("github-token", _tok("gh[pousr]_", r"[A-Za-z0-9]{36,251}+" + _E),
         ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    # (fine-grained: 22 + "_" + 59 today, but any long base62/underscore run after the
    # prefix is taken: the prefix alone is specific, and the split is not a promise.)
    Rule("github-token", _tok("github_pat_", r"[A-Za-z0-9_]{30,251}+" + _E),
         ("github_pat_",)),
    # Anthropic: sk-ant-<kind><2-digit version>-<long base64url body>.
    Rule("anthropic-api-key", _tok("sk-ant-", r"[a-z]++[0-9]{2}-[A-Za-z0-9_\-]{32,}+" + _E),
         ("sk-ant-",)),
    # OpenAI: sk-proj-/sk-svcacct-/sk-admin- + long base64url body, or legacy sk- + 48
    # (legacy keys carry "T3BlbkFJ", base64 of "OpenAI").
    Rule("openai-api-key",
         _tok("sk-", r"(?!ant-)(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_\-]{32,}+" + _E),
         ("sk-",), check=_not_words),
    # Slack: bot/user/app/refresh/config tokens xox[abprse]-..., and incoming webhooks.
    # Possessive quantifiers: the numeric groups and the tail never backtrack into each
    # other (which made "xoxb-" + "12345678-" * n quadratic).
    Rule("slack-token",
         _tok("xox[abprse]-", r"(?:[0-9]++-)*+[A-Za-z0-9]{8,}+(?:-[A-Za-z0-9]++)*+" + _E),
         ("xox",)),
    Rule("slack-token",
         _tok("xapp-", r"[0-9]++-[A-Za-z0-9]++-[0-9]++-[A-Za-z0-9]{20,}+" + _E), ("xapp-",)),
    Rule("slack-webhook",
         _r(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{20,}+"),
         ("hooks.slack.com",)),
    # Stripe secret and restricted keys, live and test.
    Rule("stripe-key", _tok("sk_(?:live|test)_", r"[A-Za-z0-9]{16,247}+" + _E),
         ("sk_live_", "sk_test_")),
    Rule("stripe-key", _tok("rk_(?:live|test)_", r"[A-Za-z0-9]{16,247}+" + _E),
         ("rk_live_", "rk_test_")),
    # Google API keys: AIza + 35 base64url characters.
    Rule("google-api-key", _tok("AIza", r"[0-9A-Za-z_\-]{35}" + _E), ("aiza",)),
    # JWT (JWS compact): base64url of '{"' is "eyJ" for header and payload, then a signature.
    Rule("jwt", _tok("eyJ", r"[A-Za-z0-9_\-]{8,}+\.eyJ[A-Za-z0-9_\-]{8,}+\.[A-Za-z0-9_\-]*+" + _E),
         ("eyj",)),
    # PEM (RSA/EC/DSA/PKCS#8/ENCRYPTED) and OpenSSH private-key blocks.
    Rule("private-key", _PEM_BEGIN, ("private key",), finder=_pem_finder),
    # HTTP Authorization / Proxy-Authorization values: the credential part only, so the
    # header name and scheme stay readable after redaction. Matched on the folded text.
    Rule("authorization-header",
         _r(r"authorization[\"']?\s*+[:=]\s*+[\"']?(?:bearer|basic|token|digest)\s++"
            r"(?P<secret>[a-z0-9._~+/\-]{8,}+=*+)"),
         ("authorization",), group="secret", check=_not_placeholder, on_lower=True),
    # URLs carrying user:password@ (the password part only). Starts at the literal "://"
    # for speed; a scheme must precede it (`left_required`).
    Rule("url-password",
         _r(r"://[^\s:/?#@\[\]\"'<>]*+:(?P<secret>[^\s/?#@\"'<>]{1,256})@[A-Za-z0-9\[]"),
         ("://",), group="secret", check=_not_placeholder,
         left_required=re.compile(r"[A-Za-z0-9]")),
    # Hugging Face user access tokens: hf_ + 34 letters.
    Rule("huggingface-token", _tok("hf_", r"[A-Za-z0-9]{34,}+" + _E), ("hf_",)),
    # age X25519 identities: AGE-SECRET-KEY-1 + Bech32 data.
    Rule("age-secret-key", _tok("AGE-SECRET-KEY-1", r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}" + _E),
         ("age-secret-key-1",)),
)

RULE_IDS: tuple[str, ...] = tuple(dict.fromkeys(r.id for r in RULES))
