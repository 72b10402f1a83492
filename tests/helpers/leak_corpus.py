"""Generated test material for the leak scanner: ordinary notes and realistic fake credentials.

Everything is produced at runtime from a seeded RNG, and every fake token is assembled by
concatenation, so this repository holds no string that looks like a live credential to a
secret scanner. Shared by tests/test_leaks*.py and bench/leaks.py.
"""

from __future__ import annotations

import base64
import hashlib
import random
import string
import uuid
from typing import Callable

B62 = string.ascii_letters + string.digits
B64URL = B62 + "-_"
UPPER_DIGITS = string.ascii_uppercase + string.digits
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def fake_tokens(seed: int = 7) -> dict[str, list[str]]:
    """rule id -> realistic fake tokens of that shape (built by concatenation)."""
    r = random.Random(seed)
    p = _pick
    jwt_header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
    jwt_payload = base64.urlsafe_b64encode(
        b'{"sub":"1234567890","name":"Jane","iat":1516239022}').rstrip(b"=").decode()
    pem_body = "\n".join(
        base64.b64encode(r.randbytes(48)).decode() for _ in range(6)
    )
    return {
        "aws-access-key": ["AK" + "IA" + p(r, UPPER_DIGITS, 16), "AS" + "IA" + p(r, UPPER_DIGITS, 16),
                           "AB" + "IA" + p(r, UPPER_DIGITS, 16), "AC" + "CA" + p(r, UPPER_DIGITS, 16)],
        "github-token": [
            "gh" + k + "_" + p(r, B62, 36) for k in "pousr"
        ] + ["github" + "_pat_" + p(r, B62, 22) + "_" + p(r, B62, 59)],
        "openai-api-key": [
            "sk" + "-proj-" + p(r, B64URL, 40) + "T3Blbk" + "FJ" + p(r, B64URL, 40),
            "sk" + "-" + p(r, B62, 20) + "T3Blbk" + "FJ" + p(r, B62, 20),
        ],
        "anthropic-api-key": ["sk" + "-ant-" + "api03-" + p(r, B64URL, 93) + "AA"],
        "slack-token": [
            "xo" + "xb-" + p(r, string.digits, 12) + "-" + p(r, string.digits, 13) + "-" + p(r, B62, 24),
            "xo" + "xp-" + p(r, string.digits, 12) + "-" + p(r, string.digits, 12) + "-"
            + p(r, string.digits, 13) + "-" + p(r, "0123456789abcdef", 32),
            "xa" + "pp-1-A" + p(r, UPPER_DIGITS, 10) + "-" + p(r, string.digits, 13) + "-"
            + p(r, "0123456789abcdef", 64),
            "xo" + "xo-" + p(r, string.digits, 12) + "-" + p(r, B62, 24),
        ],
        "slack-webhook": [
            "https://hooks" + ".slack.com/services/T" + p(r, UPPER_DIGITS, 8) + "/B"
            + p(r, UPPER_DIGITS, 8) + "/" + p(r, B62, 24),
            # no scheme, and http:// (issue 10 item 19)
            "hooks" + ".slack.com/services/T" + p(r, UPPER_DIGITS, 8) + "/B" + p(r, UPPER_DIGITS, 8) + "/" + p(r, B62, 24),
            "http://hooks" + ".slack.com/workflows/T" + p(r, UPPER_DIGITS, 8) + "/A" + p(r, UPPER_DIGITS, 8) + "/"
            + p(r, string.digits, 18) + "/" + p(r, B62, 24),
        ],
        "stripe-key": [
            "sk" + "_live_" + p(r, B62, 24), "rk" + "_live_" + p(r, B62, 24),
            "sk" + "_test_" + p(r, B62, 24),
        ],
        "google-api-key": ["AI" + "za" + "Sy" + p(r, B64URL, 33)],
        "jwt": [jwt_header + "." + jwt_payload + "." + p(r, B64URL, 43)],
        "private-key": [
            "-----BEGIN RSA " + "PRIVATE KEY-----\n" + pem_body + "\n-----END RSA " + "PRIVATE KEY-----",
            "-----BEGIN OPENSSH " + "PRIVATE KEY-----\n" + pem_body + "\n-----END OPENSSH " + "PRIVATE KEY-----",
            "-----BEGIN " + "PRIVATE KEY-----\n" + pem_body + "\n-----END " + "PRIVATE KEY-----",
            "-----BEGIN EC " + "PRIVATE KEY-----\n" + pem_body + "\n-----END EC " + "PRIVATE KEY-----",
        ],
        "huggingface-token": ["hf" + "_" + p(r, string.ascii_letters, 34), "api" + "_org_" + p(r, string.ascii_letters, 34)],
        "age-secret-key": ["AGE-SECRET" + "-KEY-1" + p(r, BECH32, 58)],
        # -- issue 10 item 19: the formats people keep in notes, from the issuers' docs
        "aws-bedrock-key": [
            "AB" + "SK" + base64.b64encode(b"BedrockAPIKey-" + p(r, B62, 8).encode() + b"-at-"
                                           + p(r, string.digits, 12).encode() + b":" + r.randbytes(44)).decode(),
            "bedrock" + "-api-key-" + base64.b64encode(
                b"bedrock.amazonaws.com/?Action=CallWithBearerToken&X-Amz-Credential=" + r.randbytes(60)).decode(),
        ],
        "gitlab-token": [
            "gl" + "pat-" + p(r, B64URL, 20), "gl" + "pat-" + p(r, B64URL, 40) + ".01." + p(r, "0123456789abcdefghijklmnopqrstuvwxyz", 7),
            "gl" + "dt-" + p(r, B64URL, 20), "gl" + "rt-" + p(r, B64URL, 20), "gl" + "ptt-" + p(r, "0123456789abcdef", 40),
            "gl" + "cbt-" + "64_" + p(r, B64URL, 20), "GR13" + "48941" + p(r, B64URL, 20),
        ],
        "npm-token": ["np" + "m_" + p(r, B62, 36)],
        "pypi-token": ["py" + "pi-AgEIcHlwaS5vcmc" + p(r, B64URL, 60)],
        "telegram-bot-token": [p(r, "123456789", 1) + p(r, string.digits, 9) + ":" + "AA" + p(r, B64URL, 33)],
        "discord-token": [
            base64.b64encode(("1" + p(r, string.digits, 17)).encode()).decode().rstrip("=") + "."
            + p(r, B64URL, 6) + "." + p(r, B64URL, 38),
        ],
        "discord-webhook": ["https://discord" + ".com/api/webhooks/" + p(r, string.digits, 18) + "/" + p(r, B64URL, 68)],
        "sendgrid-key": ["S" + "G." + p(r, B64URL, 22) + "." + p(r, B64URL, 43)],
        "twilio-key": ["S" + "K" + p(r, "0123456789abcdef", 32)],
        "digitalocean-token": ["do" + "p_v1_" + p(r, "0123456789abcdef", 64), "do" + "o_v1_" + p(r, "0123456789abcdef", 64)],
        "1password-token": [
            "op" + "s_" + base64.b64encode(('{"signInAddress":"my.1password.com","userAuth":{"method":"SRPg-4096",'
                                            '"alg":"PBES2g-HS256","iterations":650000,"salt":"' + p(r, B64URL, 22)
                                            + '"},"email":"' + p(r, "abcdefghijklmnopqrstuvwxyz", 26) + '@1passwordserviceaccounts.com",'
                                            '"srpX":"' + p(r, "0123456789abcdef", 64) + '"}').encode()).decode(),
        ],
        "1password-secret-key": ["A" + "3-" + p(r, UPPER_DIGITS, 6) + "-" + p(r, UPPER_DIGITS, 11) + "-"
                                 + "-".join(p(r, UPPER_DIGITS, 5) for _ in range(3))],
        "vault-token": ["hv" + "s." + p(r, B64URL, 95), "hv" + "b." + p(r, B64URL, 140)],
        "doppler-token": ["dp" + ".pt." + p(r, B62, 43), "dp" + ".st.prd." + p(r, B62, 40)],
        "notion-token": ["nt" + "n_" + p(r, string.digits, 11) + p(r, B62, 35), "sec" + "ret_" + p(r, B62, 43)],
        "linear-key": ["lin" + "_api_" + p(r, B62, 40), "lin" + "_oauth_" + p(r, "0123456789abcdef", 64)],
        "atlassian-token": ["AT" + "ATT3" + p(r, B64URL, 178) + "=" + p(r, "0123456789ABCDEF", 8)],
        "perplexity-key": ["pp" + "lx-" + p(r, B62, 48)],
        "shopify-token": ["shp" + "at_" + p(r, "0123456789abcdef", 32), "shp" + "ss_" + p(r, "0123456789abcdef", 32)],
        "square-token": ["EA" + "AA" + p(r, B64URL, 60), "sq0" + "csp-" + p(r, B64URL, 43), "sq0" + "atp-" + p(r, B64URL, 22)],
    }


def fake_credential_values(seed: int = 8) -> dict[str, tuple[str, str]]:
    """Contextual rules: rule id -> (text containing the secret, the secret part)."""
    r = random.Random(seed)
    bearer = p = _pick(r, B64URL, 40)
    basic = base64.b64encode(("alice:" + _pick(r, B62, 14)).encode()).decode()
    pw = _pick(r, B62, 16)
    aws_secret = _pick(r, B62 + "/+", 40)
    del p
    apikey = _pick(r, B62, 32)
    raw = _pick(r, B64URL, 36)
    okta = "00" + _pick(r, B62, 40)
    nego = base64.b64encode(r.randbytes(40)).decode()
    curl_pw = _pick(r, B62, 18)
    return {
        "authorization-header/apikey": ("Authorization: ApiKey " + apikey, apikey),
        "authorization-header/no-scheme": ('"authorization": "' + raw + '"', raw),
        "authorization-header/ssws": ("Authorization: SSWS " + okta, okta),
        "authorization-header/proxy-negotiate": ("Proxy-Authorization: Negotiate " + nego, nego),
        "curl-user-password": ("curl -u alice:" + curl_pw + " https://api.example.com/v1/me", curl_pw),
        "curl-user-password/long": ("curl -s --user 'deploy:" + curl_pw + "' https://ci.example.com/", curl_pw),
        "authorization-header/bearer": ("Authorization: Bearer " + bearer, bearer),
        "authorization-header/basic": ("authorization: Basic " + basic, basic),
        "url-password": ("postgres://app:" + pw + "@db.internal:5432/prod", pw),
        "aws-secret-key": ("aws_secret_access_key = " + aws_secret, aws_secret),
        "aws-secret-key/env": ("AWS_SECRET_ACCESS_KEY=" + aws_secret, aws_secret),
    }


# -- ordinary notes -----------------------------------------------------------------------

WORDS = (
    "the a an of to and in is it that for on with as was at by be this have from or one had "
    "not but what all were when we there can your which their said if do will each about how "
    "up out them then she many some so these would other into has more her two like him see "
    "time could no make than first been its who now people my made over did down only way "
    "find use may water long little very after words called just where most know get through "
    "back much before go good new write our used me man too any day same right look think "
    "also around another came come work three word must because does part even place well "
    "such here take why things help put years different away again off went old number "
    "great tell men say small every found still between name should home big give air line "
    "set own under read last never us left end along while might next sound below saw "
    "something thought both few those always looked show large often together asked house "
    "world going want school important until form food keep children feet land side without "
    "boy once animals life enough took sometimes four head above kind began almost live page "
    "got earth need far hand high year mother light parts country father let night following "
    "picture being study second eyes soon times story boys since white days ever paper hard "
    "near sentence better best across during today others sure means knew why try told young "
    "meeting dentist invoice project deadline grocery garden recipe budget token secret key "
    "password api skill task disk risk ask desk whisk husky mask basket kiosk"
).split()

TOPICS = ["Groceries", "Project Atlas", "Reading list", "Trip to Lisbon", "Dentist", "Budget",
          "Garden", "Recipes", "Standup notes", "Ideas", "Car maintenance", "Books"]

HOSTS = ["example.com", "docs.python.org", "github.com", "en.wikipedia.org", "news.ycombinator.com",
         "localhost", "192.168.1.20", "intranet.corp.example", "[::1]"]


def _sentence(r: random.Random) -> str:
    words = [r.choice(WORDS) for _ in range(r.randint(5, 18))]
    words[0] = words[0].capitalize()
    return " ".join(words) + r.choice([".", ".", ".", "!", "?"])


def _url(r: random.Random) -> str:
    scheme = r.choice(["https", "http", "ftp", "ssh", "git+ssh", "postgres", "redis", "s3"])
    host = r.choice(HOSTS)
    port = r.choice(["", "", ":8080", ":5432", ":443"])
    path = "/".join(r.choice(WORDS) for _ in range(r.randint(0, 4)))
    query = r.choice(["", "?q=" + r.choice(WORDS), "?page=2&sort=asc", "#section-" + r.choice(WORDS)])
    user = r.choice(["", "", "", "git@", "alice@"])  # a user but never a password
    return f"{scheme}://{user}{host}{port}/{path}{query}"


def _hexs(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _b64_image(r: random.Random) -> str:
    data = b"\x89PNG\r\n\x1a\n" + r.randbytes(r.randint(60, 900))
    return base64.b64encode(data).decode()


def _prose(r: random.Random) -> str:
    paras = []
    for _ in range(r.randint(1, 5)):
        paras.append(" ".join(_sentence(r) for _ in range(r.randint(2, 7))))
    return "\n\n".join(paras)


def _markdown(r: random.Random) -> str:
    lines = [f"# {r.choice(TOPICS)}", "", _sentence(r), ""]
    for _ in range(r.randint(2, 6)):
        lines += _MARKDOWN_BLOCKS[r.randint(0, 5)](r)
    return "\n".join(lines)


# one markdown block each: a task, a link, a table, a heading, a quote, a dated remark
_MARKDOWN_BLOCKS: tuple[Callable[[random.Random], list[str]], ...] = (
    lambda r: [f"- [ ] {_sentence(r)}"],
    lambda r: [f"- see [{r.choice(WORDS)}]({_url(r)})"],
    lambda r: ["| item | qty | note |", "|---|---|---|",
               f"| {r.choice(WORDS)} | {r.randint(1, 9)} | {r.choice(WORDS)} |"],
    lambda r: [f"## {r.choice(WORDS).capitalize()}"],
    lambda r: [f"> {_sentence(r)}"],
    lambda r: [f"**{r.choice(WORDS)}**: {_sentence(r)} ({r.randint(1, 28)}.{r.randint(1, 12)}.2026)"],
)


def _code(r: random.Random) -> str:
    name = r.choice(WORDS) + "_" + r.choice(WORDS)
    snippets = [
        f"def {name}(path: str) -> dict:\n    with open(path) as f:\n        return json.load(f)\n",
        f'import os\n\nTOKEN = os.environ["API_TOKEN"]\nheaders = {{"Authorization": f"Bearer {{TOKEN}}"}}\n',
        f'curl -H "Authorization: Bearer $API_TOKEN" {_url(r)}\n',
        f"const {name} = await fetch('{_url(r)}', {{ method: 'GET' }});\n",
        f"DATABASE_URL=postgres://app:${{DB_PASSWORD}}@db:5432/app\n",
        f"git checkout -b task-{r.randint(1, 999)}-fix-disk-usage-report-for-the-large-volumes\n",
        f"pip install scikit-learn==1.{r.randint(0, 5)}.{r.randint(0, 9)}  # sk-learn style\n",
        f"for (let i = 0; i < {r.randint(2, 99)}; i++) {{ total += items[i].price; }}\n",
        "SELECT id, name FROM users WHERE created_at > now() - interval '7 days';\n",
        f"password = getpass.getpass()  # never hard-code; key_id = '{r.choice(WORDS)}'\n",
        "ssh-keygen -t ed25519 -C 'me@laptop' && cat ~/.ssh/id_ed25519.pub\n",
        "export OPENAI_API_KEY=sk-...   # placeholder, real one lives in the vault\n",
    ]
    body = "".join(r.sample(snippets, r.randint(1, 4)))
    lang = r.choice(["python", "bash", "js", "sql", ""])
    return f"```{lang}\n{body}```"


def _ids(r: random.Random) -> str:
    out = []
    for _ in range(r.randint(2, 8)):
        out.append(_ID_LINES[r.randint(0, 5)](r))
    return "\n".join(out)


# one identifier each: a request UUID, a commit, a release checksum, a digest, a URL, an ISBN
_ID_LINES: tuple[Callable[[random.Random], str], ...] = (
    lambda r: f"request id {uuid.UUID(int=r.getrandbits(128), version=4)}",
    lambda r: f"commit {_hexs(r, 40)} ({_hexs(r, 7)})",
    lambda r: f"{hashlib.sha256(r.randbytes(32)).hexdigest()}  release-{r.randint(1, 9)}.{r.randint(0, 20)}.tar.gz",
    lambda r: f"sha256:{hashlib.sha256(r.randbytes(8)).hexdigest().upper()}",
    lambda r: f"<{_url(r)}>",
    lambda r: f"ISBN 978-{r.randint(0, 9)}-{r.randint(100, 999)}-{r.randint(10000, 99999)}-{r.randint(0, 9)}",
)


def _image(r: random.Random) -> str:
    return f"{_sentence(r)}\n\n![{r.choice(WORDS)}](data:image/png;base64,{_b64_image(r)})\n"


KINDS = (_prose, _markdown, _code, _ids, _image)


def ordinary_notes(n: int = 1000, seed: int = 1234) -> list[str]:
    """n ordinary notes mixing prose, markdown, code, ids, hashes, URLs and base64 images."""
    r = random.Random(seed)
    notes = []
    for i in range(n):
        parts = [KINDS[i % len(KINDS)](r)]
        for _ in range(r.randint(0, 3)):
            parts.append(r.choice(KINDS)(r))
        notes.append("\n\n".join(parts) + "\n")
    return notes


def random_secrets(n: int, seed: int = 99, length: tuple[int, int] = (12, 40)) -> dict[str, str]:
    r = random.Random(seed)
    alphabet = B62 + "!#%&*+-./:=?@^_~"
    return {f"secret-{i}": _pick(r, alphabet, r.randint(*length)) for i in range(n)}


def big_note(size: int = 1 << 20, seed: int = 5) -> str:
    """About `size` characters of ordinary notes glued together."""
    r = random.Random(seed)
    parts, total = [], 0
    while total < size:
        note = r.choice(KINDS)(r)
        parts.append(note)
        total += len(note) + 2
    return "\n\n".join(parts)[:size]


CJK_LINES = (
    "这是一个普通的句子，里面有中文标点：（括号）、逗号，还有全角数字１２３和字母ＡＢＣ。",
    "会议记录——下午３点开会；预算：￥１２，０００。备注：见附件「计划書」。",
    "日本語のメモ：明日は１０時から。ｶﾀｶﾅ（半角）もある。",
    "한국어 메모: 내일 회의는 오후 3시입니다 – 준비물 없음.",
)


def with_colour_codes(text: str, seed: int = 3, share: float = 0.3) -> str:
    """`text` with about `share` of its lines wrapped in ANSI colour codes (terminal output)."""
    r = random.Random(seed)
    return "\n".join(f"\x1b[1;3{r.randrange(8)}m{line}\x1b[0m" if r.random() < share else line
                     for line in text.split("\n"))


def big_unicode_note(size: int = 1 << 20, seed: int = 6) -> str:
    """`big_note` respelled the way pasted text is: about one paragraph in three gets CJK lines
    with fullwidth punctuation, fullwidth words or typographic dashes (en/em, non-breaking
    hyphen, minus). No secrets."""
    r = random.Random(seed)
    paras = big_note(size, seed=seed).split("\n\n")
    out = []
    for p in paras:
        k = r.randrange(8)
        if k == 0:
            p = p + "\n" + r.choice(CJK_LINES)
        elif k == 1:
            words = p.split(" ")
            i = r.randrange(len(words))
            words[i] = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in words[i])
            p = " ".join(words)
        elif k == 2:
            p = p.replace("-", r.choice("\u2013\u2014\u2011\u2212"))
        out.append(p)
    return "\n\n".join(out)[:size]
