"""Answer benchmark: does the assistant answer from its notes, and say when they do not say?

Each question of a shipped set (bench/answers/example.json over workspace.example's notes,
bench/answers/large.json over the 300+ notes of bench/answers/large/memory/) goes through the
real doors, one fresh copy of the workspace per question:
- run:  `assistant -w WS run --approval-timeout 1s "QUESTION"`, the `done: ...` line read;
- chat: `printf 'QUESTION\\n' | assistant -w WS chat`, the `assistant: ...` reply read;
each on every selected backend: llama (the GGUF in the CLI's process) and openai (the same
GGUF behind llama-cpp-python's server on loopback, started here; or the server of
`--model openai:URL`). The CLI is `python -m assistant` of this repo, what the `assistant`
script runs. Two baselines run in this process on the same model (the run door's mode,
unattended): `no-notes` (an empty memory/) and `oracle` (the set's notes in memory/ with recall
off, the answering notes' full text put before the question in the message, so the figure does
not depend on recall or on where the prompt puts recalled notes; a memory_read of a note the
message shows finds it, where on an empty memory/ the 1.5B model looped on refused reads). Every
answer is scored by bench/answers_score.py.

Times per question, from the transcript the door writes: wall (the bench's, process launch to
exit); start-up (session_start's `startup_s`: the kernel's process start to session start, less
the load); load (session_start's `load_s`); model (the sum of the `step` records' `model_s`, the
model's step calls: llama.cpp's evaluation and generation, or the wait on the server); harness
= wall - start-up - load - model (recall, tools, the gate, transcripts, exit). A checkout from
before those fields is timed from outside (the loader's `[model] loaded in Xs` line, the
transcript polled as it is written). In process: wall and model (timed around each step) only. The copied workspace first answers one warm-up task, so the prompt
cache (`[model] prompt_cache = true`) holds the stable prefix as on a person's second run.

    python bench/answers.py [--workspace example|large] [--model PATH --chat-format NAME |
                            --model openai:URL | --model script:FILE] [--limit N]
                            [--ids ID,ID] [--only DOOR,BACKEND] [--set SECTION.KEY=VALUE]
                            [--baselines NAME,NAME|none] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))     # the repo ahead of bench/: `policy` is the package, not bench/policy.py

from answers_score import LABELS, score  # noqa: E402

SETS = REPO / "bench" / "answers"
DOORS = ("run", "chat")
BACKENDS = ("llama", "openai", "script")
BASELINES = ("no-notes", "oracle")
KINDS = ("one-note", "body-only", "two-note", "unanswerable")
QUESTION_TIMEOUT = 900.0       # seconds one door may take for one question before it is killed
POLL = 0.01                    # seconds between looks at the transcript
WARM_UP = "Say hello in one short sentence."
LOADED = re.compile(r"^\[model\] loaded in ([0-9.]+)s")


# ---------------------------------------------------------------------------------------------
# question sets and workspaces


def load_set(name: str) -> dict:
    data = json.loads((SETS / f"{name}.json").read_text(encoding="utf-8"))
    memory = REPO / data["notes_from"]
    notes = {p.relative_to(memory).as_posix(): p.read_text(encoding="utf-8") for p in sorted(memory.rglob("*.md"))}
    for q in data["questions"]:
        if q["kind"] not in KINDS:
            raise SystemExit(f"{name}.json {q['id']}: unknown kind {q['kind']!r}")
        for rel in q["notes"]:
            if rel not in notes:
                raise SystemExit(f"{name}.json {q['id']}: no note {rel}")
    data["notes"] = notes
    return data


def set_config(text: str, section: str, values: dict[str, object]) -> str:
    """config.toml with keys of one section set (each key must be there already)."""
    head = f"[{section}]\n"
    start = 0 if text.startswith(head) else text.index("\n" + head)
    end = text.find("\n[", start + 2)
    end = len(text) if end < 0 else end
    part = text[start:end]
    for key, value in values.items():
        part, n = re.subn(rf"(?m)^{key} = .*$", lambda _m: f"{key} = {json.dumps(value)}", part, count=1)
        if n != 1:
            raise SystemExit(f"workspace.example/config.toml has no [{section}] {key} line")
    return text[:start] + part + text[end:]


def set_model_config(text: str, values: dict[str, object]) -> str:
    """config.toml with keys of its [model] section set (each key must be there already)."""
    return set_config(text, "model", values)


def parse_settings(items: list[str]) -> dict[str, dict[str, object]]:
    """--set SECTION.KEY=VALUE (VALUE as TOML would read it: a number, true/false, or a string)."""
    out: dict[str, dict[str, object]] = {}
    for item in items:
        name, eq, raw = item.partition("=")
        section, dot, key = name.partition(".")
        if not eq or not dot or not section or not key:
            raise SystemExit(f"--set {item}: use SECTION.KEY=VALUE, e.g. memory.catalog_budget_bytes=1024")
        try:
            value: object = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out.setdefault(section, {})[key] = value
    return out


def make_workspace(root: Path, memory: Path | None, model_config: dict[str, object],
                   settings: dict[str, dict[str, object]] | None = None) -> Path:
    """A workspace as `init --example` makes it, memory/ replaced by `memory` (None: empty),
    its [model] keys set to `model_config` and any other section's keys to `settings`."""
    from assistant.workspace import init_workspace   # the package (or, before 46ae573, the module)

    init_workspace(root, example=True)
    shutil.rmtree(root / "memory")
    if memory is None:
        (root / "memory").mkdir(mode=0o700)
    else:
        shutil.copytree(memory, root / "memory")
    cfg = root / "config.toml"
    text = set_model_config(cfg.read_text(encoding="utf-8"), model_config)
    for section, values in (settings or {}).items():
        text = set_config(text, section, values)
    cfg.write_text(text, encoding="utf-8")
    return root


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def fresh_copy(template: Path, live: Path) -> None:
    """live becomes a fresh copy of template, except that live/memory stays the same folder
    (the search index is bound to its inode, as a person's is to theirs) with the template's
    notes put back in it if the last question's chat wrote any."""
    for entry in list(live.iterdir()):
        if entry.name != "memory":
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    for entry in template.iterdir():
        if entry.name != "memory":
            (shutil.copytree(entry, live / entry.name, symlinks=True) if entry.is_dir()
             else shutil.copy2(entry, live / entry.name))
    want, have = _tree(template / "memory"), _tree(live / "memory")
    if want != have:
        for rel in have.keys() - want.keys():
            (live / "memory" / rel).unlink()
        for rel in want:
            if have.get(rel) != want[rel]:
                (live / "memory" / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(template / "memory" / rel, live / "memory" / rel)


# ---------------------------------------------------------------------------------------------
# one answer


@dataclass
class Answer:
    id: str
    kind: str
    question: str
    sent: str = ""                     # what the door was given (the oracle: the notes, then the question)
    answer: str | None = None
    substituted: str | None = None     # the outcome line when there was no reply to score
    label: str = ""
    why: str = ""
    found: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)
    words: int = 0
    wall_s: float = 0.0
    startup_s: float | None = None
    load_s: float | None = None
    model_s: float | None = None
    harness_s: float | None = None
    prompt_tokens: int | None = None     # the first step's prompt, from the transcript
    evaluated_tokens: int | None = None  # prompt tokens evaluated over all steps (cache misses)
    steps: int = 0
    tools: list[str] = field(default_factory=list)
    failed_tools: list[str] = field(default_factory=list)   # the calls whose result was a failure (refused, not found)
    recalled: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    exit_code: int | None = None
    stdout: str = ""                   # the end of the CLI's stdout, when it held no reply
    stderr: str = ""                   # the end of the CLI's stderr (progress, errors)


class TranscriptWatch:
    """The moment each transcript line of a CLI process appears, seen from outside by polling."""

    def __init__(self, transcripts: Path, t0: float):
        self.dir, self.t0 = transcripts, t0
        self.before = set(os.listdir(transcripts)) if transcripts.is_dir() else set()
        self.events: list[tuple[float, dict]] = []
        self.created: float | None = None
        self._buf, self._pos, self._path = b"", 0, None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _look(self) -> None:
        now = time.perf_counter() - self.t0
        if self._path is None:
            try:
                new = [n for n in os.listdir(self.dir) if n.endswith(".jsonl") and n not in self.before]
            except FileNotFoundError:
                return
            if not new:
                return
            self._path, self.created = self.dir / new[0], now
        try:
            with open(self._path, "rb") as f:
                f.seek(self._pos)
                chunk = f.read()
        except FileNotFoundError:
            return
        self._pos += len(chunk)
        self._buf += chunk
        *lines, self._buf = self._buf.split(b"\n")
        for line in lines:
            if line.strip():
                self.events.append((now, json.loads(line)))

    def _run(self) -> None:
        while not self._stop.wait(POLL):
            self._look()

    def finish(self) -> list[tuple[float, dict]]:
        self._stop.set()
        self._thread.join()
        self._look()
        return self.events


def _fill_from_events(a: Answer, events: list[dict]) -> None:
    steps = [e for e in events if e.get("event") == "step"]
    a.steps = len(steps)
    if steps:
        a.prompt_tokens = steps[0].get("prompt_tokens")
        a.evaluated_tokens = sum(int(s.get("evaluated_tokens") or 0) for s in steps)
    a.tools = [e.get("tool", "?") for e in events if e.get("event") == "tool_call"]
    a.failed_tools = [e.get("tool", "?") for e in events if e.get("event") == "tool_result" and not e.get("ok")]
    a.notices = [str(e.get("message", "")) for e in events if e.get("event") == "notice"]
    for e in events:
        if e.get("event") == "recall":
            a.recalled = [n.get("path", "?") for n in e.get("notes", [])]


def chat_reply(stdout: str) -> tuple[str | None, str | None]:
    """(reply, substituted) from a piped chat's stdout: the last `assistant: ` block."""
    lines = stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(r"assistant(?: \(in full\))?: ", line)]
    if not starts:
        said = [line.strip() for line in lines if line.strip()]
        return None, (said[-1] if said else "no reply")
    i = starts[-1]
    parts = [lines[i].split(": ", 1)[1]]
    for line in lines[i + 1:]:
        if not line.startswith("   : "):
            break
        parts.append(line[len("   : "):])
    return "\n".join(parts), None


def door_answer(door: str, ws: Path, q: dict, spec: str | None, env: dict) -> Answer:
    """One question through one door of the real CLI, in a fresh process."""
    argv = [sys.executable, "-m", "assistant", "-w", str(ws)]
    argv += ["run", "--approval-timeout", "1s"] if door == "run" else ["chat"]
    if spec:
        argv += ["--model", spec]
    if door == "run":
        argv.append(q["question"])
    a = Answer(q["id"], q["kind"], q["question"], q["question"])
    t0 = time.perf_counter()
    watch = TranscriptWatch(ws / "state" / "transcripts", t0)
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=REPO, start_new_session=True)
    try:
        out, err = proc.communicate(input=(q["question"] + "\n").encode() if door == "chat" else b"",
                                    timeout=QUESTION_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        a.substituted = f"killed after {QUESTION_TIMEOUT:g}s"
    a.wall_s = time.perf_counter() - t0
    a.stderr, a.exit_code = err.decode("utf-8", "replace")[-1500:], proc.returncode
    timed = watch.finish()
    stdout = out.decode("utf-8", "replace")
    if a.substituted is None:
        if door == "run":
            last = stdout.strip().splitlines()[-1] if stdout.strip() else "no outcome line"
            if last.startswith("done: "):
                a.answer = last[len("done: "):]
            else:
                a.substituted = last
        else:
            a.answer, a.substituted = chat_reply(stdout)
    if a.answer is None:
        a.stdout = stdout[-1500:]
    _fill_from_events(a, [e for _, e in timed])
    loads = [float(m.group(1)) for m in (LOADED.match(line) for line in err.decode("utf-8", "replace").splitlines()) if m]
    a.load_s = loads[0] if loads else None
    start = next((t for t, e in timed if e.get("event") == "session_start"), None)
    record = next((e for _, e in timed if e.get("event") == "session_start"), {})
    steps = [e for _, e in timed if e.get("event") == "step"]
    if "load_s" in record and "startup_s" in record and steps and all("model_s" in e for e in steps):
        # the program's own figures: the kernel's process start, the timed load, each step's call
        a.load_s, a.startup_s = float(record["load_s"]), float(record["startup_s"])
        a.model_s = sum(float(e["model_s"]) for e in steps)
        a.harness_s = a.wall_s - a.startup_s - a.load_s - a.model_s
    elif start is not None:    # a checkout from before they were recorded: watched from outside
        a.startup_s = max(0.0, start - (a.load_s or 0.0))
        a.model_s = sum(t - timed[i - 1][0] for i, (t, e) in enumerate(timed) if e.get("event") == "step" and i)
        a.harness_s = a.wall_s - start - a.model_s
    return a


class TimedModel:
    """The model with the time spent in each step added up (the in-process baselines). Every
    other attribute is the model's own, so a baseline is driven by the same protocol as the
    assistant (`protocol`, the completion protocol's `complete`): before, the wrapper hid
    `protocol` and the baselines of the embedded model got the JSON action prompt."""

    def __init__(self, model):
        self.model, self.name, self.seconds = model, model.name, 0.0

    def __getattr__(self, name: str):
        return getattr(self.model, name)

    def _timed(self, call, *args, **kwargs):
        t = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t

    def step(self, *args, **kwargs):
        return self._timed(self.model.step, *args, **kwargs)

    def complete(self, *args, **kwargs):
        return self._timed(self.model.complete, *args, **kwargs)


def oracle_message(q: dict, notes: dict[str, str]) -> str:
    if not q["notes"]:
        return q["question"]
    shown = "\n\n".join(f"--- {rel} ---\n{notes[rel].strip()}" for rel in q["notes"])
    return f"My notes:\n\n{shown}\n\nQuestion: {q['question']}"


def baseline_answers(ws_roots: dict[str, Path], names: list[str], questions: list[dict], notes: dict[str, str],
                     spec: str | None, on_answer) -> tuple[dict[str, list[Answer]], float]:
    """The questions answered in this process on an empty memory/, once as they are (no-notes)
    and once with the answering notes' text before them (oracle, in a workspace with recall
    off, so the turn does not also say that no note matched); the model loaded once (its
    KV cache then holds the stable prefix for every question). `ws_roots`: each baseline's
    workspace. Returns the answers per baseline and the load seconds."""
    from assistant.models.loader import load_model
    from assistant.session import open_session
    try:
        from assistant.agent.events import record
        def on_event(events: list[dict]):
            return lambda e: events.append({"event": e.EVENT, **record(e)})
    except ImportError:      # a checkout from before the typed events (26651cd): (name, dict) pairs
        def on_event(events: list[dict]):
            return lambda n, d: events.append({"event": n, **d})
    from assistant.workspace import open_workspace

    ws = open_workspace(ws_roots["no-notes"])
    t = time.perf_counter()
    model = TimedModel(load_model(spec, ws, progress=None))
    load_s = time.perf_counter() - t
    out: dict[str, list[Answer]] = {}
    for name in names:
        out[name] = []
        ws = open_workspace(ws_roots[name])
        for q in questions:
            if spec and spec.startswith("script:"):     # a script is played once: a fresh one per question
                model = TimedModel(load_model(spec, ws, progress=None))
            a = Answer(q["id"], q["kind"], q["question"], oracle_message(q, notes) if name == "oracle" else q["question"])
            events: list[dict] = []
            model.seconds = 0.0
            t0 = time.perf_counter()
            with open_session(ws, "unattended", kind="run", approval_timeout=1.0) as session:
                agent = session.new_agent(model, on_event=on_event(events))
                result = agent.turn(a.sent)
            a.wall_s = time.perf_counter() - t0
            a.model_s, a.harness_s = model.seconds, a.wall_s - model.seconds
            if result.outcome == "reply" and not result.denials:
                a.answer = result.reply or ""
            else:
                a.substituted = f"{result.outcome}: {result.message or (result.denials[0].reason if result.denials else '')}"
            _fill_from_events(a, events)
            on_answer(name, a)
            out[name].append(a)
    return out, load_s


# ---------------------------------------------------------------------------------------------
# the table


def _median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _fmt(v: float | None, spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


def table(title: str, answers: list[Answer], load_s: float | None = None) -> str:
    rows = [f"{title}: {len(answers)} questions",
            f"  {'kind':<13}" + "".join(f"{lab:>12}" for lab in LABELS)]
    for kind in KINDS + ("all",):
        group = [a for a in answers if kind in ("all", a.kind)]
        if group:
            rows.append(f"  {kind:<13}" + "".join(f"{sum(a.label == lab for a in group):>12}" for lab in LABELS))
    loads = _median(a.load_s for a in answers) if load_s is None else load_s
    rows.append(f"  median s: wall {_fmt(_median(a.wall_s for a in answers))}, start-up "
                f"{_fmt(_median(a.startup_s for a in answers))}, load {_fmt(loads)}, model "
                f"{_fmt(_median(a.model_s for a in answers))}, harness {_fmt(_median(a.harness_s for a in answers), '.2f')}"
                f"; prompt tokens (step 1) {_fmt(_median(a.prompt_tokens for a in answers), '.0f')}, evaluated "
                f"{_fmt(_median(a.evaluated_tokens for a in answers), '.0f')}, steps {_fmt(_median(a.steps for a in answers), '.0f')}")
    return "\n".join(rows)


# ---------------------------------------------------------------------------------------------
# main


@dataclass
class ModelChoice:
    label: str
    backends: tuple[str, ...]
    config: dict[str, object]         # [model] lines set in the copied config.toml
    spec: str | None = None           # --model given to the CLI (the scripted model only)
    gguf: str | None = None           # what a harness-started server serves


def choose_model(model: str | None, chat_format: str | None) -> ModelChoice:
    fmt = {"chat_format": chat_format} if chat_format else {}
    if model is None:
        return ModelChoice("embedded (Gemma 3 270M)", ("llama", "openai"), {"prompt_cache": True, **fmt}, gguf="")
    if model.startswith("script:"):
        path = Path(model[len("script:"):]).expanduser().resolve()
        return ModelChoice(f"script:{path.name}", ("script",), {}, spec=f"script:{path}")
    if model.startswith("openai:"):
        return ModelChoice(model, ("openai",), {"backend": "openai", "endpoint": model[len("openai:"):], **fmt})
    path = Path(model).expanduser().resolve()
    if not path.is_file():
        raise SystemExit(f"--model {model}: no such file")
    if not chat_format:
        raise SystemExit("--model PATH needs --chat-format NAME (e.g. chatml for Qwen, llama-3, auto)")
    return ModelChoice(path.name, ("llama", "openai"), {"path": str(path), "prompt_cache": True, **fmt}, gguf=str(path))


def start_model_server(gguf: str, log_dir: Path):
    """llama-cpp-python's server on loopback for the openai backend (tests/helpers/model_server)."""
    sys.path.append(str(REPO / "tests" / "helpers"))
    from model_server import start_server

    return start_server(model=gguf or None, n_ctx=8192, log_dir=log_dir, ready_within=300.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", choices=("example", "large"), default="example")
    ap.add_argument("--model", default=None, metavar="PATH|openai:URL|script:FILE",
                    help="a GGUF of your own (with --chat-format), a server, or a scripted model; default the embedded one")
    ap.add_argument("--chat-format", default=None, metavar="NAME", help="[model] chat_format for --model PATH")
    ap.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N questions")
    ap.add_argument("--ids", default="", metavar="ID,ID",
                    help="only these questions (e.g. ex01,ex21), in the set's order; with --limit, the first N of them")
    ap.add_argument("--only", default="", metavar="DOOR,BACKEND",
                    help="doors (run, chat) and backends (llama, openai) to measure, e.g. run,llama; "
                         "the baselines go with the run door")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="a config.toml key of the copied workspaces, e.g. memory.catalog_budget_bytes=1024 "
                         "(repeatable)")
    ap.add_argument("--baselines", default=",".join(BASELINES), metavar="NAME,NAME",
                    help=f"which in-process baselines to run with the run door ({', '.join(BASELINES)}; "
                         "'none' for none)")
    ap.add_argument("--json", default=None, metavar="OUT", help="write every answer and its score here")
    args = ap.parse_args()

    choice = choose_model(args.model, args.chat_format)
    settings = parse_settings(args.set)
    baselines = [] if args.baselines == "none" else [b for b in args.baselines.split(",") if b]
    for b in baselines:
        if b not in BASELINES:
            raise SystemExit(f"--baselines {b}: use {', '.join(BASELINES)} or none")
    wanted = [w for w in args.only.split(",") if w]
    for w in wanted:
        if w not in DOORS + BACKENDS:
            raise SystemExit(f"--only {w}: use doors {', '.join(DOORS)} and backends {', '.join(BACKENDS)}")
    doors = [d for d in DOORS if d in wanted] or list(DOORS)
    backends = [b for b in choice.backends if b in wanted] or ([] if any(w in BACKENDS for w in wanted)
                                                              else list(choice.backends))
    if not backends:
        raise SystemExit(f"--only {args.only}: this model runs on {', '.join(choice.backends)}")
    qset = load_set(args.workspace)
    questions = qset["questions"]
    if args.ids:
        picked = set(args.ids.split(","))
        unknown = picked - {q["id"] for q in questions}
        if unknown:
            raise SystemExit(f"--ids: no question {', '.join(sorted(unknown))} in {args.workspace}.json")
        questions = [q for q in questions if q["id"] in picked]
    questions = questions[: args.limit] if args.limit else questions
    notes = qset["notes"]
    known = "\n".join(notes.values())
    persona = (REPO / "workspace.example" / "PERSONA.md").read_text(encoding="utf-8")
    memory = REPO / qset["notes_from"]
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    results: list[dict] = []

    def scored(a: Answer, door: str, backend: str) -> None:
        s = score(next(q for q in questions if q["id"] == a.id), a.answer, known=known, persona=persona,
                  substituted=a.substituted)
        a.label, a.why, a.found, a.missing, a.forbidden, a.invented, a.words = (
            s.label, s.why, s.found, s.missing, s.forbidden, s.invented, s.words)
        results.append({"model": choice.label, "door": door, "backend": backend, "workspace": args.workspace,
                        **asdict(a)})
        print(f"  {door}/{backend} {a.id} {a.label:<11} {a.wall_s:6.1f}s  {(a.answer or a.substituted or '')[:100]!r}",
              file=sys.stderr, flush=True)

    tables: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-answers-") as tmp:
        tmp = Path(tmp)
        server = None
        try:
            for backend in backends:
                config = dict(choice.config)
                if backend == "openai" and choice.gguf is not None:
                    server = server or start_model_server(choice.gguf, tmp)
                    config.update(backend="openai", endpoint=server.url)
                for door in doors:
                    template, live = tmp / f"{door}-{backend}-template", tmp / f"{door}-{backend}"
                    make_workspace(live, memory, config, settings)
                    door_answer(door, live, {"id": "warm-up", "kind": "one-note", "question": WARM_UP},
                                choice.spec, env)
                    shutil.rmtree(live / "state" / "transcripts")
                    (live / "state" / "transcripts").mkdir(mode=0o700)
                    shutil.copytree(live, template, symlinks=True)
                    answers = []
                    for q in questions:
                        fresh_copy(template, live)
                        a = door_answer(door, live, q, choice.spec, env)
                        scored(a, door, backend)
                        answers.append(a)
                    tables.append(table(f"{choice.label} · door {door} · backend {backend} · workspace "
                                        f"{args.workspace}", answers))
                    print(tables[-1], flush=True)
                if "run" in doors and backend == backends[0] and baselines:
                    roots = {"no-notes": make_workspace(tmp / "no-notes", None, config, settings),
                             "oracle": make_workspace(tmp / "oracle", memory, config,
                                                      {**settings, "recall": {**settings.get("recall", {}),
                                                                              "enabled": False}})}
                    per_baseline, load_s = baseline_answers(roots, baselines, questions, notes, choice.spec,
                                                            lambda name, a: scored(a, name, backend))
                    for name, answers in per_baseline.items():
                        tables.append(table(f"{choice.label} · baseline {name} (run, in process) · backend "
                                            f"{backend} · workspace {args.workspace}", answers, load_s))
                        print(tables[-1], flush=True)
        finally:
            if server is not None:
                server.stop()
    if args.json:
        meta = {"argv": sys.argv[1:], "settings": settings, "model": choice.label, "workspace": args.workspace,
                "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "questions": len(questions)}
        Path(args.json).write_text(json.dumps({"meta": meta, "tables": tables, "answers": results}, indent=1,
                                              ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
