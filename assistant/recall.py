"""Per-turn recall: the few notes that match a person's message, as redacted snippets in budget.

Guards the cost and the honesty of recall. Each turn it asks the index (kept fresh by the
chat's watcher, so no full sync is added to a turn) for the best `max_notes` matches at or
above `min_score`, and cuts their indexed (already redacted) text to `budget_bytes` in all.
What was recalled is returned as typed values the agent records in the transcript (`recall`
event) and the prompt puts in the volatile tail, never in the stable prefix. A broken index
never stops a turn: the problem is reported once and the assistant answers from the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .config import RecallConfig
from .index import Hit, Index, IndexUnavailable

HEADER_COST = 160          # bytes reserved for the block's own lines per note


@dataclass(frozen=True)
class Recalled:
    """One recalled note: where it is, how well it matched, and the (redacted) text shown."""

    path: str
    source: str
    score: float
    text: str

    def label(self) -> str:
        return self.path if self.source == "note" else f"{self.path} (past conversation)"


def _cut_bytes(text: str, budget: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= budget:
        return text
    return data[: max(0, budget - 3)].decode("utf-8", "ignore").rstrip() + "\u2026"


class Recaller:
    """Per-turn recall over one session's index."""

    def __init__(self, index: Index, settings: RecallConfig, *,
                 search: Callable[..., list] | None = None, notices: list[str] | None = None,
                 own_conversation: str | None = None) -> None:
        self.index = index
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
                from .embed import HybridSearch

                self._search = HybridSearch(self.index, self.settings.embedding_model).search
            else:
                self._search = self.index.search
        return self._search

    def search(self, query: str, *, limit: int = 5, offset: int = 0,
               sources: tuple[str, ...] = ("note", "conversation")) -> list[Hit]:
        """memory_search and `assistant memory search`: sync by metadata, then search.
        IndexUnavailable says why when the index cannot be used."""
        self.index.sync(conversations="conversation" in sources)
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
                self.index.sync_conversations()
            sources = ("note", "conversation") if s.include_conversations else ("note",)
            hits = [h for h in self._find(text, limit=s.max_notes, offset=0, sources=sources)
                    if h.score >= s.min_score]
            bodies = self.index.bodies([(h.source, h.path) for h in hits])
        except IndexUnavailable as exc:
            self.problem = str(exc)
            return []
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
            out.append(Recalled(path=h.path, source=h.source, score=round(h.score, 4), text=shown))
        return out


__all__ = ["Recalled", "Recaller"]
