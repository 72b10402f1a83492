"""Vault values spelled in disguise: split by terminal escape sequences or lone control
characters, hyphens spelled as look-alike dashes, letters and digits in compatibility forms
(fullwidth, ligatures, superscripts, mathematical letters: NFKC-equal to the value).

The scanner's view folds all of these (assistant/secrets/view.py), in both directions: the gated
writer refuses them on the way into memory/ and files/, and redaction catches them on the way
out, replacing exactly the disguised span (escape sequences inside it included) and leaving the
rest of the text byte-identical. Ordinary text with fullwidth forms, CJK, dashes and colour
codes but no secret is not flagged.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import unicodedata

import pytest

from assistant.secrets.scanner import Scanner
from assistant.secrets.view import DASHES
from assistant.models.scripted import ScriptedModel
from assistant.tools.base import ToolError
from assistant.tools.registry import tools_by_name

from e2e_support import cli_env, make_ws, run_cli
from leak_corpus import fake_tokens, ordinary_notes, random_secrets
from secrets_support import cli_vault_ws, run_assistant, tree_env

SECRET = "Zq7" + "-Plum-" + "Orbit-9931"
NAME = "bank"


def fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


# Each disguise of SECRET, as it would sit in a text. The ESC ones render on a terminal as the
# exact value; the others read as it.
DISGUISES = {
    "csi-reset": "Zq7-Plum-Or\x1b[mbit-9931",
    "csi-colour-params": "Zq7-Pl\x1b[1;38;5;208mum-Orbit\x1b[0m-9931",
    "csi-8bit": "Zq7-Plum-Or\x9b0mbit-9931",
    "osc-title-bel": "Zq7-Plum\x1b]0;a title\x07-Orbit-9931",
    "osc-hyperlink-st": "Zq7-\x1b]8;;https://example.com/\x1b\\Plum-Orbit\x1b]8;;\x1b\\-9931",
    "charset-esc-(-B": "Zq7-Plum-\x1b(BOrbit-9931",
    "two-byte-esc": "Zq7-Plum-Orb\x1b7it-9931",
    "lone-controls": "Zq7-Pl\x07um-Or\x01bit-99\x7f31",
    "c1-controls": "Zq7-Plum\x9c-Orbit\x80-9931",
    **{f"dash-U+{ord(d):04X}": SECRET.replace("-", d) for d in DASHES},
    "fullwidth": fullwidth(SECRET),
    "fullwidth-digits-only": "Zq7-Plum-Orbit-" + fullwidth("9931"),
    "mathematical-bold": "\U0001d419q7-Plum-Orbit-9931",     # non-BMP: MATHEMATICAL BOLD CAPITAL Z
    "superscript-and-circled": "Zq\u2077-Plum-Orbit-\u2468931",
    "mixed": "\uff3aq7\u2011Pl\u200bum\x1b[2m\u2014Or" + fullwidth("bit") + "\u2212" + "99\x1b[0m31",
}


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner({NAME: SECRET, **random_secrets(20, seed=3)})


# -- the scanner: found, and the span is exactly the disguised value -----------------------

@pytest.mark.parametrize("kind", sorted(DISGUISES))
def test_each_disguise_is_found_and_redacted_exactly(scanner, kind):
    disguised = DISGUISES[kind]
    text = "pin: " + disguised + " (garage)\n"
    found = scanner.find(text)
    assert [(f.name, text[f.start:f.end]) for f in found] == [(NAME, disguised)]
    assert scanner.redact(text) == "pin: [redacted:bank] (garage)\n"
    assert scanner.names_found(text) == [NAME]
    assert scanner.redaction_spans(text) == [(5, 5 + len(disguised), NAME)]


@pytest.mark.parametrize("kind", sorted(DISGUISES))
def test_a_disguise_at_the_very_start_and_end_of_the_text(scanner, kind):
    disguised = DISGUISES[kind]
    assert scanner.redact(disguised) == "[redacted:bank]"
    assert scanner.redact(disguised + "\nnext line") == "[redacted:bank]\nnext line"
    assert scanner.redact("first line\n" + disguised) == "first line\n[redacted:bank]"


def test_escape_sequences_around_a_value_stay_outside_the_span(scanner):
    """Colour codes around the value are not part of it: the redaction keeps them byte for byte."""
    text = "\x1b[1;31m" + SECRET + "\x1b[0m and \x1b[32m" + fullwidth(SECRET) + "\x1b[0m"
    assert scanner.redact(text) == "\x1b[1;31m[redacted:bank]\x1b[0m and \x1b[32m[redacted:bank]\x1b[0m"


def test_several_disguises_in_one_text_each_get_their_own_span(scanner):
    kinds = sorted(DISGUISES)
    text = " | ".join(DISGUISES[k] for k in kinds)
    assert scanner.redact(text) == " | ".join(["[redacted:bank]"] * len(kinds))


def test_a_value_inside_an_escape_sequence_is_still_seen(scanner):
    """Dropping sequences must not hide what they carry: an OSC window title is shown, and
    `ESC Z...` eats the value's first letter only in the sequence-free view."""
    for text in ("\x1b]0;" + SECRET + "\x07rest", "\x1b]2;" + SECRET + "\x1b\\", "\x1b" + SECRET,
                 "\x1b[" + SECRET, "\x9d" + SECRET):
        spans = scanner.redaction_spans(text)
        assert len(spans) == 1 and spans[0][2] == NAME
        start, end, _ = spans[0]
        assert text[start:end].endswith(SECRET[1:]) and len(text[start:end]) <= len(SECRET) + 1


@pytest.mark.parametrize("stored", [SECRET.replace("-", "\u2011"), fullwidth(SECRET),
                                    "Zq7-Plum\x1b[m-Orbit-9931", "Zq7\u2013Plum\u2014Orbit\u22129931"])
def test_a_stored_value_in_disguise_matches_every_spelling(stored):
    """The vault values are folded like the text: a value stored with a fullwidth character or a
    dash look-alike is found spelled plainly, as stored, or in any other disguise."""
    scanner = Scanner({NAME: stored})
    for spelling in (SECRET, stored, *DISGUISES.values()):
        assert scanner.redact("x " + spelling + " y") == "x [redacted:bank] y"


def test_multi_character_nfkc_forms_map_back_to_their_one_source_character():
    """U+FB01 (the "fi" ligature) is two characters in the view; both map to it, so a span
    that starts or ends inside it covers the ligature, never half of it."""
    value = "Profit-Kiwi-5521"
    scanner = Scanner({"shop": value})
    for text in ("a Pro\ufb01t-Kiwi-5521 b", "a Profit\u2010Kiwi-5521 b", "a Pro\ufb01t\u2011Kiwi\u20115521 b"):
        assert scanner.redact(text) == "a [redacted:shop] b"
    # a value that ends inside a ligature's expansion: the whole ligature goes
    scanner = Scanner({"x": "Kiwi-Orbit-8820f"})
    assert scanner.redact("Kiwi-Orbit-8820\ufb01x") == "[redacted:x]x"
    assert scanner.redaction_spans("Kiwi-Orbit-8820\ufb01x") == [(0, 16, "x")]


def test_encoded_variants_still_match_after_folding(scanner):
    import base64

    assert scanner.redact("b64: " + base64.b64encode(SECRET.encode()).decode()) == "b64: [redacted:bank]"
    assert scanner.redact("hex: " + SECRET.encode().hex().upper()) == "hex: [redacted:bank]"
    stored = "Zq7\u2011Plum\u2011Orbit\u20119931"
    s = Scanner({NAME: stored})
    assert s.redact("json: " + json.dumps(stored)) == 'json: "[redacted:bank]"'


def test_a_disguised_value_cut_by_the_end_is_redacted_as_a_prefix(scanner):
    """redact_prefix (a tool output cut at its limit): a disguised value cut by the end is still
    a hit, and the tail guard counts view characters."""
    text = "words " * 100 + fullwidth(SECRET)[:17]
    out = scanner.redact_prefix(text)
    assert "\uff3a\uff51\uff17" not in out and out.endswith("\u2026")
    esc = "words " * 100 + "Zq7-Plum-Or\x1b[mbit-99"
    assert "Zq7" not in scanner.redact_prefix(esc)


def test_many_unterminated_sequences_scan_in_linear_time(scanner):
    """An OSC/DCS introducer with no terminator ends at the next introducer: 60,000 of them
    would be a quadratic rescan otherwise (and this test would not finish)."""
    for intro in ("\x1b]", "\x9d", "\x1bP", "\x1b["):
        text = (intro + "ab") * 60_000 + " " + DISGUISES["csi-reset"]
        assert scanner.names_found(text) == [NAME]


# -- shape rules: tokens split by escape sequences and controls; the prefilter still opens ---

def test_a_credential_shape_split_by_an_escape_sequence_is_found():
    token = fake_tokens()["github-token"][0]
    for glue in ("\x1b[0m", "\x07", "\x1b]0;t\x07", "\x9b1m"):
        text = "token " + token[:9] + glue + token[9:] + " end"
        assert Scanner({}).redact(text) == "token [redacted:github-token] end"


def test_a_needle_eaten_by_a_sequence_still_opens_its_rule():
    """`ESC [ A` is a CSI whose final byte is the A of AKIA: the sequence-free view holds
    "KIA...", but the rule runs on the text itself, where "AKIA..." is, so the gate must open
    (the second view, ESC alone removed, has the needle)."""
    token = fake_tokens()["aws-access-key"][0]
    for scanner in (Scanner({}), Scanner(random_secrets(5, seed=4))):
        assert "aws-access-key" in scanner.names_found("key \x1b[" + token + " end")


# -- no false positives --------------------------------------------------------------------

ORDINARY_UNICODE = [
    "这是一个普通的句子，里面有中文标点：（括号）、逗号，还有全角数字１２３和字母ＡＢＣ。",
    "会议记录——下午３点开会；预算：￥１２，０００。备注：见附件「计划書」。",
    "Ｆｕｌｌｗｉｄｔｈ ｐｒｏｓｅ ｆｏｒ ａ ｈｅａｄｌｉｎｅ － ｔｈｅ ｅｎｄ！",
    "日本語のメモ：明日は１０時から。ｶﾀｶﾅ（半角）もある。",
    "한국어 메모: 내일 회의는 오후 3시입니다 – 준비물 없음.",
    "Pages 10–20 — see §3.2; temperature −5 °C; a well‑known non‑breaking hyphen.",
    "The oﬃce ﬁle ﬂow: x² + y³ = z⁴, ½ cup, № 5, ㎏ and ㎞, Ⅻ o'clock, ① ② ③.",
    "\x1b[1;32mPASSED\x1b[0m tests/test_x.py::test_one \x1b[33m[ 50%]\x1b[0m\n",
    "\x1b]0;user@host: ~/src\x07$ ls --color\n\x1b[01;34mdocs\x1b[0m  \x1b[01;32mrun.sh\x1b[0m\x1b(B\x1b[m\n",
    "progress\r[=====>    ] 55%\x08\x08\x08 56%\x07 done\n",
]


def _disguise_note(r: random.Random, note: str) -> str:
    """An ordinary note respelled: fullwidth runs, dash look-alikes, colour codes, controls."""
    out = []
    for line in note.split("\n"):
        kind = r.randrange(5)
        if kind == 0:
            line = fullwidth(line)
        elif kind == 1:
            line = line.replace("-", r.choice(DASHES))
        elif kind == 2:
            line = "\x1b[" + str(r.randrange(30, 38)) + "m" + line + "\x1b[0m"
        elif kind == 3 and " " in line:   # between words (inside one, a control makes a
            # placeholder such as ${DB_PASSWORD} look like a real password to url-password)
            i = line.index(" ", r.randrange(len(line) - line[::-1].index(" ")))
            line = line[:i] + r.choice(["\x07", "\x00", "\x1b(B", "\u2011"]) + line[i:]
        out.append(line)
    return "\n".join(out)


def test_ordinary_notes_and_their_disguised_spellings_produce_zero_findings():
    notes = ordinary_notes(300)
    scanner = Scanner(random_secrets(200))
    shapes = Scanner({})
    r = random.Random(77)
    for i, note in enumerate(notes):
        respelled = _disguise_note(r, note)
        for text in (note, respelled):
            assert [f.rule for f in scanner.find(text)] == [], i
            assert scanner.redact(text) == text
        # what the shape rules see in the original is what they see in the respelled note
        assert [f.rule for f in shapes.find(respelled)] == [], i


@pytest.mark.parametrize("text", ORDINARY_UNICODE, ids=range(len(ORDINARY_UNICODE)))
def test_cjk_fullwidth_dashes_and_escape_codes_without_a_secret_are_not_flagged(text):
    scanner = Scanner(random_secrets(200))
    assert scanner.find(text) == []
    assert scanner.redact(text) == text
    assert scanner.redact_prefix(text) == "\u2026"   # short: the tail guard takes it all
    # and the same text with the secret appended is flagged at exactly that place
    with_secret = Scanner({NAME: SECRET, **random_secrets(200)})
    assert with_secret.redact(text + DISGUISES["mixed"]) == text + "[redacted:bank]"


# -- the gated writer refuses every disguise, in memory/ and in files/ ----------------------

@pytest.fixture
def session(tmp_path, sessions):
    made = []

    def make():
        made.append(sessions(make_ws(tmp_path / f"s{len(made)}"), vault={NAME: SECRET}))
        return made[-1]

    return make


CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def test_the_writer_refuses_every_disguise_in_files_and_memory(session):
    parts = session()
    tools = tools_by_name(parts.tools)
    for i, (kind, disguised) in enumerate(sorted(DISGUISES.items())):
        content = f"pin: {disguised}\n"
        with pytest.raises(ToolError, match="secret stored in the person's vault"):
            tools["file_write"].run({"path": f"d{i}.txt", "content": content}, parts.ctx)
        assert not (parts.ws.files_dir / f"d{i}.txt").exists(), kind
        # memory/ is plain text: a control character is refused before the scan; the scan
        # itself sees the value all the same
        expect = "control character" if CONTROL.search(disguised) else "secret stored in the person's vault"
        with pytest.raises(ToolError, match=expect):
            tools["memory_write"].run({"path": f"d{i}.md", "content": content}, parts.ctx)
        assert not (parts.ws.memory_dir / f"d{i}.md").exists(), kind
        assert parts.memory.secrets_in(content.encode()) == {disguised}, kind
    # the same tools still write ordinary text with the same characters
    tools["file_write"].run({"path": "ok.txt", "content": ORDINARY_UNICODE[7]}, parts.ctx)
    tools["memory_write"].run({"path": "ok.md", "content": ORDINARY_UNICODE[0] + "\n"}, parts.ctx)
    assert (parts.ws.files_dir / "ok.txt").read_text() == ORDINARY_UNICODE[7]


def test_tool_output_and_transcript_carry_no_disguised_value(session, tmp_path):
    """On the way out: a file holding every disguise, read by the model through file_read and a
    note through memory_read, reaches the model and the transcript redacted."""
    parts = session()
    kinds = sorted(DISGUISES)
    body = "".join(f"{k}: {DISGUISES[k]}\n" for k in kinds)
    (parts.ws.files_dir / "dump.txt").write_text(body, encoding="utf-8")
    note = "".join(f"- {DISGUISES[k]}\n" for k in kinds if not CONTROL.search(DISGUISES[k]))
    (parts.ws.memory_dir / "dump.md").write_text(note, encoding="utf-8")
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"tool": "file_read", "args": {"path": "dump.txt"}},
                                  {"tool": "memory_read", "args": {"path": "dump.md"}},
                                  {"reply": "done"}]))
    model = ScriptedModel(script)
    agent = parts.new_agent(model)
    assert agent.turn("read them").outcome == "reply"
    seen_file = model.calls[1][-1]["content"]
    seen_note = model.calls[2][-1]["content"]
    assert "".join(f"{k}: [redacted:bank]\n" for k in kinds) in seen_file
    assert seen_note.count("[redacted:bank]") == note.count("\n")
    transcript = parts.transcript.path.read_text(encoding="utf-8")
    for seen in (seen_file, seen_note, transcript):
        assert not any(d in seen for d in DISGUISES.values())
        assert "Orbit" not in seen and "\uff2f\uff52\uff42" not in seen


# -- the tables: every NFKC-changing character is folded; the prefilter still never drops ----

def test_every_character_nfkc_changes_is_a_fold_candidate():
    """The view folds a character only if the candidate class has it (the supplementary planes
    wholesale); and a text that is NFKC as a whole has no such character (the class is skipped
    for it), so is_normalized is a safe shortcut."""
    import unicodedata

    from assistant.secrets.view import _candidates, _fold_char

    cls = _candidates(True)
    changing = [chr(cp) for cp in range(0x80, 0x110000)
                if not 0xD800 <= cp < 0xE000 and unicodedata.normalize("NFKC", chr(cp)) != chr(cp)]
    assert len(changing) > 4000
    for c in changing:
        assert c.isspace() or cls.fullmatch(c), f"U+{ord(c):04X}"
        assert not unicodedata.is_normalized("NFKC", "a" + c + "b"), f"U+{ord(c):04X}"
    assert all(_fold_char(d) == "-" for d in DASHES)


class _Ungated(Scanner):
    """The same scanner with the needle gate off: every rule runs over the whole text."""

    def _scan(self, text: str, truncated: bool = False):
        return super()._scan(text, truncated)[0], None


ESCAPES = ["\x1b[0m", "\x1b[1;31m", "\x1b[", "\x1b]0;t\x07", "\x1b]8;;u\x1b\\", "\x1b(B", "\x1b", "\x9b2K",
           "\x9d0;x\x9c", "\x07", "\x00", "\u2011", "\uff0d", "\uff21"]


@pytest.mark.parametrize("seed", range(4))
def test_the_prefilter_never_drops_a_match_in_text_with_escapes(seed):
    """Tokens with escape sequences, controls, dashes and fullwidth letters inserted inside and
    around them: the gated scanner finds exactly what the ungated one finds."""
    r = random.Random(seed)
    samples = [t for toks in fake_tokens().values() for t in toks]
    secrets = random_secrets(5, seed=4)
    fast, ref = Scanner(secrets), _Ungated(secrets)
    notes = ordinary_notes(40, seed=seed)
    for _ in range(40):
        tok = r.choice(samples + list(secrets.values()))
        i = r.randrange(len(tok) + 1)
        tok = tok[:i] + r.choice(ESCAPES) + tok[i:]
        text = r.choice(notes)[:300] + r.choice(ESCAPES) + tok + r.choice(ESCAPES) + r.choice(notes)[:300]
        assert fast.find(text) == ref.find(text)
        assert fast.redact(text) == ref.redact(text)


# review (scan): a value right after a lone ESC and split by a colour code was found in neither view
@pytest.mark.parametrize("text", [
    "\x1bZq7-Plum-Or\x1b[mbit-9931",
    "note: \x1bZq7\x1b[1m-Plum-Orbit-9931\x1b[0m end",
])
def test_esc_before_the_value_and_a_colour_code_inside_it(text):
    """`ESC Z` eats the value's first letter only in the sequence-free view (which is why the
    scanner scans a second view with only ESC removed); split by a colour code too, the value was
    found in neither view: the first lost `Z`, the second kept `[m`. So a note could carry every
    character of the value in order, and stripping colour codes (the usual `\\x1b\\[[0-9;]*m`)
    gives it back. Promise (docs/leaks.md "Disguised spellings"): "ESC Z followed by a value"
    is still seen, and a value split by escape sequences is found."""
    assert SECRET in re.sub(r"\x1b\[[0-9;]*m", "", text).replace("\x1b", "")
    found = [f for f in Scanner({"bank": SECRET}).find(text) if f.rule == "vault"]
    assert found, "the value is not found"


# review (scan): the redaction glued a lone ESC to its marker, making an escape sequence (ESC [ r ...)
# ECMA-48 CSI (7- and 8-bit) and ESC + intermediates + final, as a terminal parses them.
SEQ = re.compile(r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\x1b[\x20-\x2f]*[\x30-\x7e]")


@pytest.mark.parametrize("lead", ["\x1b", "\x1b(", "\x9b"], ids=["esc", "esc-paren", "c1-csi"])
def test_marker_survives_terminal_parsing(lead):
    """A vault value right after a lone ESC (`ESC Zq7-...`: the terminal eats `ESC Z` and shows
    the rest) was redacted from the value's first letter on, leaving the ESC glued to the marker:
    `ESC [redacted:bank]` is the CSI `ESC [ r` (DECSTBM) followed by `edacted:bank]`; likewise
    `ESC (` + marker and 8-bit CSI + marker. The redaction replaces exactly the secret's span; no
    escape sequence that changes what a terminal shows is left or made by it."""
    shown = Scanner({"bank": "Zq7-Plum-Orbit-9931"}).redact(lead + "Zq7-Plum-Orbit-9931 tail")
    assert "Plum" not in shown
    assert "[redacted:bank]" in SEQ.sub("", shown), repr(shown)


# review (scan): a value with non-ASCII letters was not found in its NFD spelling, nor an NFD-stored one in NFC
# `café-Secret-77` with `é` written as `e` + U+0301 renders identically and is NFKC-equal to the
# value, but the view folded one character at a time, so a combining mark was never composed with
# its base. Promise (docs/vault.md, docs/leaks.md): any form "NFKC-equal to the value" is caught.
VALUES = ["café-Secret-77", "비밀번호-Secret-77", "Ångström-Key-2024"]


@pytest.mark.parametrize("value", VALUES)
def test_nfd_spelling_of_an_nfc_value_is_redacted(value):
    text = "token: " + unicodedata.normalize("NFD", value) + " end"
    assert unicodedata.normalize("NFKC", text) == "token: " + value + " end"
    assert Scanner({"k": value}).redact(text) == "token: [redacted:k] end"


@pytest.mark.parametrize("value", VALUES)
def test_nfc_spelling_of_an_nfd_stored_value_is_redacted(value):
    stored = unicodedata.normalize("NFD", value)
    assert Scanner({"k": stored}).redact("token: " + value + " end") == "token: [redacted:k] end"


# review (one gated writer): disguised vault values (NFKC forms, dash look-alikes, ESC inside) passed the scan; fixed
# The files/ mount (plain_text=False) accepted the value split by an ANSI SGR reset (ESC[m), which a
# terminal renders as the exact secret (memory/ refused it only for its control character); both
# mounts accepted it with its hyphens spelled U+2011 or in fullwidth forms (NFKC-equal to the
# secret). The scanner's view now folds them (assistant/secrets/view.py); these were strict xfails
# until then. Through the real CLI: a vault made by `vault set`, a scripted chat.
VARIANTS = {
    "ansi_reset_inside": "Zq7-Plum-Or\x1b[mbit-9931",
    "nonbreaking_hyphens": SECRET.replace("-", "\u2011"),
    "fullwidth": "".join(chr(ord(c) + 0xFEE0) for c in SECRET),
}


@pytest.fixture
def evasion_ws(tmp_path):
    """A workspace as `init` makes it whose vault holds bank = SECRET, made through the CLI."""
    return cli_vault_ws(tmp_path, SECRET)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_file_write_refuses_disguised_vault_value(evasion_ws, tmp_path, name):
    ws = evasion_ws
    script = tmp_path / "s.json"
    script.write_text(json.dumps([
        {"tool": "file_write", "args": {"path": "leak.txt", "content": f"pin: {VARIANTS[name]}\n"}},
        {"reply": "done"},
    ]))
    run_assistant(["-w", str(ws), "chat", "--model", f"script:{script.name}"], stdin="go\n/quit\n", cwd=tmp_path)
    assert not (ws / "files" / "leak.txt").exists(), "a disguised vault value was written to files/"


@pytest.mark.parametrize("name", ["nonbreaking_hyphens", "fullwidth"])
def test_memory_write_refuses_disguised_vault_value(evasion_ws, name):
    ws = evasion_ws
    code = (
        "import sys\n"
        "from assistant.memory import memory_write, NoteError\n"
        "try:\n"
        f"    memory_write('leak.md', 'pin: ' + {VARIANTS[name]!r} + '\\n', workspace={str(ws)!r})\n"
        "    print('WRITTEN')\n"
        "except NoteError as e:\n"
        "    print('REFUSED', type(e).__name__)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=tree_env(), timeout=120)
    assert "REFUSED" in r.stdout, r.stdout + r.stderr


# review (scan): the person's `assistant memory write` stored a vault value with one JSON \u escape inside it, or in NFD
# Every reader decodes or renders these as the value; the plain spelling is refused (checked first).
GATE_CLI_PASS = "review-s5-pass"


def _gate_cli(*args, input=None):
    return run_cli(*args, input=input, timeout=120, env=cli_env(ASSISTANT_VAULT_PASSPHRASE=GATE_CLI_PASS))


@pytest.fixture
def gate_cli_ws(tmp_path):
    """A workspace whose vault holds bank and a non-ASCII cafe value; the plain value is refused."""
    ws = tmp_path / "ws"
    assert _gate_cli("init", str(ws)).returncode == 0
    assert _gate_cli("vault", "init", "-w", str(ws)).returncode == 0
    assert _gate_cli("vault", "set", "bank", "-w", str(ws), input="Zq7-Plum-Orbit-9931").returncode == 0
    assert _gate_cli("vault", "set", "cafe", "-w", str(ws), input="café-Secret-77").returncode == 0
    plain = _gate_cli("memory", "write", "-w", str(ws), "notes/plain.md", input="k: Zq7-Plum-Orbit-9931\n")
    assert plain.returncode != 0 and "vault" in plain.stderr
    return ws


@pytest.mark.parametrize("content", [
    '{"k": "Zq7\\u002dPlum-Orbit-9931"}\n',
    "k: " + unicodedata.normalize("NFD", "café-Secret-77") + "\n",
], ids=["json-one-u-escape", "nfd"])
def test_memory_write_refuses_the_disguised_value(gate_cli_ws, content):
    ws = gate_cli_ws
    proc = _gate_cli("memory", "write", "-w", str(ws), "notes/x.md", input=content)
    assert proc.returncode != 0, "stored: " + proc.stdout
    assert not (ws / "memory" / "notes" / "x.md").exists()
