"""Memory capture benchmark (issue 22 item 4, part 2 of the answer bench): does the assistant keep
what it is told?

A scripted person tells one watched chat (`printf '...' | assistant -w WS chat`, a fresh copy of
workspace.example) ten facts, one a turn: a new person, a preference, dates, a correction of an
existing note, a new project. Then the bench reads memory/ and the chat's transcript:
- stored: the fact's words are in a note after the chat, and in a fitting one (a note that
  names the fact's subject, in its path or its text);
- lost: lines of the example's notes that are gone from every note afterwards (the corrected
  line excepted);
- claims: replies that say a note was saved or changed; flagged = the harness told the person
  nothing was saved (`false_claim`); unflagged = a claim in a turn where no note changed and no
  flag was raised (target 0);
- answered: for every stored fact, a later `assistant run` with the question about it names it.

    python bench/capture.py --model PATH --chat-format NAME [--protocol actions|auto]
                            [--limit N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from answers import make_workspace  # noqa: E402
from answers_score import has_fact  # noqa: E402

from assistant.agent.claims import claims_a_change  # noqa: E402

CHAT_TIMEOUT = 1200.0
RUN_TIMEOUT = 300.0

# (what the person says, the words that must be stored, the subject a fitting note names,
#  the later question, the words its answer must hold)
FACTS = [
    ("My sister Ana moved to Porto last month.", ["Porto"], "Ana",
     "Where does my sister Ana live?", ["Porto"]),
    ("Marek's new mobile number is 07700 900123.", ["07700 900123"], "Marek",
     "What is Marek's mobile number?", ["07700 900123"]),
    ("I prefer tea to coffee in meetings.", ["tea"], "",
     "Do I prefer tea or coffee in meetings?", ["tea"]),
    ("The Kirkstall drainage survey results arrive on 2026-12-18.", [["2026-12-18", "18 December"]], "Kirkstall",
     "When do the Kirkstall drainage survey results arrive?", [["2026-12-18", "18 December", "December 18"]]),
    ("Correction: Lina teaches physics now, not chemistry.", ["physics"], "Lina",
     "What does Lina teach?", ["physics"]),
    ("My dentist is Dr Patel at the Headingley practice.", ["Patel"], "",
     "Who is my dentist?", ["Patel"]),
    ("I've started a new project: a rooftop garden for Leeds Central Library, due in March.", ["rooftop"], "",
     "What is my new rooftop project for?", [["Library", "library"]]),
    ("Lina's partner is called Tomasz.", ["Tomasz"], "Lina",
     "What is Lina's partner called?", ["Tomasz"]),
    ("I don't eat meat, so always book vegetarian options for me.", ["vegetarian"], "",
     "Should restaurant bookings for me be vegetarian?", ["vegetarian"]),
    ("Marek is on holiday until 2026-12-20.", [["2026-12-20", "20 December"]], "Marek",
     "Until when is Marek on holiday?", [["2026-12-20", "20 December", "December 20"]]),
]
CORRECTED = ("She teaches chemistry in Bristol.",)   # the line the correction may change


def notes_of(ws: Path) -> dict[str, str]:
    memory = ws / "memory"
    return {p.relative_to(memory).as_posix(): p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(memory.rglob("*.md"))}


def transcript_events(ws: Path, kind: str) -> list[dict]:
    files = sorted((ws / "state" / "transcripts").glob(f"*-{kind}-*.jsonl"))
    return [json.loads(line) for f in files for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]


def turns_of(events: list[dict]) -> list[dict]:
    """Per person message: its reply, the calls that changed memory, whether a flag was raised."""
    turns: list[dict] = []
    for e in events:
        kind = e.get("event")
        if kind == "user":
            turns.append({"said": e.get("text", ""), "reply": None, "writes": 0, "calls": [], "flagged": False})
        elif not turns:
            continue
        elif kind == "tool_call":
            turns[-1]["calls"].append(e.get("tool"))
        elif kind == "tool_result" and e.get("ok") and e.get("tool") in ("memory_write", "memory_edit"):
            turns[-1]["writes"] += 1
        elif kind == "reply":
            turns[-1]["reply"] = e.get("text")
        elif kind == "false_claim":
            turns[-1]["flagged"] = True
    return turns


def run_cli(args: list[str], env: dict, timeout: float, stdin: str | None = None) -> subprocess.CompletedProcess:
    # cwd=REPO: `python -m` puts the working directory first on sys.path, ahead of PYTHONPATH, so a
    # bench run from another checkout would otherwise test that checkout's assistant/
    return subprocess.run([sys.executable, "-m", "assistant", *args], input=stdin, capture_output=True,
                          text=True, env=env, timeout=timeout, cwd=REPO)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, metavar="PATH", help="a GGUF that can use tools")
    ap.add_argument("--chat-format", required=True, metavar="NAME")
    ap.add_argument("--protocol", default="actions", help="[model] protocol (actions)")
    ap.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N facts")
    ap.add_argument("--json", default=None, metavar="OUT")
    ap.add_argument("--chat-timeout", type=float, default=CHAT_TIMEOUT, metavar="S")
    args = ap.parse_args()
    facts = FACTS[: args.limit] if args.limit else FACTS
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    config = {"path": str(Path(args.model).resolve()), "chat_format": args.chat_format,
              "protocol": args.protocol, "prompt_cache": True}
    tmp = tempfile.mkdtemp(prefix="bench-capture-")     # kept: the notes and transcripts to look at
    print(f"workspace: {tmp}/ws", file=sys.stderr, flush=True)
    if True:
        ws = make_workspace(Path(tmp) / "ws", REPO / "workspace.example" / "memory", config)
        before = notes_of(ws)
        said = "".join(f"{f[0]}\n" for f in facts) + "/quit\n"
        t0 = time.monotonic()
        try:
            chat_exit: int | str = run_cli(["-w", str(ws), "chat"], env, args.chat_timeout, stdin=said).returncode
        except subprocess.TimeoutExpired:     # scored on what the chat did in time
            chat_exit = f"killed after {args.chat_timeout:g}s"
        chat_s = time.monotonic() - t0
        after = notes_of(ws)
        turns = turns_of(transcript_events(ws, "chat"))
        lines_before = {ln.strip() for text in before.values() for ln in text.splitlines()
                        if ln.strip() and ln.strip() != "---" and not ln.startswith("description:")}
        all_after = "\n".join(after.values())
        lost = sorted(ln for ln in lines_before if ln not in all_after and ln not in CORRECTED)
        rows = []
        for i, (message, store, subject, question, must) in enumerate(facts):
            holding = [p for p, text in after.items() if all(has_fact(w, text) for w in store)
                       and (p not in before or not all(has_fact(w, before[p]) for w in store))]
            fitting = [p for p in holding if not subject or subject.lower() in (p + after[p]).lower()]
            row = {"fact": message, "stored": bool(holding), "fitting": fitting, "notes": holding}
            if holding:
                t1 = time.monotonic()
                try:
                    out = run_cli(["-w", str(ws), "run", "--approval-timeout", "1s", question], env,
                                  RUN_TIMEOUT).stdout.strip().splitlines()
                except subprocess.TimeoutExpired:
                    out = [f"(killed after {RUN_TIMEOUT:g}s)"]
                line = out[-1] if out else ""
                row.update(question=question, answer=line, run_s=round(time.monotonic() - t1, 1),
                           answered=line.startswith("done:") and all(has_fact(w, line) for w in must))
            rows.append(row)
        claims = [t for t in turns if t["reply"] and claims_a_change(t["reply"])]
        unflagged = [t for t in claims if not t["writes"] and not t["flagged"]]
        stored = [r for r in rows if r["fitting"]]
        answered = [r for r in stored if r.get("answered")]
        summary = {
            "model": Path(args.model).name, "chat_format": args.chat_format, "protocol": args.protocol,
            "facts": len(facts), "stored_in_fitting_note": len(stored), "stored_anywhere": sum(r["stored"] for r in rows),
            "lines_lost": lost, "answered_of_stored": len(answered), "turns": len(turns),
            "writes": sum(t["writes"] for t in turns), "claims": len(claims),
            "flagged_false_claims": sum(t["flagged"] for t in turns), "unflagged_false_claims": len(unflagged),
            "chat_s": round(chat_s, 1), "chat_exit": chat_exit,
        }
        for t in turns:
            print(f"  said {t['said'][:60]!r}: calls {t['calls']}, writes {t['writes']}, "
                  f"{'FLAGGED ' if t['flagged'] else ''}reply {str(t['reply'])[:90]!r}", file=sys.stderr)
        for r in rows:
            print(f"  {'stored' if r['fitting'] else ('stored (unfitting)' if r['stored'] else 'not stored'):<18} "
                  f"{r['fact'][:60]!r} in {r['notes']}; later run: {r.get('answer', '-')[:90]!r}", file=sys.stderr)
        print(json.dumps(summary, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps({"summary": summary, "facts": rows, "turns": turns,
                                                   "notes_after": after}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
