"""Credential-shape rules for the leak scanner: what a live token looks like, by published format.

Guards against secrets that were never put in the vault (a pasted AWS key, a bearer token in a
curl line, a private key block). Each rule is a regex written from the issuer's documented
token format and starting with a literal (so re searches for it fast), the lowercase
`needles` every match contains (documentation, checked by the tests), an optional
`group` naming the part of the match that is the secret (so "Authorization: Bearer" stays
readable after redaction), and an optional `check` that rejects look-alikes (placeholders,
kebab-case words). A rule with no needles (no usable literal) always runs.

Not findings, for every rule but PEM blocks (`is_dummy`): placeholders, runs of one
character, documented example values (AWS's ...EXAMPLE keys; others by sha256 digest).

Rule ids are stable: they appear in refusals and in "[redacted:RULE]" labels.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
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

    A boundary character that is the letter of a backslash escape (`\\n`, `\\t` in JSON or a
    C string: a line break as text) does not glue: a token starting a line of escaped text is
    a token.
    """
    return re.compile(prefix + r"(?<!(?<!\\)" + before + prefix + r")" + rest)


def _glued(text: str, i: int) -> bool:
    """Does the character before `text[i]` glue it to a longer identifier? Not when it is the
    letter of a backslash escape (`\\n`: a line break in JSON-escaped text)."""
    return i > 0 and text[i - 1] in _TOKEN_CHARS and not (i >= 2 and text[i - 2] == "\\")


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
    # Placeholders, runs of one character and documented example values are not findings.
    # Off only for rules whose span is not a token (a PEM block).
    real_only: bool = True

    def spans(self, text: str, lowered: str | None = None) -> Iterator[tuple[int, int]]:
        """(start, end) of each secret this rule sees in `text`.

        `lowered` is `text` case-folded with the same length (computed once by the caller).
        """
        if self.finder is not None:
            for start, end in self.finder(self, text):
                if not self.real_only or not is_dummy(text[start:end]):
                    yield start, end
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
            if self.real_only and is_dummy(text[start:end]):
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


# -- what is not a live credential -------------------------------------------------------
# Documented example values, by sha256 of the exact token (so the repository does not carry
# them verbatim): GitHub's docs PAT, Stripe's docs test keys, jwt.io's sample token, Slack's
# docs bot token, Telegram's Bot API docs token. AWS's documented keys all carry "EXAMPLE".
DOCUMENTED_EXAMPLES = frozenset({
    "3543c50b0cb9cea8e55eb1f529b79f043cb250d485fde7b66cabbb5183add7da",
    "2cafc0970149a84f3b9e62eaf169f36f59907a3b3e31f7b82e68c69cd27f7326",
    "f2d6ca16515033e5dce14eba840b979d27b5cbae24bb3e5bf484339667f86397",
    "7f75367e7881255134e1375e723d1dea8ad5f6a4fdb79d938df1f1754a830606",
    "2ddc147f3a3b5a1722b8ed6be3c45c49a7156b17fca5d11410137a6d04def6eb",
    "0b5dd075ccdd03c42f4edda8e299e6838e2a75d3486a2a8d86940ed1541e9178",
})
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
_SAME_RUN = re.compile(r"([A-Za-z0-9])\1{7}")      # eight of one character in a row
# A single-case run of letters mostly spelling placeholder words ("xoxp-1-RANDOMSTRINGHERE",
# "YOURKEYHERE"); a random token's long single-case runs are rare and almost never words.
_ONE_CASE_RUN = re.compile(r"[A-Z]{8,}|[a-z]{8,}")
_PLACEHOLDER_WORD = re.compile(r"your|here|random|string|placeholder|replace|insert|dummy|fake|sample"
                               r"|redacted|changeme|token|secret|key|api|my|the")


def _sequence_share(alnum: str) -> float:
    """The share of `alnum` in runs of three or more consecutive characters (`abc123xyz` is 1.0)."""
    covered = [False] * len(alnum)
    for i in range(len(alnum) - 2):
        if ord(alnum[i + 1]) - ord(alnum[i]) == 1 and ord(alnum[i + 2]) - ord(alnum[i + 1]) == 1:
            covered[i] = covered[i + 1] = covered[i + 2] = True
    return sum(covered) / len(alnum) if alnum else 0.0


def is_dummy(token: str) -> bool:
    """A placeholder or a documented example, not a credential: `ghp_` + 36 x,
    `xoxb-xxxxxxxxx-...`, `AKIAXXXXXXXXXXXXXXXX`, `AKIA...EXAMPLE`, `sk_test_` + a run of
    one character, `abcdef...`/`123456...` sequences, and the issuers' documented examples.

    Also the placeholders that gitleaks' and detect-secrets' suites count as false alarms: a
    single-case run of letters spelling a placeholder word (`xoxp-1-RANDOMSTRINGHERE`), and a
    token mostly built of runs like `abc`, `123`, `xyz` (`sk-ant-api03-abc123xyz-456def...`).

    A random token of the lengths these rules take has, with overwhelming probability, no
    run of eight equal characters, more than two distinct characters in its last 16, no
    mostly-ascending tail, no placeholder word in a long single-case run of letters, under
    two thirds of it in consecutive runs, and no "EXAMPLE" in it."""
    if "EXAMPLE" in token:
        return True
    if hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest() in DOCUMENTED_EXAMPLES:
        return True
    if _SAME_RUN.search(token):
        return True
    alnum = "".join(_ALNUM_RUN.findall(token))
    tail = alnum[-16:]
    if len(tail) >= 8 and len(set(tail)) <= 2:
        return True
    if len(tail) >= 12:
        steps = sum(1 for a, b in zip(tail, tail[1:]) if ord(b) - ord(a) == 1)
        if steps >= len(tail) * 2 // 3:
            return True
    for run in _ONE_CASE_RUN.findall(token if len(token) < 4096 else ""):
        words = sum(len(w) for w in _PLACEHOLDER_WORD.findall(run.lower()))
        # three quarters of the run placeholder words, and the run most of the token (a real
        # token with "-YOURTOKENHERE" glued on is still a token)
        if words * 4 >= len(run) * 3 and len(run) * 2 >= len(alnum):
            return True
    if 12 <= len(alnum) < 4096 and _sequence_share(alnum) >= 2 / 3:
        return True
    return False


def _slack_real(token: str) -> bool:
    """A Slack token ends in a random segment with letters in it: `xoxp-1234567890` (digits
    only after the prefix) is a placeholder."""
    return any(c.isalpha() for c in token[5:])


def _credential_like(value: str) -> bool:
    """An opaque credential, not a word: has a digit or mixes cases (YOUR_API_KEY, `required`,
    `implemented` are words), and is no placeholder."""
    if not _not_placeholder(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return has_digit or mixed


_EXAMPLE_PASSWORDS = frozenset({
    "password", "passwd", "pass", "pwd", "pw", "secret", "yourpassword", "your_password",
    "mypassword", "my_password", "changeme", "pass123", "password123", "token", "apikey",
})


def _real_password(value: str) -> bool:
    return _not_placeholder(value) and value.lower().strip("'\"") not in _EXAMPLE_PASSWORDS


_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


# Slack incoming webhooks, with or without their scheme: the search starts at the host (a
# literal, so it is fast) and the span grows left over "https://" / "http://" / "//".
_SLACK_HOOK = re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{20,}+")
_SCHEME_LEFT = ("https://", "http://", "//")


def _url_finder(rule: "Rule", text: str) -> Iterator[tuple[int, int]]:
    """A secret URL found from its host on: the span grows left over its scheme, if any; a
    host glued to a longer name (evilhooks.slack.com) is not that host."""
    for m in rule.pattern.finditer(text):
        start = m.start()
        if _glued(text, start) or (start and text[start - 1] == "."):
            continue
        for scheme in _SCHEME_LEFT:
            if start >= len(scheme) and text.startswith(scheme, start - len(scheme)):
                start -= len(scheme)
                break
        yield start, m.end()


# Telegram bot tokens: <bot id, 5-16 digits>:AA<33 base64url>. The search starts at the
# literal ":AA"; the digits are then checked leftwards.
_TELEGRAM = re.compile(r":AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])")
_DIGITS = frozenset("0123456789")


def _telegram_finder(rule: "Rule", text: str) -> Iterator[tuple[int, int]]:
    for m in _TELEGRAM.finditer(text):
        i = m.start()
        j = i
        while j > 0 and i - j < 17 and text[j - 1] in _DIGITS and not (j >= 2 and text[j - 2] == "\\"):
            j -= 1
        if 5 <= i - j <= 16 and not _glued(text, j):
            yield j, m.end()


# Discord bot tokens: base64(user id) . base64(timestamp, 6) . HMAC (27-38). No literal
# prefix: the search starts at the ".xxxxxx." in the middle; the id part is checked leftwards.
_DISCORD_MID = re.compile(r"\.[A-Za-z0-9_\-]{6}\.")
_DISCORD_TAIL = re.compile(r"[A-Za-z0-9_\-]{27,38}(?![A-Za-z0-9_\-])")


def _discord_finder(rule: "Rule", text: str) -> Iterator[tuple[int, int]]:
    for m in _DISCORD_MID.finditer(text):
        tail = _DISCORD_TAIL.match(text, m.end())
        if tail is None:
            continue
        s = m.start()
        j = s
        while j > 0 and s - j < 27 and text[j - 1] in _TOKEN_CHARS and not (j >= 2 and text[j - 2] == "\\"):
            j -= 1
        if 24 <= s - j <= 26 and text[j] in "MNO" and not _glued(text, j) \
                and _is_b64_of_digits(text[j:s]):
            yield j, tail.end()


def _is_b64_of_digits(part: str) -> bool:
    """Is `part` base64url of a decimal user id (17-20 digits)? A dotted identifier such as
    NetworkManagerConnection.config.xyz... has the shape but decodes to bytes, not digits."""
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (ValueError, binascii.Error):
        return False
    return 17 <= len(raw) <= 20 and raw.isdigit()


# curl's -u / --user USER:PASSWORD (the password part), only on a line that runs curl.
_CURL_USER = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:-u|--user)(?:[ \t]++|=)?[\"']?[^\s:\"'@]{0,128}:(?P<secret>[^\s\"']{1,256})")


def _curl_user_finder(rule: "Rule", text: str) -> Iterator[tuple[int, int]]:
    # Line by line from each "curl": the searches only move forward, so a long line full
    # of "-u a:" costs one pass, not one look back per flag.
    pos = 0
    while True:
        at = text.find("curl", pos)
        if at < 0:
            return
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        for m in _CURL_USER.finditer(text, at, end):
            if _real_password(m.group("secret")):
                yield m.span("secret")
        pos = end


# PEM / OpenSSH private key blocks: from the BEGIN line to the matching END line; a block
# with no END line runs to the end of its base64 body (a truncated paste is still a leak).
_PEM_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]{1,16} ){0,3})PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY_LINE = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+:[^\n]*)[ \t]*\r?(?:\n|$)")
_PEM_END = re.compile(r"-----END ((?:[A-Z0-9]{1,16} ){0,3})PRIVATE KEY(?: BLOCK)?-----")
_PEM_MAX = 64 * 1024


_PEM_HEADER_LINE = re.compile(r"(?m)^[ \t]*[A-Za-z-]+:[^\n]*$")
_B64_CHAR = re.compile(r"[A-Za-z0-9+/=]")
_PEM_MIN_BODY = 16    # base64 characters: even one line of a real key (`MIIEowIBAAKCAQEA`) is kept


def _placeholder_body(body: str) -> bool:
    """A key block that ends but holds no key: fewer than _PEM_MIN_BODY base64 characters
    between BEGIN and END (`anything`, `...`, `<your key>`), or only words in one case
    (`put your key here`: a real body of 16 base64 characters is almost never letters of one
    case alone). A block with no END line is always a finding: its body may still be coming."""
    b64 = "".join(_B64_CHAR.findall(_PEM_HEADER_LINE.sub("", body)))
    return len(b64) < _PEM_MIN_BODY or b64.isalpha() and (b64.islower() or b64.isupper())


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
            if _placeholder_body(text[m.end():found[i][0]]):
                pos = end                 # "-----BEGIN ... KEY-----\nanything\n-----END ..."
                continue
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
    # AWS access key ids: a 4-letter type prefix (AKIA long-term, ASIA temporary STS, ABIA
    # STS service bearer, ACCA context-specific) + 16.
    Rule("aws-access-key", _tok("A(?:KIA|SIA|BIA|CCA)", r"[A-Z0-9]{16}+(?![A-Za-z0-9])", "[A-Za-z0-9]"),
         ("akia", "asia", "abia", "acca")),
    # Amazon Bedrock API keys: long-term "ABSK" + base64, short-term "bedrock-api-key-" +
    # base64 of a presigned "bedrock.amazonaws.com/..." URL.
    Rule("aws-bedrock-key", _tok("ABSK", r"[A-Za-z0-9+/]{100,}+={0,2}", "[A-Za-z0-9+/]"), ("absk",)),
    Rule("aws-bedrock-key", _tok("bedrock-api-key-", r"YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/]{20,}+={0,2}"),
         ("bedrock-api-key-",)),
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
         _tok("xox[abprseoc]-", r"(?:[0-9]++-)*+[A-Za-z0-9]{8,}+(?:-[A-Za-z0-9]++)*+" + _E),
         ("xox",), check=_slack_real),
    Rule("slack-token",
         _tok("xapp-", r"[0-9]++-[A-Za-z0-9]++-[0-9]++-[A-Za-z0-9]{20,}+" + _E), ("xapp-",)),
    Rule("slack-webhook", _SLACK_HOOK, ("hooks.slack.com",), finder=_url_finder),
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
    Rule("private-key", _PEM_BEGIN, ("private key",), finder=_pem_finder, real_only=False),
    # HTTP Authorization / Proxy-Authorization values, any scheme (Bearer, Basic, token,
    # ApiKey, SSWS, Negotiate, AWS4-HMAC-SHA256, ...) or none: the credential part only, so
    # the header name and scheme stay readable after redaction. Matched on the folded text;
    # the credential must look opaque (a digit or mixed case), so prose stays prose.
    Rule("authorization-header",
         _r(r"authorization[\"']?[ \t]*+[:=][ \t]*+[\"']?(?:[a-z][a-z0-9_\-]{0,30}+[ \t]++)?"
            r"(?P<secret>[a-z0-9._~+/\-:,]{8,}+=*+)"),
         ("authorization",), group="secret", check=_credential_like, on_lower=True),
    # curl -u / --user USER:PASSWORD: the password part.
    Rule("curl-user-password", _CURL_USER, ("curl",), finder=_curl_user_finder),
    # URLs carrying user:password@ (the password part only). Starts at the literal "://"
    # for speed; a scheme must precede it (`left_required`).
    Rule("url-password",
         _r(r"://[^\s:/?#@\[\]\"'<>]*+:(?P<secret>[^\s/?#@\"'<>]{1,256})@[A-Za-z0-9\[]"),
         ("://",), group="secret", check=_not_placeholder,
         left_required=re.compile(r"[A-Za-z0-9]")),
    # Hugging Face user access tokens: hf_ + exactly 34 letters (an identifier such as
    # hf_requiredCharacteristicTypesForDisplayMetadata is longer); org tokens api_org_ + 34.
    Rule("huggingface-token", _tok("hf_", r"[A-Za-z0-9]{34}" + _E), ("hf_",)),
    Rule("huggingface-token", _tok("api_org_", r"[A-Za-z0-9]{34}" + _E), ("api_org_",)),
    # GitLab: personal/project/group access (glpat-), deploy (gldt-), runner (glrt-),
    # pipeline trigger (glptt-), OAuth app secret (gloas-), SCIM (glsoat-), feature flags
    # (glffct-), incoming mail (glimt-), agent (glagent-), CI job (glcbt-), feed (glft-):
    # 20+ base64url characters, optionally a routable ".<2><7>" suffix; and runner
    # registration tokens GR1348941 + 20.
    Rule("gitlab-token",
         _tok("gl", r"(?:pat|dt|rt|ptt|oas|soat|ffct|imt|agent|cbt|ft)-[A-Za-z0-9_\-]{20,300}+(?:\.[0-9a-z]{2}\.?[0-9a-z]{7})?" + _E),
         ("glpat-", "gldt-", "glrt-", "glptt-", "gloas-", "glsoat-", "glffct-", "glimt-",
          "glagent-", "glcbt-", "glft-")),
    Rule("gitlab-token", _tok("GR1348941", r"[A-Za-z0-9_\-]{20}" + _E), ("gr1348941",)),
    # npm access tokens: npm_ + 36 base62.
    Rule("npm-token", _tok("npm_", r"[A-Za-z0-9]{36}" + _E), ("npm_",)),
    # PyPI / TestPyPI upload tokens: "pypi-" + a macaroon whose base64 starts "AgE".
    Rule("pypi-token", _tok("pypi-AgE", r"[A-Za-z0-9_\-]{50,}+" + _E), ("pypi-age",)),
    # Telegram bot tokens: <bot id>:AA + 33.
    Rule("telegram-bot-token", _TELEGRAM, (":aa",), finder=_telegram_finder),
    # Discord bot tokens (no literal prefix: always run) and webhook URLs.
    Rule("discord-token", _DISCORD_MID, (), finder=_discord_finder),
    Rule("discord-webhook",
         _r(r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_\-]{60,68}" + _E),
         ("discord",), finder=_url_finder),
    # SendGrid: SG. + 22 + . + 43.
    Rule("sendgrid-key", _tok("SG\\.", r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E), ("sg.",)),
    # Twilio API key secrets' SIDs: SK + 32 lowercase hex (no needle: "sk" is in "ask").
    Rule("twilio-key", _tok("SK", r"[0-9a-f]{32}" + _E), ()),
    # DigitalOcean personal (dop_v1_), OAuth (doo_v1_) and refresh (dor_v1_) tokens.
    Rule("digitalocean-token", _tok("do[opr]_v1_", r"[a-f0-9]{64}" + _E),
         ("dop_v1_", "doo_v1_", "dor_v1_")),
    # 1Password service-account tokens (ops_ + base64 JSON) and account secret keys.
    Rule("1password-token", _tok("ops_eyJ", r"[A-Za-z0-9+/]{250,}+={0,3}"), ("ops_eyj",)),
    Rule("1password-secret-key",
         _tok("A3-", r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}"
              r"(?![A-Za-z0-9])", "[A-Za-z0-9]"),
         ("a3-",)),
    # HashiCorp Vault service (hvs.) and batch (hvb.) tokens.
    Rule("vault-token", _tok("hvs\\.", r"[A-Za-z0-9_\-]{90,}+" + _E), ("hvs.",)),
    Rule("vault-token", _tok("hvb\\.", r"[A-Za-z0-9_\-]{138,}+" + _E), ("hvb.",)),
    # Doppler personal, service, CLI, service-account, SCIM and audit tokens.
    Rule("doppler-token",
         _tok("dp\\.", r"(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_\-]{2,35}\.)?[A-Za-z0-9]{40,44}" + _E),
         ("dp.",)),
    # Notion integration tokens: ntn_ + 11 digits + 35, and the older secret_ + 43.
    Rule("notion-token", _tok("ntn_", r"[0-9]{11}[A-Za-z0-9]{35}" + _E), ("ntn_",)),
    Rule("notion-token", _tok("secret_", r"[A-Za-z0-9]{43}" + _E), ("secret_",)),
    # Linear API keys and OAuth secrets.
    Rule("linear-key", _tok("lin_api_", r"[A-Za-z0-9]{40}" + _E), ("lin_api_",)),
    Rule("linear-key", _tok("lin_oauth_", r"[a-f0-9]{64}" + _E), ("lin_oauth_",)),
    # Atlassian API tokens (user ATATT3..., admin/org ATCTT3...).
    Rule("atlassian-token", _tok("AT[AC]TT3", r"[A-Za-z0-9_\-=]{150,260}+" + _E), ("atatt3", "atctt3")),
    # Perplexity: pplx- + 48.
    Rule("perplexity-key", _tok("pplx-", r"[A-Za-z0-9]{48}" + _E), ("pplx-",)),
    # Shopify access, custom-app, private-app tokens and shared secrets: shp??_ + 32 hex.
    Rule("shopify-token", _tok("shp(?:at|ca|pa|ss)_", r"[a-fA-F0-9]{32}" + _E),
         ("shpat_", "shpca_", "shppa_", "shpss_")),
    # Square access tokens (EAAA + 60, sq0atp- + 22) and OAuth secrets (sq0csp- + 43).
    Rule("square-token", _tok("EAAA", r"[A-Za-z0-9_\-]{60}" + _E), ("eaaa",)),
    Rule("square-token", _tok("sq0atp-", r"[A-Za-z0-9_\-]{22}" + _E), ("sq0atp-",)),
    Rule("square-token", _tok("sq0csp-", r"[A-Za-z0-9_\-]{43}" + _E), ("sq0csp-",)),
    # age X25519 identities: AGE-SECRET-KEY-1 + Bech32 data.
    Rule("age-secret-key", _tok("AGE-SECRET-KEY-1", r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}" + _E),
         ("age-secret-key-1",)),
)

RULE_IDS: tuple[str, ...] = tuple(dict.fromkeys(r.id for r in RULES))
