"""Is a reply an answer? The check that keeps placeholders and echoes from reaching the person.

Guards the first thing a person meets: a small model asked for `{"reply": ...}` may copy the
format's description instead of answering (`<text>`), send nothing, or repeat its own persona or
rules back. Such a step is invalid, like a malformed one: the turn loop tells the model why and
asks again, a bounded number of times, and then fails with one clear line. Nothing of such a
reply reaches the screen: a streamed reply is held back until it is longer than the stream's
holdback (assistant.agent.streaming.SafeStream), and an unusable one is never finished. The checks are on
the reply's text alone, plus the instructions the model was given (persona, rules, tool docs:
never the notes, which a good answer may quote).
"""

from __future__ import annotations

import json
import re

# How many replies in a row may be unusable before the turn fails (the first try included).
MAX_REPLY_TRIES = 3

_PLACEHOLDER_WORDS = {
    "text", "reply", "answer", "your answer", "the answer", "response", "your response", "message",
    "string", "str", "none", "null", "n/a", "...", "…", "reply text", "answer text", "your reply",
}
_BRACKETED = re.compile(r"^\s*(<[^<>\n]{0,80}>|\{\{[^{}\n]{0,80}\}\}|\$\{[^{}\n]{0,80}\})\s*$")
_SCHEMA_ECHO = re.compile(r'[{,]\s*"(reply|tool|args)"\s*:')
_WS = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_REPEATED_UNIT = re.compile(r"(.{1,40}?)(?:\s*\1){3,}", re.DOTALL)   # a short unit four times in a row
_TOKEN = re.compile(r"[^\W_]+")
_GRAM = 6          # a repeat is judged on runs of this many words
_REPEATED = 0.8    # ... and is one when this share of the reply's runs stand in the instructions


def _plain(text: str) -> str:
    return _WS.sub(" ", text).strip().lower()


def _bare(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


# A refusal to help, as the reply's opening words ("I'm sorry, but I can't assist with that.").
_REFUSAL = re.compile(r"^\W*(?:(?:(?:i am|i'm|i’m)\s+)?sorry[,.!]?\s*(?:but\s+)?)?i\s+(?:can ?not|can'?t|can’t|am unable to|"
                      r"am not able to|won'?t be able to)\s+(?:assist|help)\b", re.IGNORECASE)


def refuses(text: str) -> bool:
    """Does the reply open by refusing to help ("I'm sorry, but I can't assist with that.")?"""
    return bool(_REFUSAL.match(text))


def unusable_reply(text: str, instructions: str = "", message: str = "", *, saved: bool = False) -> str | None:
    """Why `text` is no answer (a short reason with no quote of it), or None when it may be one.

    Unusable: empty; a placeholder (`<text>`, `{{answer}}`, a bare word of the format such as
    "text" or "reply"); an echo of the action format (`{"reply": ...}` inside the reply); a
    repeat of the instructions: most of its runs of six words stand in the persona, rules or tool
    docs; a loop (`degenerate`); the person's own `message` said back word for word (the 1.5B
    model on JSON actions answered every fact it was told with the fact itself); with `saved`
    (a save landed in this turn), a refusal to help: the 1.5B model answered every fact it had
    just saved with "I'm sorry, but I can't assist with that.", which tells the person the
    opposite of what was done."""
    plain = _plain(text)
    if not plain:
        return "the reply was empty"
    bare = plain.strip(" .:!?\"'`…")
    if _BRACKETED.match(text) or not bare or bare in _PLACEHOLDER_WORDS:
        return "the reply was a placeholder from the format's description, not an answer"
    if _SCHEMA_ECHO.search(text):
        return "the reply repeated the action format instead of answering"
    if _repeats(plain, instructions.lower()):
        return "the reply repeated your instructions instead of answering"
    if degenerate(plain):
        return "the reply repeated itself (a loop, not an answer)"
    if saved and refuses(text):
        return "the reply refused to help, but your tool call had already saved it"
    # four words or more: "Hello!" answered with "Hello!" is a greeting, not a parrot
    if message and len(_bare(message).split()) >= 4 and _bare(text) == _bare(message):
        return "the reply only repeated the person's message"
    return None


def degenerate(text: str) -> bool:
    """A small model's loop: a short unit repeated four or more times in a row that makes up
    most of the reply ("1,1,1,1", "ab ab ab ab", a sentence over and over), or a list of a dozen
    numbers or more with hardly a word between them ("1,2,3,4,5,...")."""
    plain = _plain(text)
    if not plain:
        return False
    # a unit of one character ("aaaa", "!!!!") is emphasis or padding, not a model's loop
    looped = sum(len(m.group(0)) for m in _REPEATED_UNIT.finditer(plain)
                 if len(m.group(0)) >= 12 and len(set(m.group(1).strip())) >= 2)
    if looped >= 0.5 * len(plain):
        return True
    tokens = _TOKEN.findall(plain)
    numbers = [t for t in tokens if t.isdigit()]
    return len(numbers) >= 12 and len(numbers) >= 0.8 * len(tokens)


def _grams(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + _GRAM]) for i in range(len(words) - _GRAM + 1)}


def _repeats(reply: str, instructions: str) -> bool:
    """Most of the reply's runs of words stand in the instructions (persona, rules, tool docs)."""
    mine = _WORD.findall(reply)
    if len(mine) < _GRAM or not instructions:
        return False
    grams = [tuple(mine[i:i + _GRAM]) for i in range(len(mine) - _GRAM + 1)]
    theirs = _grams(_WORD.findall(instructions))
    return sum(g in theirs for g in grams) >= _REPEATED * len(grams)


# The person's words are quoted in a correction only up to this length (a long message is in the
# prompt already; quoting it again would cost its tokens twice).
QUOTE_CHARS = 240


def correction(why: str, *, native: bool = False, telling: bool = False, message: str = "",
               saved: bool = False) -> str:
    """What the model is told after an unusable reply (the turn loop adds it as an error);
    `native`: the model answers in plain text (assistant.agent.native_tools), not in JSON;
    `telling`: the person's message tells rather than asks, and a tool that saves is offered;
    `message` (with `telling`): the person's words, quoted as what a saved line may say;
    `saved`: a save landed in this turn, and only a reply may follow."""
    if saved:
        return (f"{why}. The save landed. Now tell the person in one short line, in your own words, "
                "what you saved and in which note.")
    if telling:
        call = ("a tool call (<tool_call> ... </tool_call>)" if native
                else 'a tool call ({"tool": ..., "args": ...})')
        said = " ".join(message.split())
        # the 1.5B model, told the Kirkstall survey date, saved a line its note already had and
        # then said the person's message back three times: the new fact is what to save
        words = (f' The text to save is the new fact, in the person\'s words or yours, e.g. {json.dumps(said, ensure_ascii=False)}.'
                 if said and len(said) <= QUOTE_CHARS else "")
        return (f"{why}. The person told you something. If it is worth remembering, save it now with "
                f"{call}: memory_write for a new note, memory_edit for a note you read.{words} Otherwise "
                "reply in your own words in one short line.")
    if native:
        return (f"{why}. Answer the person's last message itself, in your own words, as plain text. "
                "If your notes do not say, reply that your notes do not say.")
    return (f"{why}. Answer the person's last message itself: put your actual answer, in your own "
            "words, as the value of \"reply\". If your notes do not say, reply that your notes "
            "do not say.")


__all__ = ["MAX_REPLY_TRIES", "correction", "degenerate", "refuses", "unusable_reply"]
