"""Did the reply say it saved something that no call saved? The harness's check, not the model's.

Guards the person's trust in memory: a model may reply "I've saved Marek's number" or "I'll
remember that" without calling a writing tool, and the person goes away believing a note was
written. After every reply the turn loop asks `claims_a_change(reply)`; when it does and no call
of a memory-changing tool (kind "memory": memory_write, memory_edit) succeeded in that turn, the
person sees one line saying nothing was saved and the transcript records it (`false_claim`).
A promise, a past-tense report and a bare "noted" all count; a negation ("I have not saved")
does not.
"""

from __future__ import annotations

import re
import unicodedata

_VERBS = r"(?:saved|stored|noted|recorded|updated|added|written|wrote|changed|edited|corrected|deleted|removed|remembered|made a note|put it in)"
_CLAIM = re.compile(
    r"\b(?:i(?:'ve| have|'m| am)? ?(?:just |now |also )?" + _VERBS + r"\b"
    r"|\bi(?:'ll| will| shall) (?:now )?(?:remember|save|store|note|record|update|add|write|change|edit|correct|delete|remove|keep (?:a |that )?note|make a note|keep that in mind)\b"
    r"|\b(?:it'?s|that'?s|this is|these are|those are|they'?re|it is|that is) (?:now )?(?:saved|stored|noted|recorded|updated|deleted|removed)\b"
    r"|\b(?:has|have) been (?:saved|stored|noted|recorded|updated|added|deleted|removed|written)\b"
    r"|^\W*(?:ok(?:ay)?|got it|sure|done|great|thanks)?\W*(?:saved|noted|updated|deleted|removed|done and saved)\b)",
    re.IGNORECASE | re.MULTILINE)
_FOLD = str.maketrans({"\u2019": "'", "\u2018": "'"})

FALSE_CLAIM = ("nothing was saved: the reply says a note was saved or changed, but no note was "
               "written in this turn")


def claims_a_change(reply: str) -> bool:
    """Whether the reply says (or promises) that something was saved, updated or deleted."""
    text = unicodedata.normalize("NFKC", reply).translate(_FOLD)
    return bool(_CLAIM.search(text))


__all__ = ["FALSE_CLAIM", "claims_a_change"]
