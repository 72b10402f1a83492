"""Scoring one answer of the answer benchmark (bench/answers.py): the rules, in one place.

A question (bench/answers/*.json) names the facts a correct answer must contain (`must`: each
item a string or a list of alternatives), the facts it must not state (`must_not`) and its
`kind`; `unanswerable` means the right answer says the notes do not say. Facts are matched
case-insensitively after normalisation (NFKC, quotes and dashes folded, punctuation to spaces,
whole words; a fact with digits also matches with its spaces removed: "0117 496 0321" ==
"01174960321").

Labels, checked in this order:
- placeholder: an empty reply, an echo of the action schema or of an example (`<text>`,
  `{"reply": ...}`), a line of the persona repeated, or no reply at all (the run ended with
  `error:`/`denied:`/`failed:`, the harness said something in the model's place);
- abstained: an unanswerable question answered "not in my notes" (or a close variant) with no
  forbidden fact and nothing invented;
- invented: a non-abstention on an unanswerable question, or a name or number found in neither
  the notes, the persona nor the question (sentence-initial words are not taken for names);
- wrong: a forbidden fact, or no required fact;
- correct: every required fact and at most 80 words;
- partial: some required facts (or all of them in more than 80 words).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

LABELS = ("correct", "partial", "wrong", "invented", "placeholder", "abstained")
MAX_WORDS = 80

_FOLD = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                       "\u2014": "-", "\u2212": "-", "\u00a0": " "})

# "not in my notes" and the ways a model says it
_NOTES = r"(?:my|your|the|any) (?:notes?|memory|records?)"
ABSTAIN = re.compile(
    r"\bnot (?:in|from|among) " + _NOTES
    + r"|\b(?:my|your|the) notes (?:do not|don't|dont|doesn't|does not|did not|didn't) (?:say|mention|show|contain|have|include|record|tell|cover)"
    + r"|\b(?:my|your|the) notes (?:say|mention) nothing"
    + r"|\bnothing (?:about [^.]*?)?(?:in|from) " + _NOTES
    + r"|\b(?:do not|don't|dont|did not|didn't|could not|couldn't|can't|cannot) (?:have|find|see|know)\b[^.]*?\b(?:in|from|among) " + _NOTES
    + r"|\bno (?:note|notes|record|records|mention|information|details)\b"
    + r"|\b(?:do not|don't|dont) know\b"
    + r"|\b(?:isn't|is not|aren't|are not|wasn't|was not) (?:recorded|mentioned|noted|written down|listed)"
    + r"|\bnot (?:specified|stated|given|mentioned|recorded|listed|included) (?:in|among) " + _NOTES
    + r"|\b(?:my|your|the) notes (?:do not|don't|dont|doesn't|does not) (?:specify|state|give|list)")

# the action schema or an example of it echoed instead of an answer
PLACEHOLDER = re.compile(r"<\s*(?:text|reply|answer|path|content|string|name|tool|value|\.\.\.)\s*>|\{\s*\"(?:reply|tool|args)\"\s*:",
                         re.IGNORECASE)

_WORD = re.compile(r"[^\W\d_][\w'\-]*", re.UNICODE)
_NUMBER = re.compile(r"\d+")
_SENTENCE_END = re.compile(r"[.!?:;\n]\s*$")


def normalise(text: str) -> str:
    """Lower case, NFKC, quotes and dashes folded, punctuation to spaces, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(_FOLD).lower()
    text = re.sub(r"(\d)[:.](\d)", r"\1 \2", text)          # 9:30 and 9.30 alike
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


def _has(fact: str, answer_norm: str) -> bool:
    f = normalise(fact)
    if not f:
        return False
    if re.search(r"(?<!\w)" + re.escape(f) + r"(?!\w)", answer_norm):
        return True
    return any(c.isdigit() for c in f) and f.replace(" ", "") in answer_norm.replace(" ", "")


def has_fact(item: str | list[str], answer: str) -> bool:
    """Whether the answer states the fact (one string, or any of a list of alternatives)."""
    norm = normalise(answer)
    return any(_has(alt, norm) for alt in ([item] if isinstance(item, str) else item))


def abstains(answer: str) -> bool:
    """Whether the answer says the notes do not say (quotes folded, lower case)."""
    folded = " ".join(unicodedata.normalize("NFKC", answer).translate(_FOLD).lower().split())
    return bool(ABSTAIN.search(folded))


def word_count(answer: str) -> int:
    return len(answer.split())


def _known_words(known: str) -> set[str]:
    return {w.lower().strip("'-").removesuffix("'s") for w in _WORD.findall(unicodedata.normalize("NFKC", known).translate(_FOLD))}


def _known_numbers(known: str) -> tuple[set[str], str]:
    text = unicodedata.normalize("NFKC", known)
    return set(_NUMBER.findall(text)), re.sub(r"\D", "", text)


def unsupported(answer: str, known: str) -> list[str]:
    """Names and numbers in the answer found nowhere in `known` (the notes, persona, question).

    A name is a capitalised word that does not start a sentence (nor follows a list marker); a
    number is a run of digits, also accepted inside a longer number of the notes written with
    spaces or dashes (a phone number split differently)."""
    words, (numbers, digits) = _known_words(known), _known_numbers(known)
    text = unicodedata.normalize("NFKC", answer).translate(_FOLD)
    out: list[str] = []
    for m in _WORD.finditer(text):
        w = m.group(0).strip("'-")
        before = text[:m.start()]
        starts = not before.strip() or _SENTENCE_END.search(before) or re.search(r"(?:^|\n)\s*(?:[-*\u2022]|\d+[.)])\s*$", before)
        if not w or not w[0].isupper() or starts or w == "I" or (len(w) <= 3 and w.isupper()):
            continue
        key = w.lower().removesuffix("'s")
        if key not in words:
            out.append(w)
    for n in _NUMBER.findall(text):
        if n not in numbers and n not in digits:
            out.append(n)
    return list(dict.fromkeys(out))


@dataclass
class Score:
    label: str
    found: list[str] = field(default_factory=list)       # required facts present (their first spelling)
    missing: list[str] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)   # forbidden facts stated
    invented: list[str] = field(default_factory=list)    # names/numbers found nowhere
    words: int = 0
    why: str = ""


def _first(item: str | list[str]) -> str:
    return item if isinstance(item, str) else item[0]


def score(question: dict, answer: str | None, *, known: str, persona: str = "",
          substituted: str | None = None) -> Score:
    """Label one answer. `answer` is the reply as the person saw it (None: there was none);
    `known` is the text the answer may draw on (every note, and the question is added here);
    `substituted` is the outcome line when the harness, not the model, had the last word."""
    text = (answer or "").strip()
    words = word_count(text)
    if substituted is not None:
        return Score("placeholder", words=words, why=f"no reply: {substituted[:160]}")
    if not text:
        return Score("placeholder", why="empty reply")
    if PLACEHOLDER.search(text):
        return Score("placeholder", words=words, why="schema or example echoed")
    persona_lines = [line.strip(" -*") for line in persona.splitlines() if len(line.strip(" -*")) >= 30]
    if any(line in text for line in persona_lines):
        return Score("placeholder", words=words, why="persona repeated")
    must = question.get("must", [])
    found = [_first(f) for f in must if has_fact(f, text)]
    missing = [_first(f) for f in must if not has_fact(f, text)]
    forbidden = [_first(f) for f in question.get("must_not", []) if has_fact(f, text)]
    invented = unsupported(text, known + "\n" + question["question"] + "\n" + persona)
    base = dict(found=found, missing=missing, forbidden=forbidden, invented=invented, words=words)
    if question["kind"] == "unanswerable":
        if abstains(text) and not forbidden and not invented:
            return Score("abstained", **base, why="said the notes do not say")
        if abstains(text):
            return Score("invented", **base, why="abstained, but stated " + ", ".join(forbidden + invented))
        return Score("invented", **base, why="answered a question the notes do not answer")
    if invented:
        return Score("invented", **base, why="not in the notes: " + ", ".join(invented))
    if forbidden:
        return Score("wrong", **base, why="stated " + ", ".join(forbidden))
    if not found:
        return Score("wrong", **base, why="abstained" if abstains(text) else "no required fact")
    if not missing and words <= MAX_WORDS:
        return Score("correct", **base)
    return Score("partial", **base, why=f"{words} words" if not missing else "missing " + ", ".join(missing))
