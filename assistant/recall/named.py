"""Who or what a question names, and which recalled notes are about them.

Guards against a small model answering about the wrong person. Asked "When is Marek's birthday?",
the 1.5B model answered "14 March": Lina's note was recalled too (it shares "birthday") and holds a
date, Marek's holds none. Asked "Where does my sister Ana live?", it answered "Bristol" from
Lina's note ("Sam's sister, lives in Bristol"), though Ana's note came first and said Porto.

A name here is a capitalised word inside a sentence (a sentence's first word is capitalised
anyway): "Marek's", "Ana", "Kirkstall", "Monday". When the question names someone or something and
some recalled note mentions a name (in its path, description or text, at the start of a word, so
"Mondays" mentions Monday), the recalled notes that mention none of the names are left out: they
share only the question's other words. The person's own pinned notes (index.md) stay for a
question in the first person ("the studio where Marek and I work"). It errs on the side of
keeping: a question with no name, or recalled notes none of which mention one, keep every note.

Names written next to each other are one full name ("Marek Novak"). Asked "What is Marek Novak's
phone number?", the 1.5B model gave the number in the note of his neighbour Marek Nowak, which
was recalled beside his because it mentions "Marek". When some recalled note mentions every word
of a full name, the notes that mention only some of them are not about that name; when none
does, the notes that mention any of its words are.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence, TypeVar

from assistant.recall.index import MAX_QUERY_CHARS, STOPWORDS

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_SENTENCE_END = ".?!:;\n"
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself)\b", re.IGNORECASE)

T = TypeVar("T")


def name_groups(question: str) -> list[list[str]]:
    """The full names `question` holds, lower-cased, in order: runs of capitalised words that do
    not start a sentence and are not stopwords ("I", "The"), written next to each other
    ("Marek Novak's" is one, ["marek", "novak"]; "Marek and Lina" two)."""
    text = question[:MAX_QUERY_CHARS]
    groups: list[list[str]] = []
    last_end = -1
    for m in _WORD.finditer(text):
        word = m.group(0)
        i = m.start() - 1
        while i >= 0 and text[i].isspace() and text[i] != "\n":
            i -= 1
        low = word.lower()
        if (not word[0].isupper() or i < 0 or text[i] in _SENTENCE_END   # a sentence's first word
                or low in STOPWORDS or len(low) < 2):
            continue
        next_to_last = last_end >= 0 and text[last_end:m.start()].isspace() and "\n" not in text[last_end:m.start()]
        if next_to_last and groups:
            groups[-1].append(low)
        else:
            groups.append([low])
        last_end = m.end()
    return groups


def names_in(question: str) -> list[str]:
    """The names `question` holds, lower-cased, in order, each once (the words of name_groups)."""
    out: list[str] = []
    for group in name_groups(question):
        out.extend(n for n in group if n not in out)
    return out


def mentions(text: str, names: Sequence[str]) -> bool:
    """Whether `text` has a word starting with one of `names` (case-insensitive)."""
    low = text.lower()
    return any(re.search(r"(?<![^\W_])" + re.escape(n), low) for n in names)


_THEMSELF = re.compile(r"\bI\b|\b(?:me|myself)\b", re.IGNORECASE)


def the_person_themself(question: str) -> bool:
    """Whether the question is about the person, not only about someone of theirs: "What do I
    do for a living?", "my sister and I", "older than me"; not "What does my sister do?"."""
    return any(m.group(0) != "i" for m in _THEMSELF.finditer(question[:MAX_QUERY_CHARS]))


def in_first_person(question: str) -> bool:
    """Whether the person asks about themselves too ("the studio where Marek and I work")."""
    return bool(_FIRST_PERSON.search(question[:MAX_QUERY_CHARS]))


def about_the_names(question: str, items: Sequence[T], text_of: Callable[[T], str],
                    about_the_person: Callable[[T], bool] = lambda _: False) -> list[T]:
    """`items` (recalled notes) without those that are about none of the question's names, when
    the question names someone and at least one item is about them; else `items` unchanged.
    An item is about a full name (name_groups) when it mentions every word of it, or, if no item
    does, any word of it. `text_of(item)` is the text searched: the note's path, description and
    text. An item for which `about_the_person(item)` holds (the person's own pinned note) is kept
    when the question is in the first person: "I" names the person."""
    groups = name_groups(question)
    if not groups:
        return list(items)
    texts = [text_of(it) for it in items]
    about = [False] * len(items)
    for group in groups:
        said = [[mentions(t, [n]) for n in group] for t in texts]
        full = [all(s) for s in said]
        chosen = full if any(full) else [any(s) for s in said]
        about = [a or c for a, c in zip(about, chosen)]
    if not any(about):
        return list(items)
    me = in_first_person(question)
    return [it for it, a in zip(items, about) if a or (me and about_the_person(it))]


__all__ = ["about_the_names", "in_first_person", "mentions", "name_groups", "names_in", "the_person_themself"]
