"""KV-cache reuse across turns with the embedded model, and our own per-turn overhead.

Part 1 (model): a 10-turn chat through the real agent (watched mode, real tools) on a copy of
workspace.example, with the embedded Gemma 3 270M. After turns 4 and 7 a note is written into
memory/ directly, as a person with an editor (or another run) would; the chat's watcher reports
it and it lands in the volatile tail, never in the prefix. Per turn it prints the prompt size,
the tokens new in that turn (this turn's final prompt beyond the previous turn's), the prompt
tokens the model actually evaluated (counted where llama-cpp-python hands them to
llama_decode) and llama.cpp's own perf counter for the same, for swa_full=True (ours) and
swa_full=False side by side. Target: from turn 2 on, evaluated <= new + 32, every turn.

Part 2 (overhead): a workspace with 10,000 notes; per turn, the work we add around the model:
prompt assembly (tail + history + Gemma rendering), the gate ruling for a memory write, the leak
scan/redaction of what crosses the boundary, and per-turn recall (the watcher-fed index refresh
of one changed note + the search + snippets; no full sync). The catalog is built once per session (it sits in
the stable prefix) and is reported on its own line. Target: per-turn overhead under 20 ms.

Part 3 (between runs): the same unattended task run twice, each with a fresh model (as a new
process is) and [model] prompt_cache = true: run 2 restores the stable prefix's state from
state/prompt_cache/ and its first step evaluates only what is new (target: <= new + 32), TTFT of
both runs side by side; part 3b does the same through the server backend (llama-cpp-python's
server on loopback).

    /work/venv/bin/python bench/prefix_cache.py [--turns 10] [--max-tokens 64] [--notes 10000]
                                                [--skip-model] [--skip-overhead] [--only-ours]
                                                [--only-runs]
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.workspace.layout import init_workspace, open_workspace  # noqa: E402
from timing import median_ms  # noqa: E402

USER_MESSAGES = [
    "Hi! Who are you?",
    "What do you know about Lina?",
    "Please remember that I prefer tea over coffee.",
    "What projects am I working on?",
    "Did anything change in my notes?",
    "Who is Sam?",
    "Summarise my preferences in one sentence.",
    "What about the roof repair?",
    "Thanks. Anything I should do today?",
    "Goodbye!",
]
PERSON_NOTES = {
    4: ("people/sam.md", "---\ndescription: Sam Okafor, neighbour at no. 12, lends us the ladder\n---\n"
                         "Sam lives at number 12. Friendly; has a long ladder.\n"),
    7: ("projects/roof.md", "---\ndescription: roof repair, quote from Hale & Sons due Friday\n---\n"
                            "Two slates missing above the back bedroom. Quote due Friday.\n"),
}
SLACK = 32
FIXED_NOW = dt.datetime(2026, 11, 30, 9, 0)


# ---------------------------------------------------------------------------------------------
# Part 1: the model


def _perf_p_eval(llm) -> int:
    import llama_cpp

    return int(llama_cpp.llama_perf_context(llm._ctx.ctx).n_p_eval)


def run_chat(ws_root: Path, model, turns: int) -> list[dict]:
    from assistant.session import open_session
    from assistant.notes.watch import MemoryWatcher

    ws = open_workspace(ws_root)
    parts = open_session(ws, "watched", kind="chat", interactive=False)
    rows: list[dict] = []
    steps: list[dict] = []
    agent = parts.new_agent(model, on_event=lambda n, d: steps.append(d) if n == "step" else None)
    # A fixed date in the tail keeps the two runs comparable.
    add_user = agent.conversation.add_user
    agent.conversation.add_user = lambda t, c=(), now=None, recalled=(): add_user(t, c, now=FIXED_NOW,
                                                                                  recalled=recalled)
    watcher = MemoryWatcher(ws.memory_dir).start()
    changed: dict[str, str] = {}
    prev_prompt = 0
    llm = model.llama
    try:
        for turn in range(1, turns + 1):
            fresh = watcher.drain()
            parts.index.note_changes(ch.path for ch in fresh)     # as the chat does: recall re-reads these
            for ch in fresh:
                changed[ch.path] = ch.kind
            lines = [f"{p} ({'deleted' if k == 'deleted' else 'changed on disk'})" for p, k in sorted(changed.items())]
            steps.clear()
            perf0 = _perf_p_eval(llm)
            t0 = time.perf_counter()
            text = USER_MESSAGES[(turn - 1) % len(USER_MESSAGES)]
            result = agent.turn(text, lines)
            ms = (time.perf_counter() - t0) * 1000
            perf = _perf_p_eval(llm) - perf0
            last_prompt = steps[-1]["prompt_tokens"] if steps else prev_prompt
            evaluated = sum(s["evaluated_tokens"] for s in steps)
            new = last_prompt - prev_prompt
            rows.append(dict(turn=turn, prompt=last_prompt, new=new, evaluated=evaluated, perf=perf,
                             steps=len(steps), ms=ms, outcome=result.outcome, changed=len(lines)))
            prev_prompt = last_prompt
            if turn in PERSON_NOTES:
                rel, body = PERSON_NOTES[turn]
                path = ws.memory_dir / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(body)          # as a person with an editor would
                watcher.wait(2.0)
    finally:
        watcher.stop()
        parts.close()
    return rows


def model_part(args) -> bool:
    try:
        from assistant.models.llama_cpp import LlamaModel
    except ImportError as exc:
        print(f"model part skipped: {exc}")
        return True
    variants = [True] if args.only_ours else [True, False]
    results = {}
    for swa_full in variants:
        with tempfile.TemporaryDirectory(prefix="bench-prefix-") as tmp:
            init_workspace(Path(tmp) / "ws")
            ws_root = Path(tmp) / "ws"
            ws = open_workspace(ws_root)
            cfg = dict(asdict(ws.config.model), n_threads=args.threads, max_tokens=args.max_tokens)
            # Steps per turn bounded so a looping small model does not dominate the run.
            text = (ws_root / "config.toml").read_text()
            text = text.replace("max_steps = 8", f"max_steps = {args.max_steps}")
            text = text.replace("max_tokens = 512", f"max_tokens = {args.max_tokens}")
            (ws_root / "config.toml").write_text(text)
            model = LlamaModel(cfg, ws_root, progress=None, swa_full=swa_full)
            results[swa_full] = run_chat(ws_root, model, args.turns)
            del model
    ours = results[True]
    other = results.get(False)
    print(f"Part 1: KV-cache reuse, embedded Gemma 3 270M, {args.turns} turns, notes written by hand after turns "
          f"{', '.join(map(str, PERSON_NOTES))}")
    print(f"        evaluated = prompt tokens llama.cpp decoded this turn (all steps); new = this turn's prompt "
          f"beyond the previous turn's; target: evaluated <= new + {SLACK} from turn 2")
    head = f"{'turn':>4} {'steps':>5} {'prompt':>6} {'new':>5} {'evaluated':>9} {'perf':>5} {'ok':>3} {'ms':>7}"
    if other:
        head += f" | {'swa_full=False: new':>19} {'evaluated':>9} {'ms':>7}"
    print(head)
    ok_all = True
    for i, r in enumerate(ours):
        ok = r["turn"] == 1 or r["evaluated"] <= r["new"] + SLACK
        ok_all &= ok
        note = f"  (+{r['changed']} changed note(s) in tail)" if r["changed"] else ""
        line = (f"{r['turn']:>4} {r['steps']:>5} {r['prompt']:>6} {r['new']:>5} {r['evaluated']:>9} {r['perf']:>5} "
                f"{'yes' if ok else 'NO':>3} {r['ms']:>7.0f}")
        if other:
            o = other[i]
            line += f" | {o['new']:>19} {o['evaluated']:>9} {o['ms']:>7.0f}"
        print(line + note)
    tot_e = sum(r["evaluated"] for r in ours[1:])
    tot_p = sum(r["prompt"] for r in ours[1:])
    print(f"turns 2..{args.turns}: evaluated {tot_e} of {tot_p} prompt tokens ({100 * tot_e / max(tot_p, 1):.1f}%); "
          f"target met every turn: {'yes' if ok_all else 'NO'}")
    if other:
        tot_o = sum(r["evaluated"] for r in other[1:])
        tot_op = sum(r["prompt"] for r in other[1:])
        ms_ours = sum(r["ms"] for r in ours[1:])
        ms_other = sum(r["ms"] for r in other[1:])
        print(f"swa_full=False: evaluated {tot_o} of {tot_op} ({100 * tot_o / max(tot_op, 1):.1f}%); "
              f"model time turns 2..{args.turns}: {ms_ours / 1000:.1f}s (ours) vs {ms_other / 1000:.1f}s")
    print("(perf = llama.cpp's n_p_eval counter; it counts only multi-token batches, so a 1-token "
          "prompt batch shows as 0 there)")
    return ok_all


def _last_logits(llm):
    import llama_cpp
    import numpy as np

    ptr = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
    return np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).copy()


def rollback_part(args) -> bool:
    """Why swa_full matters for correctness, not only for speed.

    After a long session the cache holds prefix P + ~2,300 more tokens. A new conversation on the
    same prefix (a /reload, the next run in the same process) makes llama-cpp-python keep P and
    drop the rest (kv_cache_seq_rm), then evaluate only the new suffix. With the small SWA cache
    the sliding-window layers no longer hold P's last 512 positions, yet seq_rm reports success:
    the suffix then attends to missing keys. Compare its logits with a cold evaluation."""
    import numpy as np

    from assistant.models.llama_cpp import LlamaModel

    print("\nPart 1b: rolling back to a shared prefix after a long session (the llama-cpp-python reuse path)")
    print(f"{'swa_full':>8} {'prefix':>6} {'cached':>6} {'seq_rm ok':>9} {'max|logit diff| vs cold':>24} {'same top token':>14}")
    ok = True
    for swa_full in (True, False):
        m = LlamaModel({"n_ctx": 4096, "n_threads": args.threads}, progress=None, swa_full=swa_full)
        llm = m.llama

        def tok(text):
            return llm.tokenize(text.encode(), add_bos=False, special=False)

        prefix = [llm.token_bos()] + tok("You are a careful assistant. Notes follow. " * 60)
        history = prefix + tok(" ".join(f"Item {i} is painted blue." for i in range(330)))
        suffix = tok(" Question: what colour is item 7?")
        llm.reset()
        llm.eval(history)
        cached = llm.n_tokens
        removed = llm._ctx.kv_cache_seq_rm(-1, len(prefix), -1)
        llm.n_tokens = len(prefix)
        llm.eval(suffix)
        warm = _last_logits(llm)
        llm.reset()
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        llm.eval(prefix + suffix)
        cold = _last_logits(llm)
        diff = float(np.abs(warm - cold).max())
        same = bool(warm.argmax() == cold.argmax())
        print(f"{str(swa_full):>8} {len(prefix):>6} {cached:>6} {str(bool(removed)):>9} {diff:>24.3f} {str(same):>14}")
        if swa_full:
            ok &= same
        del m
    print("(swa_full=True: batch-split rounding only; False: the reused state is silently wrong)")
    return ok


# ---------------------------------------------------------------------------------------------
# Part 2: our overhead with 10,000 notes


def overhead_part(args) -> bool:
    from assistant.models.chat_format import gemma_segments
    from assistant.agent.prompt import Conversation
    from assistant.tools.registry import all_tools

    print(f"\nPart 2: per-turn overhead around the model, workspace with {args.notes:,} notes "
          f"(median of {args.runs})")
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        init_workspace(Path(tmp) / "ws")
        ws = open_workspace(Path(tmp) / "ws")
        mem = ws.memory_dir
        t0 = time.perf_counter()
        for i in range(args.notes):
            d = mem / f"area{i // 100:03d}"
            if i % 100 == 0:
                d.mkdir(parents=True, exist_ok=True)
            (d / f"note{i:05d}.md").write_text(f"---\ndescription: note {i} about topic {i % 37}\n---\nbody {i}\n")
        print(f"  (built {args.notes:,} notes in {time.perf_counter() - t0:.1f}s)")
        measured: dict[str, float] = {}
        missing: list[str] = []

        scanner = None
        try:
            from assistant.secrets.scanner import Scanner

            scanner = Scanner({f"secret_{i}": f"vault-value-{i:03d}-Zq8rT2uX" for i in range(50)})
        except Exception as exc:  # pragma: no cover - depends on others' modules
            missing.append(f"scan ({type(exc).__name__}: {exc})")

        catalog = ""
        try:
            from assistant.memory import Memory

            memory = Memory(ws, scanner if scanner is not None else _NullScanner(), None)
            catalog = memory.catalog()
            cat_ms = median_ms(memory.catalog, max(3, args.runs // 3))
        except Exception as exc:  # pragma: no cover
            cat_ms = None
            missing.append(f"catalog ({type(exc).__name__}: {exc})")

        tools = all_tools()
        persona = ws.persona()
        conv = Conversation(persona, tools, catalog)
        action = '{"tool": "memory_write", "args": {"path": "people/sam.md", "content": "Sam lives at no. 12."}}'
        page = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 600)[:32 * 1024]
        changed = [f"area{i:03d}/note{i:05d}.md (changed on disk)" for i in range(3)]
        # Grow the history to a realistic 10 turns first.
        for i in range(9):
            conv.add_user(USER_MESSAGES[i], changed, now=FIXED_NOW)
            conv.add_action(action)
            conv.add_tool_result("memory_write", "wrote people/sam.md")

        def assemble():
            conv.add_user(USER_MESSAGES[9], changed, now=FIXED_NOW)
            gemma_segments(conv.messages())
            conv._turns.pop()  # noqa: SLF001 - keep the history size fixed across runs

        measured["prompt assembly (tail + history + Gemma render)"] = median_ms(assemble, args.runs)

        try:
            import llama_cpp

            from assistant.models.chat_format import tokenize_segments
            from assistant.models.llama_cpp import embedded_model_path, segment_tokenizer

            vocab = llama_cpp.Llama(str(embedded_model_path()), vocab_only=True, verbose=False)
            conv.add_user(USER_MESSAGES[9], changed, now=FIXED_NOW)
            segs = gemma_segments(conv.messages())
            n = len(tokenize_segments(segs, lambda d, sp: vocab.tokenize(d, add_bos=False, special=sp)))
            cold = median_ms(
                lambda: tokenize_segments(segs, lambda d, sp: vocab.tokenize(d, add_bos=False, special=sp)), args.runs)
            # Steady state: everything up to the previous turn is memoized; this turn's user
            # message (+ tail) and the previous action are new.
            tokenize_segments(segs[:-4], segment_tokenizer(vocab))
            known = dict(vocab._segment_cache)

            def step_tokenize():
                vocab._segment_cache = dict(known)
                tokenize_segments(segs, segment_tokenizer(vocab))

            measured[f"prompt tokenization ({n} tokens; earlier segments memoized)"] = median_ms(
                step_tokenize, args.runs)
            print(f"  (tokenizing all {n} prompt tokens from scratch would take {cold:.2f} ms per step)")
            conv._turns.pop()  # noqa: SLF001
        except Exception as exc:  # llama-cpp-python not installed here
            missing.append(f"prompt tokenization ({type(exc).__name__}: {exc})")

        try:
            from policy.gate import Gate

            gate = Gate.for_workspace("watched", run_id="bench", config=ws.config, grants_path=ws.grants_path,
                                      approvals_dir=ws.approvals_dir, audit_path=ws.audit_path)
            content = b"Sam lives at no. 12."

            def rule():
                d = gate.authorize("memory", "people/sam.md", content=content, current=None, summary="bench")
                assert d.allowed, d

            measured["gate (memory write, watched; incl. audit line)"] = median_ms(rule, args.runs)
        except Exception as exc:  # pragma: no cover
            missing.append(f"gate ({type(exc).__name__}: {exc})")

        try:
            from assistant.recall.index import Index
            from assistant.workspace.config import RecallConfig
            from assistant.recall.turn import Recaller

            index = Index(Path(tmp) / "state", mem, redact=scanner.redact if scanner else (lambda x: x),
                          redact_prefix=scanner.redact_prefix if scanner else None)
            index.sync(conversations=False)
            index.note_changes([])                    # a chat's watcher feeds it: no walk per turn
            recaller = Recaller(index, RecallConfig())
            edited = mem / "area000" / "note00000.md"

            times = []
            for k in range(args.runs):
                edited.write_text(f"{edited.read_text()[:200]} edit {k}")   # a note changed since last turn
                t0 = time.perf_counter()                  # (the person's edit itself is not our cost)
                index.note_changes(["area000/note00000.md"])
                recaller("What do you know about topic 12 and note 4711?")
                times.append((time.perf_counter() - t0) * 1000)
            measured["per-turn recall (watcher refresh + search + snippets)"] = statistics.median(times)
            index.close()
        except Exception as exc:  # pragma: no cover
            missing.append(f"recall ({type(exc).__name__}: {exc})")

        if scanner is not None:
            def scan():
                scanner.find(action)                  # the proposed write, before the gate
                scanner.redact(page)                  # a 32 KiB tool result before the model sees it
                scanner.redact(USER_MESSAGES[9])

            measured["leak scan (write content + 32 KiB tool result, 50 secrets)"] = median_ms(scan, args.runs)

    total = sum(measured.values())
    for name, ms in measured.items():
        print(f"  {name:<62} {ms:8.2f} ms")
    print(f"  {'per-turn overhead total':<62} {total:8.2f} ms   target < 20 ms: {'yes' if total < 20 else 'NO'}")
    if cat_ms is not None:
        print(f"  {'catalog at session start (once per session, in the prefix)':<62} {cat_ms:8.2f} ms")
        print(f"  {'(per-turn total if the catalog were rebuilt every turn)':<62} {total + cat_ms:8.2f} ms")
    for m in missing:
        print(f"  not measured: {m}")
    return total < 20


class _NullScanner:
    def find(self, text):
        return []

    def redact(self, text):
        return text


RUN_TASK = "List my notes, then tell me in one sentence what index.md is for."


def _one_run(ws_root: Path, model) -> dict:
    """One unattended run of RUN_TASK: the first step's token figures and time to first token."""
    from assistant.session import open_session

    ws = open_workspace(ws_root)
    steps: list[dict] = []
    first_token: list[float] = []
    t0 = time.perf_counter()

    def on_event(name, data):
        if name == "step":
            steps.append(data)

    class FirstToken:
        """The model, with the moment its first token of the run arrives noted (TTFT)."""

        name = model.name

        def step(self, messages, schema, *, max_tokens, on_token=None):
            def tap(piece):
                if not first_token:
                    first_token.append(time.perf_counter())
                if on_token is not None:
                    on_token(piece)

            return model.step(messages, schema, max_tokens=max_tokens, on_token=tap)

    with open_session(ws, "unattended", kind="run", approval_timeout=1.0) as session:
        agent = session.new_agent(FirstToken(), on_event=on_event)
        add_user = agent.conversation.add_user
        agent.conversation.add_user = lambda t, c=(), now=None: add_user(t, c, now=FIXED_NOW)
        result = agent.turn(RUN_TASK)
    total = time.perf_counter() - t0
    s1 = steps[0] if steps else {"prompt_tokens": 0, "evaluated_tokens": 0}
    return dict(prompt=s1["prompt_tokens"], evaluated=s1["evaluated_tokens"], cached=s1.get("cached_tokens"),
                ttft=(first_token[0] - t0) if first_token else float("nan"), total=total, steps=len(steps),
                outcome=result.outcome)


def _one_step_workspace(tmp: Path, max_tokens: int) -> Path:
    """A fresh workspace in tmp/ws whose runs take one model step of at most max_tokens."""
    ws_root = tmp / "ws"
    init_workspace(ws_root)
    text = (ws_root / "config.toml").read_text()
    text = text.replace("max_steps = 8", "max_steps = 1").replace("max_tokens = 512", f"max_tokens = {max_tokens}")
    (ws_root / "config.toml").write_text(text)
    return ws_root


def between_runs_part(args) -> bool:
    """Part 3: the same unattended task run twice, each run a fresh model (as a new process is),
    with [model] prompt_cache = true: the second run restores the stable prefix from state/."""
    from assistant.models.llama_cpp import LlamaModel

    print(f"\nPart 3: between runs - the same unattended task twice, a fresh in-process model each run, "
          f"prompt_cache = true; target: run 2's first step evaluates <= its new tokens + {SLACK}")
    with tempfile.TemporaryDirectory(prefix="bench-runs-") as tmp:
        ws_root = _one_step_workspace(Path(tmp), args.max_tokens)
        base = dict(asdict(open_workspace(ws_root).config.model), n_threads=args.threads, max_tokens=args.max_tokens)
        rows = []
        for label, cache_on in (("run 1 (cache empty)", True), ("run 2 (cache file)", True),
                                ("run 2 without prompt_cache", False)):
            model = LlamaModel(dict(base, prompt_cache=cache_on), ws_root, progress=None)
            r = _one_run(ws_root, model)
            r["restored"] = model.last_restored
            r["label"] = label
            rows.append(r)
            del model
        files = list((ws_root / "state" / "prompt_cache").glob("*.state"))
        size = sum(f.stat().st_size for f in files)
    print(f"{'':>28} {'prompt':>6} {'restored':>8} {'new':>5} {'evaluated':>9} {'TTFT s':>7} {'run s':>6}")
    for r in rows:
        new = r["prompt"] - r["restored"]
        print(f"{r['label']:>28} {r['prompt']:>6} {r['restored']:>8} {new:>5} {r['evaluated']:>9} "
              f"{r['ttft']:>7.2f} {r['total']:>6.2f}")
    second = rows[1]
    ok = second["restored"] > 0 and second["evaluated"] <= (second["prompt"] - second["restored"]) + SLACK
    print(f"cache file: {len(files)} file(s), {size / 1e6:.1f} MB; TTFT run 2 vs run 1: "
          f"{rows[1]['ttft']:.2f}s vs {rows[0]['ttft']:.2f}s ({rows[0]['ttft'] / max(rows[1]['ttft'], 1e-9):.1f}x); "
          f"target met: {'yes' if ok else 'NO'}")
    return ok


def server_runs_part(args) -> bool:
    """Part 3b: the same task twice through the server backend (llama-cpp-python's server on
    loopback): its KV cache lives in the server process, so run 2 of a new client reuses it."""
    try:
        import llama_cpp.server.app  # noqa: F401
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "helpers"))
        from model_server import ALIAS, start_server
    except ImportError as exc:
        print(f"\nPart 3b skipped: {exc} (pip install 'assistant[server]')")
        return True
    from assistant.models.openai import OpenAIModel

    print("\nPart 3b: the same task twice through the server backend (llama-cpp-python's server, loopback)")
    server = start_server()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-srv-") as tmp:
            ws_root = _one_step_workspace(Path(tmp), args.max_tokens)
            rows = []
            for label in ("run 1", "run 2"):
                model = OpenAIModel({"endpoint": server.url, "name": ALIAS, "temperature": 0.2}, timeout=300)
                r = _one_run(ws_root, model)
                r["label"] = label
                rows.append(r)
    finally:
        server.stop()
    print(f"{'':>8} {'prompt':>6} {'cached (server-reported)':>24} {'TTFT s':>7} {'run s':>6}")
    for r in rows:
        cached = "not reported" if r["cached"] is None else str(r["cached"])
        print(f"{r['label']:>8} {r['prompt']:>6} {cached:>24} {r['ttft']:>7.2f} {r['total']:>6.2f}")
    print(f"TTFT run 2 vs run 1: {rows[1]['ttft']:.2f}s vs {rows[0]['ttft']:.2f}s "
          f"({rows[0]['ttft'] / max(rows[1]['ttft'], 1e-9):.1f}x); llama-cpp-python's server does not report cached "
          "tokens (llama-server reports timings.cache_n, vLLM usage.prompt_tokens_details.cached_tokens: "
          "recorded per step when present)")
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--max-steps", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--skip-model", action="store_true")
    ap.add_argument("--skip-overhead", action="store_true")
    ap.add_argument("--only-ours", action="store_true", help="skip the swa_full=False comparison run")
    ap.add_argument("--only-runs", action="store_true", help="only part 3 (between runs) and 3b (server)")
    args = ap.parse_args()
    ok = True
    if args.only_runs:
        ok &= between_runs_part(args)
        ok &= server_runs_part(args)
        return 0 if ok else 1
    if not args.skip_model:
        ok &= model_part(args)
        ok &= rollback_part(args)
        ok &= between_runs_part(args)
        ok &= server_runs_part(args)
    if not args.skip_overhead:
        ok &= overhead_part(args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
