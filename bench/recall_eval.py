"""Does the assistant find the note that answers a question? Catalog alone vs BM25 (vs hybrid).

For each question (a JSON list of {"question", "answer": "path.md", "alternates": [...]}) it
asks: is the answering note among those the catalog shows the model (the catalog has no
ranking: a note is in the prompt or it is not, so one figure fills every column), and at
which rank does the index's search put it (BM25; and BM25 fused with embeddings by reciprocal
rank fusion when --embedding-model is given). Prints recall@1, recall@5 and MRR side by side.
Target: recall@5 >= 0.9 for BM25.

The catalog is rendered with the default settings (2048-byte budget) over the notes with
modification times in a seeded random order (a person's notes change in no particular order).

    python bench/recall_eval.py [--corpus DIR] [--questions FILE] [--embedding-model GGUF]
                                [--misses]
DIR is a folder whose memory/ holds the notes (default bench/recall_corpus); FILE defaults to
DIR/questions.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.notes.catalog import CatalogSettings, render  # noqa: E402
from assistant.recall.index import Index  # noqa: E402

HERE = Path(__file__).resolve().parent


def load_questions(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise SystemExit(f"{path}: expected a JSON list of {{question, answer, alternates}}")
    for i, q in enumerate(data):
        if not (isinstance(q, dict) and isinstance(q.get("question"), str) and isinstance(q.get("answer"), str)):
            raise SystemExit(f"{path}: item {i + 1} needs a 'question' and an 'answer' string")
    return data


def shown_by_catalog(memory: Path) -> set[str]:
    block = render(memory, CatalogSettings())
    shown = set()
    for line in block.splitlines():
        if line.startswith("- ") and ": " in line:
            shown.add(line[2:].split(": ", 1)[0])
    return shown


def score(ranks: list[int | None]) -> tuple[float, float, float]:
    n = len(ranks) or 1
    r1 = sum(1 for r in ranks if r is not None and r <= 1) / n
    r5 = sum(1 for r in ranks if r is not None and r <= 5) / n
    mrr = sum(1.0 / r for r in ranks if r is not None) / n
    return r1, r5, mrr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=HERE / "recall_corpus")
    ap.add_argument("--questions", type=Path, default=None)
    ap.add_argument("--embedding-model", default="", help="a GGUF embedding model: also evaluate hybrid")
    ap.add_argument("--misses", action="store_true", help="list the questions BM25 misses in its top 5")
    args = ap.parse_args()
    src = args.corpus / "memory"
    if not src.is_dir():
        raise SystemExit(f"{args.corpus}: no memory/ folder")
    questions = load_questions(args.questions or args.corpus / "questions.json")
    tmp = Path(tempfile.mkdtemp(prefix="recall-eval-"))
    try:
        memory = tmp / "memory"
        shutil.copytree(src, memory, symlinks=True)
        notes = sorted(str(p.relative_to(memory)) for p in memory.rglob("*.md"))
        rng = random.Random(7)
        order = notes[:]
        rng.shuffle(order)
        base = time.time() - 86400 * 400
        for i, rel in enumerate(order):
            t = base + i * 3600
            os.utime(memory / rel, (t, t))
        shown = shown_by_catalog(memory)
        index = Index(tmp / "state", memory)
        t0 = time.perf_counter()
        index.sync(conversations=False)
        build = time.perf_counter() - t0
        systems: dict[str, list[int | None]] = {"catalog alone": [], "BM25": []}
        searchers = {"BM25": index.search}
        if args.embedding_model:
            from assistant.recall.embed import HybridSearch

            hybrid = HybridSearch(index, args.embedding_model)
            searchers["hybrid (BM25+emb, RRF)"] = hybrid.search
            systems["hybrid (BM25+emb, RRF)"] = []
        misses = []
        for q in questions:
            good = {q["answer"], *q.get("alternates", [])}
            systems["catalog alone"].append(1 if good & shown else None)
            for name, search in searchers.items():
                hits = search(q["question"], limit=50, sources=("note",))
                rank = next((i for i, h in enumerate(hits, 1) if h.path in good), None)
                systems[name].append(rank)
                if name == "BM25" and (rank is None or rank > 5):
                    misses.append((q["question"], q["answer"], [h.path for h in hits[:3]]))
        print(f"corpus: {len(notes)} notes in {args.corpus}, {len(questions)} questions; "
              f"catalog shows {len(shown)} of {len(notes)} notes (default budget); index built in {build:.2f} s")
        print(f"{'system':<26}{'recall@1':>10}{'recall@5':>10}{'MRR':>8}")
        for name, ranks in systems.items():
            r1, r5, mrr = score(ranks)
            print(f"{name:<26}{r1:>10.3f}{r5:>10.3f}{mrr:>8.3f}")
        print("(catalog alone: the note is in the prompt or not; the same figure fills every column)")
        r5 = score(systems["BM25"])[1]
        print(f"target BM25 recall@5 >= 0.9: {'met' if r5 >= 0.9 else 'NOT met'} ({r5:.3f})")
        if args.misses:
            for question, answer, top in misses:
                print(f"  miss: {question!r} -> want {answer}, got {top}")
        index.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
