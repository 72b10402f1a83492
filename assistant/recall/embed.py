"""Optional hybrid search: BM25 fused with embedding similarity by reciprocal rank fusion.

Guards that the hybrid costs nothing unless asked for and leaks nothing: it runs only when
`[recall] embedding_model` names a local GGUF file (llama-cpp-python, `embedding=True`, nothing
downloaded); it embeds the *indexed* text, which is already redacted, so a vector is never
computed from a vault value; vectors live in the same derived index (table `vectors`, keyed by
the note's row and a hash of the embedded text) and go when the index is rebuilt. If the model
cannot be loaded, search falls back to BM25 alone and says so once.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any, Sequence

from assistant.recall.index import SOURCES, Hit, Index, IndexUnavailable, query_terms

RRF_K = 60            # the usual reciprocal rank fusion constant
CANDIDATES = 50       # ranks taken from each list before fusing
EMBED_CHARS = 1500    # what of a note is embedded (its description and the start of its body)


class HybridSearch:
    """search(query, limit, offset, sources) like Index.search, fused with vector similarity."""

    def __init__(self, index: Index, model_path: str | Path, *, n_threads: int = 1) -> None:
        self.index = index
        self.model_path = Path(model_path)
        self.n_threads = n_threads
        self._llama: Any = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        self.model_id = ""

    def _model(self) -> Any:
        if self._llama is None and self._failed is None:
            try:
                import llama_cpp

                if not self.model_path.is_file():
                    raise FileNotFoundError(f"no such file {self.model_path}")
                self._llama = llama_cpp.Llama(model_path=str(self.model_path), embedding=True, n_ctx=512,
                                              n_threads=self.n_threads, verbose=False,
                                              pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN)
                st = self.model_path.stat()
                self.model_id = f"{self.model_path.name}:{st.st_size}:{st.st_mtime_ns}"
            except Exception as exc:   # ImportError, a bad file: BM25 alone, said once
                self._failed = f"embedding model {self.model_path} unusable ({type(exc).__name__}: {exc}); BM25 only"
                self.index.notice(self._failed)
        return self._llama

    def _embed(self, text: str) -> list[float]:
        import numpy as np

        vec = np.asarray(self._llama.embed(text[:EMBED_CHARS] or " "), dtype=np.float32)
        if vec.ndim > 1:           # a model without pooling: mean over tokens
            vec = vec.mean(axis=0)
        norm = float(np.linalg.norm(vec)) or 1.0
        return (vec / norm).astype(np.float32)

    def _vectors(self, sources: Sequence[str]) -> list[tuple[str, str, Any]]:
        """(path, source, unit vector) of every indexed document, embedding what is missing."""
        import numpy as np

        marks = ",".join("?" * len(sources))

        def rows(db):
            return db.execute(
                f"SELECT docs.id, docs.path, docs.source, fts.description, fts.body, v.digest, v.vec "
                f"FROM docs JOIN fts ON fts.rowid = docs.id LEFT JOIN vectors v ON v.id = docs.id AND v.model = ? "
                f"WHERE docs.source IN ({marks})", (self.model_id, *sources)).fetchall()
        out, todo = [], []
        for doc_id, path, source, desc, body, digest, blob in self.index._guarded(rows):  # type: ignore[union-attr]
            text = ((desc or "") + "\n" + (body or "")).strip()[:EMBED_CHARS]
            want = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
            if digest == want and blob is not None:
                out.append((path, source, np.frombuffer(blob, dtype=np.float32)))
            else:
                todo.append((doc_id, path, source, text, want))
        fresh = [(doc_id, path, source, self._embed(text), want) for doc_id, path, source, text, want in todo]

        def store(db):
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT OR REPLACE INTO vectors(id, model, digest, vec) VALUES (?, ?, ?, ?)",
                           [(d, self.model_id, w, v.tobytes()) for d, _, _, v, w in fresh])
            db.execute("COMMIT")
        if fresh:
            self.index._guarded(store)
        out.extend((path, source, vec) for _, path, source, vec, _ in fresh)
        return out

    def search(self, query: str, *, limit: int = 5, offset: int = 0, sources: Sequence[str] = SOURCES,
               snippet_tokens: int = 24) -> list[Hit]:
        lexical = self.index.search(query, limit=CANDIDATES, sources=sources, snippet_tokens=snippet_tokens)
        srcs = [s for s in sources if s in SOURCES] or list(SOURCES)
        with self._lock:
            if self._model() is None or not query_terms(query):
                return lexical[offset:offset + limit]
            try:
                docs = self._vectors(srcs)
                q = self._embed(query)
            except IndexUnavailable:
                raise
            except Exception as exc:
                self.index.notice(f"embedding failed ({type(exc).__name__}); BM25 only for this search")
                return lexical[offset:offset + limit]
        sims = sorted(((float(vec @ q), path, source) for path, source, vec in docs), reverse=True)[:CANDIDATES]
        fused: dict[tuple[str, str], float] = {}
        for rank, h in enumerate(lexical, 1):
            fused[(h.source, h.path)] = fused.get((h.source, h.path), 0.0) + 1.0 / (RRF_K + rank)
        for rank, (_, path, source) in enumerate(sims, 1):
            fused[(source, path)] = fused.get((source, path), 0.0) + 1.0 / (RRF_K + rank)
        # at equal fused score a note first (as Index.search orders), then by path
        order = sorted(fused.items(), key=lambda kv: (-round(kv[1], 9), kv[0][0] != "note", kv[0][1]))
        order = order[offset:offset + limit]
        by_key = {(h.source, h.path): h for h in lexical}
        missing = [k for k, _ in order if k not in by_key]
        bodies = self.index.bodies(missing) if missing else {}
        out = []
        for key, score in order:
            h = by_key.get(key)
            if h is None:
                desc, body = bodies.get(key, ("", ""))
                h = Hit(path=key[1], source=key[0], score=0.0, snippet=" ".join(body.split())[:300], description=desc)
            out.append(Hit(path=h.path, source=h.source, score=round(score * 1000, 4), snippet=h.snippet,
                           description=h.description))
        return out


__all__ = ["HybridSearch"]
