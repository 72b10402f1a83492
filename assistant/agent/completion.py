"""The answer protocol for a base model (`[model] protocol = "completion"`): document completion.

Guards what a model that cannot follow a tool protocol still does well: continue a plain page.
The embedded Gemma 3 270M is a base model (its GGUF has no chat template and no fine-tune tag):
asked for JSON actions it loops on number lists and calls tools aimlessly. Here a turn is one
page of plain text -- the recalled notes, a few worked questions over a made-up note (real
answers, none a placeholder a model could copy), the conversation so far, then
"Question: ...\\nAnswer:" -- and the model's continuation up to the end of its line (or the
next "Question:") is the reply.

- Every piece of the page is text: the backend tokenizes it with special-token parsing off, so a
  note cannot forge a control token.
- No tools are offered, so such a model answers from what recall put on the page and cannot
  change memory (memory capture needs a model that can use tools: docs/model.md).
- A reply is checked like any other (assistant.agent.usable: empty, a placeholder, a loop) and
  also must not be a copy of a worked example's answer; an unusable one is asked again with
  another seed, a bounded number of times.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from assistant.recall.asked import absent_kind

# Most tokens one completion reply may take (the stop strings end most replies much sooner).
MAX_ANSWER_TOKENS = 96
# Where a reply ends: the end of its line (a base model goes on with a "Note: ..." of its own or
# the next question), or the next question on the same line.
STOPS = ("\n", "Question:")
# How many earlier exchanges of a chat stay on the page.
MAX_EXCHANGES = 3

ABSTENTION = "My notes do not say."

INTRO = ("A reading test. The notes belong to the person asking (\"I\", \"me\" and \"my\" in a "
         "question are that person). Each answer is one or two short sentences that take their facts "
         f"from the notes only; when the notes do not say, the answer is \"{ABSTENTION}\"")

EXAMPLE_NOTES = (
    "Note people/tom.md: Tom Reyes - neighbour. Tom lives at number 12 and keeps bees. "
    "His daughter is called Ivy.",
    "Note garden.md: Garden jobs. Prune the apple tree in February. The shed key is under the blue pot.",
)

# (question, answer) over EXAMPLE_NOTES only
WORKED = (
    ("What do you remember about Tom?", "Tom Reyes is my neighbour: he lives at number 12, keeps bees, "
                                        "and his daughter is called Ivy."),
    ("What does my neighbour keep?", "Tom keeps bees."),
    ("When do I prune the apple tree?", "In February."),
    ("What is Tom's email address?", ABSTENTION),
    ("Where is the shed key?", "Under the blue pot."),
    ("What car does Ivy drive?", ABSTENTION),
)

_WS = re.compile(r"\s+")
_ENDS = ".!?:;,"
_FRONTMATTER = re.compile(r"\A---\n(.*?)\n---\n?", re.DOTALL)
_DESCRIPTION = re.compile(r"^description:\s*(.*)$", re.MULTILINE)


def _one_line(text: str) -> str:
    return _WS.sub(" ", text).strip()


def note_line(label: str, text: str) -> str:
    """A recalled note as one line of the page: its label, its description, its body."""
    body = text
    head = _FRONTMATTER.match(text)
    if head:
        desc = _DESCRIPTION.search(head.group(1))
        body = ((desc.group(1).strip().strip("\"'") + ". ") if desc else "") + text[head.end():]
    # one line, each of the note's lines a sentence ("Lina Okafor - Sam's sister, lives in Bristol.")
    lines = [ln.strip(" \t-*#") for ln in body.splitlines()]
    sentences = [ln if ln[-1] in _ENDS else ln + "." for ln in lines if ln]
    return f"Note {_one_line(label)}: {_one_line(' '.join(sentences))}"


def instructions() -> str:
    """The fixed part of every page (a reply must not merely repeat it)."""
    worked = "\n\n".join(f"Question: {q}\nAnswer: {a}" for q, a in WORKED)
    return INTRO + "\n\nExample notes:\n" + "\n".join(EXAMPLE_NOTES) + "\n\n" + worked


def render_page(question: str, recalled: Iterable[tuple[str, str]],
                exchanges: Sequence[tuple[str, str]] = ()) -> str:
    """The page the model continues: instructions and worked questions, the recalled notes
    ((label, redacted text) pairs), this chat's last exchanges, and the question."""
    recalled = [(label, text) for label, text in recalled if label]
    notes = [note_line(label, text) for label, text in recalled]
    missing = absent_kind(question, [text for _, text in recalled])
    if missing:     # assistant.recall.asked: the question asks for a kind of fact none of them shows
        notes.append(f"(None of these notes shows {missing}.)")
    page = [instructions(), "", "Notes:", *(notes or ["(no note matches this question)"]), ""]
    for q, a in list(exchanges)[-MAX_EXCHANGES:]:
        page += [f"Question: {_one_line(q)}", f"Answer: {_one_line(a)}", ""]
    page += [f"Question: {_one_line(question)}", "Answer:"]
    return "\n".join(page)


def reply_from(text: str) -> str:
    """The reply in a continuation: up to the first stop, trimmed."""
    cut = len(text)
    for stop in STOPS:
        i = text.find(stop)
        if i != -1:
            cut = min(cut, i)
    return text[:cut].strip()


def copies_an_example(reply: str) -> bool:
    """The reply is a worked example's answer (other than the abstention, a real answer here)."""
    mine = _one_line(reply).lower().rstrip(".")
    return any(mine == a.lower().rstrip(".") for _, a in WORKED if a != ABSTENTION)


__all__ = ["ABSTENTION", "MAX_ANSWER_TOKENS", "STOPS", "copies_an_example", "instructions", "note_line",
           "render_page", "reply_from"]
