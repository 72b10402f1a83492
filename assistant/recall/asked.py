"""What kind of fact a question asks for, and whether the recalled notes show one at all.

Guards against a small model answering the nearest line instead of saying the notes do not say.
Asked for Marek's phone number, the 1.5B model answered with his note's "Best reached by phone
in the afternoon"; asked for the boardwalk's budget, with "budget sign-off for the boardwalk".
The words matched, so recall rightly brought the note, but the note holds no number at all.

For a few kinds of fact that have a recognisable written shape (a phone number, an email
address, an amount of money, a calendar date) this module tells, from the question's words,
that the question asks for one, and, from the recalled text, whether any note shows one. The
prompt then says so plainly ("If you were asked for a phone number: it is not in your notes").
It errs on the side of silence: a question it does not recognise, notes with anything of the
right shape (whether or not it is the fact asked for), or a `[redacted:NAME]` marker (a vault
value the model may not see could be the very fact) give no line, so it can never hide an answer
the notes hold; it only names an absence that is certain from the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from assistant.secrets.scanner import MARKER_RE

_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")


@dataclass(frozen=True)
class Kind:
    name: str              # as the prompt says it: "a phone number"
    asked: re.Pattern      # the question asks for one (lower-cased question)
    shown: re.Pattern      # a note shows one (its text as recalled) ...
    unlike: re.Pattern | None = None   # ... once text of another shape is taken out (dates are no phone numbers)


KINDS = (
    Kind("a phone number",
         re.compile(r"\b(?:phone|mobile|telephone|cell|landline|whatsapp)(?:\s+phone)?\s+(?:number|no)\b"
                    r"|\bnumber\s+(?:to|should\s+i|do\s+i|can\s+i)\s+(?:call|ring|text|phone)\b"
                    r"|\bwhat\s+is\s+\S+\s+mobile\b"),
         re.compile(r"\+?\d(?:[\s().\-/]{0,2}\d){5,}"),           # six digits or more, however spaced
         re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}:\d{2}\b")),  # ... that are not an ISO date or a time
    Kind("an email address",
         re.compile(r"\be-?mail(?:\s+address)?\b"),
         re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")),
    Kind("an amount of money",
         re.compile(r"\bhow\s+much\b"
                    r"|\b(?:what|how\s+big|how\s+large)\s+(?:is|was|are|were)\s+(?:the\s+|my\s+|our\s+|his\s+|her\s+|their\s+)?"
                    r"(?:\S+\s+){0,3}(?:budget|cost|price|fee|salary|rent|wage)s?\b"
                    r"|\bwhat\s+(?:does|did|will)\b.*\bcost\b"),
         re.compile(r"[£$€¥₹]\s*\d|\d\s*(?:k|m|bn)?\s*(?:£|\$|€|gbp|usd|eur|pounds?|dollars?|euros?|quid)\b"
                    r"|\b(?:gbp|usd|eur)\s*\d", re.IGNORECASE)),
    Kind("a date",
         re.compile(r"\b(?:birthday|anniversary|date\s+of\s+birth|what\s+date|which\s+date|on\s+what\s+day)\b"),
         re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?\b"
                    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b"
                    rf"|\b(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?\b", re.IGNORECASE)),
)


def asked_kind(question: str) -> Kind | None:
    """The kind of fact `question` asks for, when it is one this module recognises, else None."""
    plain = " ".join(question.lower().split())
    for kind in KINDS:
        if kind.asked.search(plain):
            return kind
    return None


def absent_kind(question: str, texts: Iterable[str]) -> str | None:
    """The name of the kind of fact `question` asks for ("a phone number") when none of `texts`
    (the recalled notes' text) shows anything of its shape; None when the question asks for no
    recognised kind, or some text shows one, or nothing was recalled (that has its own line)."""
    kind = asked_kind(question)
    shown = [t for t in texts if t and t.strip()]
    # a redaction marker: what the scanner hid from the model may be the very fact asked for
    if kind is None or not shown or any(MARKER_RE.search(t) for t in shown):
        return None
    if any(kind.shown.search(kind.unlike.sub(" ", t) if kind.unlike else t) for t in shown):
        return None
    return kind.name


__all__ = ["KINDS", "Kind", "absent_kind", "asked_kind"]
