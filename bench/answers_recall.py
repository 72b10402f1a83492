"""What per-turn recall puts in the prompt for the answer bench's questions (no model).

For each question of bench/answers/example.json and large.json it runs the session's Recaller
(the configured [recall] settings, or those given here) over a copy of the set's notes and
counts: answerable questions whose answering notes were all recalled, some, or none, and those
whose first recalled note is one of them (the model reads it first);
unanswerable questions that recalled nothing (a turn that then says "no note matched"), and
the notes and bytes recalled per question. The figures say whether a threshold setting keeps
the answers and drops the filler, on a 5-note and a 314-note workspace with the same default.

    python bench/answers_recall.py [--min-score X] [--max-notes N] [--share S] [--misses]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import assistant.recall.index as index_mod  # noqa: E402
from assistant.recall.index import Index  # noqa: E402
from assistant.recall.turn import Recaller  # noqa: E402
from assistant.workspace.config import MemoryConfig, RecallConfig  # noqa: E402

SETS = REPO / "bench" / "answers"


def run_set(name: str, settings: RecallConfig, tmp: Path, misses: bool) -> str:
    data = json.loads((SETS / f"{name}.json").read_text(encoding="utf-8"))
    memory = tmp / name / "memory"
    shutil.copytree(REPO / data["notes_from"], memory)
    (tmp / name / "state").mkdir()
    index = Index(tmp / name / "state", memory)
    try:       # as the session makes it: the pinned notes are the person's own
        recaller = Recaller(index, settings, own_notes=MemoryConfig().pinned)
    except TypeError:      # (a checkout from before the names rule has no own_notes)
        recaller = Recaller(index, settings)
    recaller.start()
    counts = {"all": 0, "some": 0, "none": 0, "answerable": 0, "quiet": 0, "unanswerable": 0, "first": 0}
    per_q_notes, per_q_bytes = [], []
    lines = []
    for q in data["questions"]:
        got = recaller(q["question"])
        paths = [r.path for r in got]
        per_q_notes.append(len(got))
        per_q_bytes.append(sum(len(r.text.encode()) for r in got))
        if q["kind"] == "unanswerable":
            counts["unanswerable"] += 1
            counts["quiet"] += not got
            if misses and got:
                lines.append(f"    {q['id']} unanswerable recalled {paths}: {q['question']}")
            continue
        counts["answerable"] += 1
        found = [n for n in q["notes"] if n in paths]
        which = "all" if len(found) == len(q["notes"]) else "some" if found else "none"
        counts[which] += 1
        counts["first"] += bool(paths) and paths[0] in q["notes"]
        if misses and which != "all":
            lines.append(f"    {q['id']} {which}: wanted {q['notes']}, recalled {paths}: {q['question']}")
    index.close()
    head = (f"{name:<8} notes {len(list(memory.rglob('*.md'))):>4} | answerable {counts['answerable']:>3}: "
            f"all notes recalled {counts['all']:>3}, some {counts['some']:>2}, none {counts['none']:>2}, "
            f"first recalled answers {counts['first']:>3} | "
            f"unanswerable {counts['unanswerable']:>2}: nothing recalled {counts['quiet']:>2} | "
            f"per question: notes {statistics.mean(per_q_notes):.2f}, bytes {statistics.median(per_q_bytes):.0f} (median)")
    return "\n".join([head, *lines])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    d = RecallConfig()
    ap.add_argument("--min-score", type=float, default=d.min_score)
    ap.add_argument("--max-notes", type=int, default=d.max_notes)
    ap.add_argument("--share", type=float, default=getattr(index_mod, "COMMON_SHARE", 0.5),
                    help="a term in more than this share of the notes is common")
    ap.add_argument("--misses", action="store_true", help="list the questions recall did not serve")
    args = ap.parse_args()
    if hasattr(Index, "distinctive_terms"):      # (a checkout from before the threshold has none)
        Index.distinctive_terms.__kwdefaults__["share"] = args.share
    settings = RecallConfig(max_notes=args.max_notes, min_score=args.min_score, budget_bytes=d.budget_bytes)
    print(f"recall: max_notes {settings.max_notes}, min_score {settings.min_score:g} (of the best match), "
          f"common share {args.share:g}, budget {settings.budget_bytes} B")
    with tempfile.TemporaryDirectory(prefix="answers-recall-") as tmp:
        for name in ("example", "large"):
            print(run_set(name, settings, Path(tmp), args.misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
