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
"""

from __future__ import annotations

import re

FLAG = "[flagged: reads like an instruction]"

# The assistant's tool names (tests/notes/test_instruction_flag.py checks them against the tools).
TOOL_NAMES = ("file_read", "file_write", "file_list", "memory_write", "memory_edit", "memory_read",
              "memory_list", "memory_search", "web_fetch")

_I = re.IGNORECASE
_IM = re.IGNORECASE | re.MULTILINE

_ROLE_TOKENS = re.compile(
    r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\s*\|>"
    r"|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>", _I)
_ROLE_HEADING = re.compile(r"^\s*#{1,6}\s*(?:instructions?|system|response|assistant)\b", _IM)
_ROLE_LINE = re.compile(r"^\s*(?:system|assistant|developer)\s*:", _IM)
_DIALOGUE = re.compile(r"^\s*(?:user|human)\s*:.*\n(?:.*\n)*?\s*(?:assistant|ai|bot)\s*:", _IM)
_ROLE_TAG = re.compile(r"\[\s*(?:system|assistant|ai)(?:\s+(?:note|message|prompt|instruction))?\s*\]"
                       r"|<!--\s*(?:system|assistant|ai)\b", _I)

_IGNORE = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?"
    r"(?:previous|prior|earlier|above|preceding|former|original|existing|system)\s+"
    r"(?:instructions?|rules?|prompts?|directions?|messages?|guidelines?)", _I)

_TOOL = re.compile(r"\b(?:" + "|".join(TOOL_NAMES) + r")\b", _I)

_URL = re.compile(r"(?:https?://|\b(?:[a-z0-9-]+\.)+[a-z]{2,}/)[^\s\"'<>]*", _I)
_PLACEHOLDER_IN_URL = re.compile(
    r"\{[^}]*\}?|\$\{?[A-Za-z_]\w*|%s\b|=[A-Z_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASS|NOTES?|DATA)[A-Z_]*\b")
_PLACEHOLDER_AFTER = re.compile(r"\s*(?:<[^>\n]{1,80}>|\{[^}\n]{1,80}\})")

_ASSISTANT = r"(?:ai\s+)?(?:assistant|chatbot|language\s+model|llm|ai\s+model|ai)"
_ADDRESSED = re.compile(
    r"(?:^|[.!?;]\s+|\n)\s*(?:dear\s+|hey\s+|attention\s+)?" + _ASSISTANT + r"\s*[,:]"
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
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")


def _placeholder_url(text: str) -> bool:
    for m in _URL.finditer(text):
        url = m.group(0)
        if _PLACEHOLDER_IN_URL.search(url):
            return True
        if url.endswith("=") and (m.end() == len(text) or text[m.end()].isspace() or text[m.end()] in "<{"):
            return True
        if url.endswith(("=", "/")) and _PLACEHOLDER_AFTER.match(text, m.end()):
            return True
        if _PLACEHOLDER_AFTER.match(text, m.end()) and text[m.end()] in "<{":
            return True
    return False


def _assistant_given_standing_rule(text: str) -> bool:
    for m in _SENTENCE.finditer(text):
        sentence = m.group(0)
        if _ASSISTANT_NAMED.search(sentence) and _STANDING.search(sentence):
            return True
    return False


def flag_reason(text: str) -> str | None:
    """Why `text` reads like instructions to the assistant (a fixed phrase, never a quote of the
    text), or None. Advice only: callers show it, they never refuse or change the text for it."""
    if not isinstance(text, str) or not text:
        return None
    if (_ROLE_TOKENS.search(text) or _ROLE_HEADING.search(text) or _ROLE_LINE.search(text)
            or _DIALOGUE.search(text) or _ROLE_TAG.search(text)):
        return "it holds a chat role marker"
    if _IGNORE.search(text):
        return "it says to ignore earlier instructions"
    if _TOOL.search(text):
        return "it names one of the assistant's tools"
    if _placeholder_url(text):
        return "it holds a URL with a data placeholder"
    if _ADDRESSED.search(text):
        return "it is addressed to the assistant"
    if _MEMORY_ORDER.search(text):
        return "it tells the assistant to write to its memory"
    if _assistant_given_standing_rule(text):
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
