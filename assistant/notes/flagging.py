"""Instruction-shaped text: does a note (being written, loaded or recalled) read as orders to the assistant?

Guards against memory poisoning (issue 24 item 5): a document the assistant read says "remember
this rule" and the rule lands in memory/, where it acts in later sessions. A note is *flagged*,
never rejected or changed: the flag is advice shown to the person above an approval question, in
the catalog and in recall (`FLAG`), so a rule slipped into a write stands out.

`flag_reason(text)` returns a short fixed phrase saying why (it never quotes the text, so a flag
can show no secret), or None. Flagged when the text holds any of:
- a chat role marker (`<|im_start|>`, `[INST]`, `### Instruction`, a line starting `system:`,
  `[system note]`, `<!-- assistant ...`);
- "ignore previous/prior instructions" and its kin;
- a tool name of the assistant (`memory_write`, `web_fetch`, `file_write`, ...);
- a URL holding a data placeholder (`{...}`, `$VAR`, `<secret>`, an empty `?key=`, `=API_KEY`);
- words addressed to the assistant (`Assistant, ...`, `to the assistant:`, `if you are an AI`,
  `AI assistant reading this`, `(the assistant)`);
- an order to write to the assistant's memory (`save this rule to your memory`, `store this in
  your notes`, `update your long-term memory`);
- within one sentence, the assistant named as the one to act together with a standing rule
  (`the assistant should ... in future conversations`, `assistants ... going forward`).
A person's own imperatives ("remember to water the tomatoes", "from now on run on Sundays",
"never open the oven door") name no assistant and are not flagged.

The text is folded before it is looked at, so the cheap disguises of these same words do not
hide them: invisible format characters (zero-width spaces, soft hyphens, bidi marks) are
dropped, compatibility forms (full-width letters) folded (NFKC), Cyrillic and Greek look-alike
letters in a word of Latin letters read as the Latin ones, and markdown around the words
(a list bullet, a quote marker, emphasis, code ticks) and a `label:` before them are seen past.
"""

from __future__ import annotations

import re
import unicodedata

FLAG_WORDS = "flagged: reads like an instruction"
FLAG = f"[{FLAG_WORDS}]"

# The assistant's tool names (tests/notes/test_instruction_flag.py checks them against the tools).
TOOL_NAMES = ("file_read", "file_write", "file_list", "memory_write", "memory_edit", "memory_read",
              "memory_list", "memory_search", "web_fetch")

_I = re.IGNORECASE
_IM = re.IGNORECASE | re.MULTILINE

_ROLE_TOKENS = re.compile(
    r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\s*\|>"
    r"|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>", _I)
_ROLE_HEADING = re.compile(r"^[ \t]*#{1,6}\s*(?:instructions?|system|response|assistant)\b", _IM)
_ROLE_LINE = re.compile(r"^[ \t]*(?:system|assistant|developer)[ \t]*:", _IM)
_DIALOGUE = re.compile(r"^[ \t]*(?:user|human)[ \t]*:.*\n(?:.*\n){0,8}?[ \t]*(?:assistant|ai|bot)[ \t]*:", _IM)
_ROLE_TAG = re.compile(r"\[\s*(?:system|assistant|ai)(?:\s+(?:note|message|prompt|instruction))?\s*\]"
                       r"|<!--\s*(?:system|assistant|ai)\b", _I)

_IGNORE = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?"
    r"(?:previous|prior|earlier|above|preceding|former|original|existing|system)\s+(?:[a-z]{1,20}\s+)?"
    r"(?:instructions?|rules?|prompts?|directions?|messages?|guidelines?)", _I)

_TOOL = re.compile(r"\b(?:" + "|".join(TOOL_NAMES) + r")\b", _I)

_URL = re.compile(r"(?:https?://|\b(?:[a-z0-9-]{1,63}\.){1,8}[a-z]{2,24}/)[^\s\"'<>]*", _I)
_PLACEHOLDER_IN_URL = re.compile(
    r"\{[^}]{0,80}\}?|\$\{?[A-Za-z_]|%s\b|=[A-Z_]{0,40}(?:KEY|TOKEN|SECRET|PASSWORD|PASS|NOTES?|DATA)[A-Z_]{0,40}\b")
_PLACEHOLDER_AFTER = re.compile(r"\s*(?:<[^>\n]{1,80}>|\{[^}\n]{1,80}\})")

_ASSISTANT = r"(?:ai\s+)?(?:assistant|chatbot|language\s+model|llm|ai\s+model|ai)"
_ADDRESSED = re.compile(
    r"(?:^|[.!?;:]|\n)[ \t]*(?:dear\s+|hey\s+|attention\s+)?" + _ASSISTANT + r"\s*[,:]"
    r"|\bto\s+(?:the|any|all|every)\s+" + _ASSISTANT + r"s?\s*[:,]"
    r"|\bif\s+you\s+are\s+(?:an?\s+)?" + _ASSISTANT +
    r"|\b" + _ASSISTANT + r"s?\s+(?:reading|summari[sz]ing|processing|parsing|seeing)\s+this"
    r"|\(\s*(?:the\s+|an?\s+)?" + _ASSISTANT + r"(?:\s+\w+)?\s*\)", _IM)

_WRITE_VERB = r"(?:save|store|add|write|record|update|put|keep|persist|commit|log)"
_MEMORY_ORDER = re.compile(
    r"\b" + _WRITE_VERB + r"\b[^.\n]{0,40}?\b(?:your|its)\s+(?:long[- ]term\s+|permanent\s+)?(?:memory|memories|notes)\b" +
    r"|\b(?:your|its)\s+(?:long[- ]term\s+|permanent\s+)?(?:memory|memories|notes)\b[^.\n]{0,20}?\b" + _WRITE_VERB + r"\b" +
    r"|\b" + _WRITE_VERB + r"\s+(?:this|it|the\s+following)?\s*(?:as\s+)?(?:an?\s+)?(?:permanent\s+|standing\s+)?"
    r"(?:rule|preference|instruction)?\s*(?:to|in|into)\s+(?:long[- ]term\s+)?memory\b"
    r"|\bpersist\s+(?:this|it|to\s+memory|across\s+sessions)"
    r"|\bremember\s+(?:this\s+|that\s+)?(?:permanently|forever|for\s+(?:all\s+)?(?:future|later)\s+(?:sessions?|chats?|conversations?))"
    r"|\b(?:memory\s+update|standing\s+instruction|new\s+instruction)\b", _I)

_ASSISTANT_NAMED = re.compile(r"\b(?:the|an?|any|your|each|every)\s+(?:\w+\s+)?" + _ASSISTANT + r"s?\b|\bassistants\b"
                              r"|\bAI\b", _I)
_STANDING = re.compile(
    r"\b(?:from\s+now\s+on|going\s+forward|from\s+today|permanently|for\s+next\s+time|next\s+time"
    r"|(?:for|in)\s+(?:all\s+)?(?:future|later|subsequent|coming)\s+(?:sessions?|chats?|conversations?)"
    r"|(?:every|each|all)\s+(?:future\s+|later\s+)?(?:sessions?|chats?|conversations?|repl(?:y|ies)|answers?|responses?|turns?)"
    r"|keep\s+in\s+mind|(?:remember|note)\s+(?:this|that)|keep\s+(?:it|this)\s+in\s+(?:its\s+|your\s+)?(?:notes|memory)"
    r"|(?:jot|note|write)\s+(?:it\s+|this\s+)?down|noting|in\s+its\s+(?:long[- ]term\s+)?notes)\b", _I)
_IGNORE_WORDS = ("ignore", "disregard", "forget", "override", "bypass")
_ASSISTANT_WORDS = ("assistant", "chatbot", "llm", "language model")
_MEMORY_WORDS = ("memor", "notes", "persist", "instruction", "remember")
_PLACEHOLDER_CHARS = ("{", "$", "%s", "=", "<")
_SENTENCE_ENDS = ".!?\n"
_SPACES = re.compile(r"[^\S\n]{2,}|[^\S\n ]")
_BLANK_LINES = re.compile(r"\n(?:[^\S\n]*\n)+")


# Look-alike letters (Cyrillic, Greek) that stand for Latin ones in a disguised word.
_LOOKALIKES = str.maketrans({
    "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0443": "y",
    "\u0445": "x", "\u0456": "i", "\u0458": "j", "\u0455": "s", "\u0501": "d", "\u04cf": "l",
    "\u04bb": "h", "\u051b": "q", "\u051d": "w", "\u0410": "A", "\u0412": "B", "\u0415": "E",
    "\u041a": "K", "\u041c": "M", "\u041d": "H", "\u041e": "O", "\u0420": "P", "\u0421": "C",
    "\u0422": "T", "\u0425": "X", "\u0406": "I", "\u0405": "S", "\u0408": "J", "\u03bf": "o",
    "\u03b9": "i", "\u03b1": "a", "\u03bd": "v", "\u0391": "A", "\u0392": "B", "\u0395": "E",
    "\u0396": "Z", "\u0397": "H", "\u0399": "I", "\u039a": "K", "\u039c": "M", "\u039d": "N",
    "\u039f": "O", "\u03a1": "P", "\u03a4": "T", "\u03a7": "X", "\u03a5": "Y",
})
_LOOKALIKE_CHARS = "".join(chr(c) for c in _LOOKALIKES)
# a word made only of Latin letters and look-alikes, holding at least one look-alike
_DISGUISED_WORD = re.compile(f"[A-Za-z{_LOOKALIKE_CHARS}]*[{_LOOKALIKE_CHARS}][A-Za-z{_LOOKALIKE_CHARS}]*")
_MARKDOWN_MARKS = re.compile(r"[*`~]+")
_LINE_PREFIX = re.compile(r"^([ \t]*)(?:(?:[-+>]|\d{1,3}[.)])[ \t]*)+", re.MULTILINE)


def _folded(text: str) -> str:
    """The text as it reads: format characters dropped, NFKC, look-alike letters in Latin words
    made Latin, markdown marks and list/quote prefixes taken off. Linear in the text's length."""
    if not text.isascii():
        text = "".join(c for c in text if unicodedata.category(c) != "Cf")
        text = unicodedata.normalize("NFKC", text)
        text = _DISGUISED_WORD.sub(lambda m: m.group(0).translate(_LOOKALIKES), text)
    if "*" in text or "`" in text or "~" in text:
        text = _MARKDOWN_MARKS.sub("", text)
    return _LINE_PREFIX.sub(r"\1", text)


def _hits(low: str, words: tuple[str, ...]) -> list[int]:
    """Where any of `words` starts in `low` (found by str.find: the patterns run only near them)."""
    out: list[int] = []
    for word in words:
        at = low.find(word)
        while at != -1:
            out.append(at)
            at = low.find(word, at + 1)
    return sorted(out)


def _assistant_hits(low: str) -> list[int]:
    found = _hits(low, _ASSISTANT_WORDS)
    at = low.find("ai")
    while at != -1:       # "ai" as a word, not in "again"
        if (at == 0 or not low[at - 1].isalnum()) and (at + 2 == len(low) or not low[at + 2].isalnum()):
            found.append(at)
        at = low.find("ai", at + 1)
    return sorted(found)


def _windows(hits: list[int], size: int, before: int, after: int) -> list[list[int]]:
    """The windows around `hits` (sorted), overlapping ones merged."""
    windows: list[list[int]] = []
    for at in hits:
        lo, hi = max(0, at - before), min(size, at + after)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
    return windows


def _near(pattern: re.Pattern[str], text: str, hits: list[int], before: int, after: int) -> bool:
    """Does `pattern` match within a window around one of `hits`? Searched in place (pos,
    endpos), so `^` still means a real line start."""
    return any(pattern.search(text, lo, hi) for lo, hi in _windows(hits, len(text), before, after))


def _placeholder_url(text: str, low: str) -> bool:
    """A URL holding a placeholder, or with one right after it (the URLs near a placeholder's
    characters are the only ones looked at)."""
    for lo, hi in _windows(_hits(low, _PLACEHOLDER_CHARS), len(text), 300, 300):
        for m in _URL.finditer(text, lo, hi):
            url, end = m.group(0), m.end()
            if _PLACEHOLDER_IN_URL.search(url):
                return True
            nxt = text[end] if end < len(text) else ""
            if url.endswith("=") and (not nxt or nxt.isspace() or nxt in "<{"):
                return True
            if nxt in ("<", "{", " ") and (nxt != " " or url.endswith(("=", "/"))) and _PLACEHOLDER_AFTER.match(text, end):
                return True
    return False


SENTENCE_REACH = 300     # characters looked at either side of a mention for its sentence's ends


def _assistant_given_standing_rule(text: str, low: str, hits: list[int]) -> bool:
    """In the sentence around a mention of the assistant: it is named and given a standing rule.
    A sentence is cut at SENTENCE_REACH characters either side; each is looked at once."""
    until = -1
    for at in hits:
        if at < until:
            continue          # this mention's sentence was just looked at
        lo = max(0, at - SENTENCE_REACH)
        start = max([low.rfind(c, lo, at) for c in _SENTENCE_ENDS] + [lo - 1]) + 1
        hi = min(len(text), at + SENTENCE_REACH)
        ends = [e for e in (low.find(c, at, hi) for c in _SENTENCE_ENDS) if e != -1]
        until = min(ends) + 1 if ends else hi
        sentence = text[start:until]
        if _ASSISTANT_NAMED.search(sentence) and _STANDING.search(sentence):
            return True
    return False


def _role_marker(text: str, low: str) -> bool:
    """A chat role marker; each pattern runs only if the text holds what it needs."""
    if ("<" in text or "[" in text) and _ROLE_TOKENS.search(text):     # every token starts with < or [
        return True
    if "#" in text and _ROLE_HEADING.search(text):
        return True
    if any(w in low for w in ("system", "assistant", "developer")) and _ROLE_LINE.search(text):
        return True
    if ("user" in low or "human" in low) and _DIALOGUE.search(text):
        return True
    return ("[" in text or "<!--" in text) and _ROLE_TAG.search(text) is not None


def flag_reason(text: str) -> str | None:
    """Why `text` reads like instructions to the assistant (a fixed phrase, never a quote of the
    text), or None. Advice only: callers show it, they never refuse or change the text for it.
    Runs of spaces and of blank lines are folded first; the costlier patterns run only in small
    windows around the words they need (found with str.find), and every repeat in them is
    bounded, so the time grows with the text's length, not its square."""
    if not isinstance(text, str) or not text:
        return None
    text = _folded(text)
    if "  " in text or "\t" in text or "\r" in text or not text.isascii():
        text = _SPACES.sub(" ", text)
    if "\n\n" in text or "\n " in text:
        text = _BLANK_LINES.sub("\n", text)
    low = text.lower()
    if _role_marker(text, low):
        return "it holds a chat role marker"
    if _near(_IGNORE, text, _hits(low, _IGNORE_WORDS), 2, 120):
        return "it says to ignore earlier instructions"
    if "_" in text and _near(_TOOL, text, _hits(low, TOOL_NAMES), 1, 16):
        return "it names one of the assistant's tools"
    if _placeholder_url(text, low):
        return "it holds a URL with a data placeholder"
    assistant = _assistant_hits(low)
    if _near(_ADDRESSED, text, assistant, 40, 80):
        return "it is addressed to the assistant"
    if _near(_MEMORY_ORDER, text, _hits(low, _MEMORY_WORDS), 80, 100):
        return "it tells the assistant to write to its memory"
    if _assistant_given_standing_rule(text, low, assistant):
        return "it gives the assistant a standing rule"
    return None


def warning_line(text: str) -> str:
    """The warning shown above an approval question for flagged content, or "" if not flagged."""
    reason = flag_reason(text)
    if reason is None:
        return ""
    return (f"warning: {FLAG} {reason}; text that tells the assistant what to do may have come "
            "from something it read, not from you\n")


__all__ = ["FLAG", "TOOL_NAMES", "flag_reason", "warning_line"]
