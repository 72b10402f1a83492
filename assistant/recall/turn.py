"""Per-turn recall: the few notes that match a person's message, as redacted snippets in budget.

Guards the cost and the honesty of recall. Each turn it asks the index (kept fresh by the
chat's watcher, so no full sync is added to a turn) for the best `max_notes` matches on the
message's distinctive words, and cuts their indexed (already redacted) text to `budget_bytes`
in all. Nothing is recalled when nothing matches well, the same on 5 notes and on 10,000: a
message whose every shared word is in more than half of the notes recalls nothing (document
frequency relative to the corpus; a BM25 score moves with corpus size), and `min_score` is a
share of the best match's score (a weak tail of filler is left out), not a raw BM25 figure.
A question that names someone ("Marek's birthday") keeps only the matches that mention a name
it holds, when any does (recall.named): Lina's note, which shares "birthday", is left out.
What was recalled is returned as typed values the agent records in the transcript (`recall`
event) and the prompt puts in the volatile tail, never in the stable prefix. A broken index
never stops a turn: the problem is reported once and the assistant answers from the catalog.
A recalled note whose frontmatter `review_after` or `expires` date has passed is flagged in its
label, as the catalog flags it ("[expired 2026-01-01: may be out of date]"), so the model can say
the fact may be old; the dates are read from the note's head at recall time (a date passes
while the index stays the same). A recalled text that reads like instructions to the assistant
(notes.flagging) is flagged in its label too: `[flagged: reads like an instruction]`.
The person's own pinned notes (`[memory] pinned`, index.md) are labelled as about the person
("I" and "my" in the message), so a question about "my sister and I" is answered for both.
`untrusted_place` names what such a text makes the session have read (issue 24 item 3): a
flagged note, and any past conversation (state/transcripts/ holds what an earlier chat's model
said, perhaps after reading a page), whether recalled into a turn or found by memory_search.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from assistant.workspace.config import RecallConfig
from assistant.confine import ConfinementError, Root
from assistant.recall.embed import HybridSearch
from assistant.recall.index import Hit, Index, IndexUnavailable
from assistant.recall.named import about_the_names, the_person_themself
from assistant.notes.flagging import FLAG, FLAG_WORDS, flag_reason
from assistant.notes.frontmatter import decode_head, head_meta, staleness

HEADER_COST = 160          # bytes reserved for the block's own lines per note
HEAD_BYTES = 2048          # the frontmatter (and its dates) is read from this much of a note
# The label of the person's own pinned note: nothing else tells a model that "I" in "What do my
# sister and I each do for work?" is the Sam of index.md, and the 1.5B model answered such
# questions with the sister's half only (ex18, ex19).
OWN_NOTE = '(about the person you are talking to: "I" and "my" in the message)'


@dataclass(frozen=True)
class Recalled:
    """One recalled note: where it is, how well it matched, and the (redacted) text shown."""

    path: str
    source: str
    score: float
    text: str
    stale: str | None = None     # notes.Staleness.label(), e.g. "[review due since ...: may be out of date]"
    flagged: str | None = None   # why the text shown reads like instructions (notes.flagging), or None
    own: bool = False            # one of the person's own notes ([memory] pinned: index.md)

    def label(self) -> str:
        flag = f" {FLAG}" if self.flagged else ""
        if self.source != "note":
            return f"{self.path} (past conversation){flag}"
        own = f" {OWN_NOTE}" if self.own else ""
        return (f"{self.path} {self.stale}" if self.stale else self.path) + own + flag


def untrusted_place(source: str, path: str, flagged: bool) -> str | None:
    """The name under which a recalled or searched text marks the session as having read
    untrusted content, or None for a note of the person's that does not read like instructions.
    A past conversation always marks: it is from state/ and may repeat what a page said."""
    if source == "note":
        return f"memory/{path} ({FLAG_WORDS})" if flagged else None
    return f"{path} (past conversation{', ' + FLAG_WORDS if flagged else ''})"


def _cut_bytes(text: str, budget: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= budget:
        return text
    return data[: max(0, budget - 3)].decode("utf-8", "ignore").rstrip() + "\u2026"


class Recaller:
    """Per-turn recall over one session's index."""

    def __init__(self, index: Index, settings: RecallConfig, *,
                 search: Callable[..., list] | None = None, notices: list[str] | None = None,
                 own_conversation: str | None = None, own_notes: tuple[str, ...] = ()) -> None:
        self.index = index
        # the person's own notes ([memory] pinned): a question in the first person is about them too
        self.own_notes = own_notes
        # this session's own transcript: it holds the message being answered, so it is never a hit
        self.own_conversation = own_conversation
        self.settings = settings
        self._search = search
        self.notices = notices if notices is not None else []   # the index's one-line notices
        self.problem: str | None = None     # why recall is off for now (reported once)
        self._reported = False

    def _searcher(self) -> Callable[..., list]:
        """BM25, or BM25 fused with vector similarity when [recall] embedding_model is set."""
        if self._search is None:
            if self.settings.embedding_model:
                self._search = HybridSearch(self.index, self.settings.embedding_model).search
            else:
                self._search = self.index.search
        return self._search

    def search(self, query: str, *, limit: int = 5, offset: int = 0,
               sources: tuple[str, ...] = ("note", "conversation")) -> list[Hit]:
        """memory_search and `assistant memory search`: bring the index up to date, then search.
        Where a watcher feeds the index (a chat, `mcp serve`) only the notes it reported (and
        this session's own writes) are re-read; otherwise every note is compared by metadata.
        IndexUnavailable says why when the index cannot be used."""
        self.index.refresh()
        if "conversation" in sources:
            self.index.sync_conversations(skip=self.own_conversation)
        return self._find(query, limit=limit, offset=offset, sources=sources)

    def _find(self, query: str, *, limit: int, offset: int, sources: tuple[str, ...]) -> list[Hit]:
        hits = self._searcher()(query, limit=limit + 1, offset=offset, sources=sources)
        own = self.own_conversation
        return [h for h in hits if not (h.source == "conversation" and h.path == own)][:limit]

    def start(self) -> None:
        """Session start: a full metadata sync (what changed while no session was open)."""
        if not self.settings.enabled:
            return
        try:
            self.index.sync(conversations=self.settings.include_conversations)
            self.problem = None
        except IndexUnavailable as exc:
            self.problem = str(exc)

    def take_problem(self) -> str | None:
        """The problem (or the index's notices, e.g. "rebuilt") to report, once."""
        lines = list(self.notices)
        self.notices.clear()
        if self.problem is not None and not self._reported:
            self._reported = True
            lines.append(self.problem)
        return "; ".join(lines) or None

    def __call__(self, text: str) -> list[Recalled]:
        s = self.settings
        if not s.enabled:
            return []
        try:
            self.index.refresh()
            if s.include_conversations:
                self.index.sync_conversations(skip=self.own_conversation)
            sources = ("note", "conversation") if s.include_conversations else ("note",)
            hits = self._matches(text, sources)
            bodies = self.index.bodies([(h.source, h.path) for h in hits])
        except IndexUnavailable as exc:
            self.problem = str(exc)
            return []
        hits = about_the_names(text, hits, lambda h: h.path + "\n" + "\n".join(
            bodies.get((h.source, h.path), (h.description, h.snippet))),
            lambda h: h.source == "note" and h.path in self.own_notes)
        if the_person_themself(text):    # the person's own note first: the 1.5B model answers from the first
            hits = sorted(hits, key=lambda h: not (h.source == "note" and h.path in self.own_notes))
        out: list[Recalled] = []
        left = s.budget_bytes
        for n, h in enumerate(hits):
            desc, body = bodies.get((h.source, h.path), (h.description, h.snippet))
            text_ = (desc.strip() + "\n" if desc.strip() else "") + body.strip()
            share = max(64, left // (len(hits) - n)) - len(h.path.encode()) - 8
            if share <= 16:
                break
            shown = _cut_bytes(text_, share) if h.source == "note" else _cut_bytes(h.snippet, share)
            left -= len(shown.encode()) + len(h.path.encode()) + 8
            out.append(Recalled(path=h.path, source=h.source, score=round(h.score, 4), text=shown,
                                flagged=flag_reason(shown), own=h.source == "note" and h.path in self.own_notes))
        return self._flag_stale(out)

    def _matches(self, text: str, sources: tuple[str, ...]) -> list[Hit]:
        """The best max_notes hits on the message's distinctive terms, each scoring at least
        min_score times the best one; [] when no term is distinctive."""
        s = self.settings
        terms = self.index.distinctive_terms(text, sources=sources)
        if not terms:
            return []
        if self._search is None and not s.embedding_model:
            hits = self.index.search(text, limit=s.max_notes + 1, sources=sources, terms=terms)
            own = self.own_conversation
            hits = [h for h in hits if not (h.source == "conversation" and h.path == own)][:s.max_notes]
        else:     # hybrid (or a given search): its own ranking, gated by the same terms
            hits = self._find(text, limit=s.max_notes, offset=0, sources=sources)
        if not hits:
            return []
        floor = s.min_score * max(h.score for h in hits)
        return [h for h in hits if h.score >= floor]

    def _flag_stale(self, recalled: list[Recalled]) -> list[Recalled]:
        """The recalled notes, each with its staleness flag (None if its dates have not passed,
        or its head cannot be read now: a flag is advice, never a reason to drop a note)."""
        notes = [r for r in recalled if r.source == "note"]
        if not notes:
            return recalled
        try:
            root = Root(self.index.memory_dir)
        except (OSError, ConfinementError):
            return recalled
        flags: dict[str, str | None] = {}
        try:
            for r in notes:
                flags[r.path] = _stale_flag(root, r.path, self.index.redact, self.index.redact_prefix)
        finally:
            root.close()
        return [replace(r, stale=flags.get(r.path)) if r.source == "note" else r for r in recalled]


def _stale_flag(root: Root, path: str, redact: Callable[[str], str],
                redact_prefix: Callable[[str], str]) -> str | None:
    """The catalog's staleness flag for one note, from its (redacted) head; None if none."""
    try:
        head = root.read_head(path, HEAD_BYTES)
    except (OSError, ConfinementError):
        return None
    complete = len(head) < HEAD_BYTES
    try:
        text = decode_head(head, complete)
    except UnicodeDecodeError:
        return None
    # redacted before the frontmatter is read, as the catalog does: a flag quoting a bad date
    # cuts it to 40 characters, which must not show part of a secret
    text = redact(text) if complete else redact_prefix(text)
    flag = staleness(head_meta(text))
    return flag.label() if flag is not None else None


__all__ = ["OWN_NOTE", "Recalled", "Recaller", "untrusted_place"]
