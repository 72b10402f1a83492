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

import re
from dataclasses import dataclass, field
from typing import Callable, Iterator

# Characters that may not touch a token on either side: a token embedded in a longer
# identifier-like run is not that token.
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-]")
_E = r"(?![A-Za-z0-9_\-])"


@dataclass(frozen=True)
class Rule:
    id: str
    pattern: re.Pattern[str]
    needles: tuple[str, ...]
    group: str | int = 0
    check: Callable[[str], bool] | None = None
    finder: Callable[["Rule", str], Iterator[tuple[int, int]]] | None = field(default=None)
    # The regex starts with a literal (so re can search for it fast); the "nothing
    # token-like just before" condition is checked here instead of by a leading lookbehind.
    left_boundary: bool = False
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
            if self.left_boundary and m.start() > 0 and _TOKEN_CHAR.match(text, m.start() - 1):
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
_PEM_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY_LINE = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+:[^\n]*)[ \t]*\r?(?:\n|$)")
_PEM_MAX = 64 * 1024


def _pem_finder(rule: Rule, text: str) -> Iterator[tuple[int, int]]:
    pos = 0
    while True:
        m = _PEM_BEGIN.search(text, pos)
        if m is None:
            return
        end_marker = re.compile(
            r"-----END " + re.escape(m.group(1)) + r"PRIVATE KEY(?: BLOCK)?-----"
        )
        e = end_marker.search(text, m.end(), min(len(text), m.end() + _PEM_MAX))
        if e is not None:
            end = e.end()
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
            end = len(text[:end].rstrip())
        yield m.start(), end
        pos = end


def _r(p: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(p, flags)


RULES: tuple[Rule, ...] = (
    # AWS access key ids: a 4-letter type prefix (AKIA long-term, ASIA temporary STS) + 16.
    Rule("aws-access-key", _r(r"A(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
         ("akia", "asia"), left_boundary=True),
    # GitHub: classic ghp_/gho_/ghu_/ghs_/ghr_ + 36 base62 (server tokens may be longer);
    # fine-grained PATs github_pat_ + 22 + "_" + 59.
    Rule("github-token", _r(r"gh[pousr]_[A-Za-z0-9]{36,251}" + _E),
         ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), left_boundary=True),
    Rule("github-token", _r(r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}" + _E),
         ("github_pat_",), left_boundary=True),
    # Anthropic: sk-ant-<kind><2-digit version>-<long base64url body>.
    Rule("anthropic-api-key", _r(r"sk-ant-[a-z]+[0-9]{2}-[A-Za-z0-9_\-]{32,}" + _E),
         ("sk-ant-",), left_boundary=True),
    # OpenAI: sk-proj-/sk-svcacct-/sk-admin- + long base64url body, or legacy sk- + 48
    # (legacy keys carry "T3BlbkFJ", base64 of "OpenAI").
    Rule("openai-api-key",
         _r(r"sk-(?!ant-)(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_\-]{32,}" + _E),
         ("sk-",), left_boundary=True, check=_not_words),
    # Slack: bot/user/app/refresh/config tokens xox[abprse]-..., and incoming webhooks.
    Rule("slack-token",
         _r(r"xox[abprse]-(?:[0-9]+-)*[A-Za-z0-9]{8,}(?:-[A-Za-z0-9]+)*" + _E),
         ("xox",), left_boundary=True),
    Rule("slack-webhook",
         _r(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{20,}"),
         ("hooks.slack.com",)),
    # Stripe secret and restricted keys, live and test.
    Rule("stripe-key", _r(r"sk_(?:live|test)_[A-Za-z0-9]{16,247}" + _E),
         ("sk_live_", "sk_test_"), left_boundary=True),
    Rule("stripe-key", _r(r"rk_(?:live|test)_[A-Za-z0-9]{16,247}" + _E),
         ("rk_live_", "rk_test_"), left_boundary=True),
    # Google API keys: AIza + 35 base64url characters.
    Rule("google-api-key", _r(r"AIza[0-9A-Za-z_\-]{35}" + _E), ("aiza",), left_boundary=True),
    # JWT (JWS compact): base64url of '{"' is "eyJ" for header and payload, then a signature.
    Rule("jwt", _r(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*" + _E),
         ("eyj",), left_boundary=True),
    # PEM (RSA/EC/DSA/PKCS#8/ENCRYPTED) and OpenSSH private-key blocks.
    Rule("private-key", _PEM_BEGIN, ("private key",), finder=_pem_finder),
    # HTTP Authorization / Proxy-Authorization values: the credential part only, so the
    # header name and scheme stay readable after redaction. Matched on the folded text.
    Rule("authorization-header",
         _r(r"authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+"
            r"(?P<secret>[a-z0-9._~+/\-]{8,}=*)"),
         ("authorization",), group="secret", check=_not_placeholder, on_lower=True),
    # URLs carrying user:password@ (the password part only). Starts at the literal "://"
    # for speed; a scheme must precede it (`left_required`).
    Rule("url-password",
         _r(r"://[^\s:/?#@\[\]\"'<>]*:(?P<secret>[^\s/?#@\"'<>]{1,256})@[A-Za-z0-9\[]"),
         ("://",), group="secret", check=_not_placeholder,
         left_required=re.compile(r"[A-Za-z0-9]")),
    # Hugging Face user access tokens: hf_ + 34 letters.
    Rule("huggingface-token", _r(r"hf_[A-Za-z0-9]{34,}" + _E), ("hf_",), left_boundary=True),
    # age X25519 identities: AGE-SECRET-KEY-1 + Bech32 data.
    Rule("age-secret-key", _r(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}" + _E),
         ("age-secret-key-1",), left_boundary=True),
)

RULE_IDS: tuple[str, ...] = tuple(dict.fromkeys(r.id for r in RULES))
