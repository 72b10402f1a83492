"""The reflection turn at the end of a chat, on the embedded model (issue 24 item 2): does it
propose nothing when nothing durable came up?

Each chat is a short conversation (the person's messages and the assistant's replies, put into
the conversation as they would be after those turns) in a copy of the example workspace (its
notes: Lina, Marek, the Kirkstall Park project, preferences). Then the reflection step itself
runs on the model in process (assistant.agent.reflection.reflect: the real instruction, schema,
bounds and collection), and what it proposed is counted; nothing is written. A reply, a
malformed step or a model error is "nothing proposed" (an unusable reply never becomes a
proposal).

  NOTHING: 24 chats with nothing durable in them (small talk, one-off questions, a question
           about the notes): the share that proposes nothing decides the default of
           `[memory] reflect`: "chat" if it is at least 90%, else "off".
  DURABLE: 8 chats where the person states something worth keeping: proposals made.

    python bench/reflection.py                 # the embedded model (Gemma 3 270M), in process
    python bench/reflection.py --model script:FILE.json   # the harness on a scripted model
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.agent.reflection import REFLECT_SECONDS, reflect  # noqa: E402
from assistant.models.loader import load_model  # noqa: E402
from assistant.session import open_session  # noqa: E402
from assistant.workspace.layout import open_workspace  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TARGET = 0.90

# (person, assistant) exchanges of one chat
NOTHING: list[list[tuple[str, str]]] = [
    [("hi", "Hello! How can I help today?")],
    [("good morning", "Good morning! What's on your mind?")],
    [("thanks, that's all", "You're welcome. Have a good day!")],
    [("how are you?", "I'm fine, thank you. How can I help?")],
    [("what's 17 times 23?", "17 times 23 is 391.")],
    [("how many minutes are in a day?", "There are 1,440 minutes in a day.")],
    [("what's the capital of Portugal?", "Lisbon.")],
    [("convert 5 km to miles", "5 km is about 3.1 miles.")],
    [("give me a synonym for happy", "Cheerful.")],
    [("what day of the week was 1 January 2000?", "It was a Saturday.")],
    [("tell me a short joke", "Why did the scarecrow win an award? He was outstanding in his field.")],
    [("how do I boil an egg?", "Put it in boiling water for about 7 minutes, then cool it in cold water.")],
    [("what does HTTP stand for?", "HyperText Transfer Protocol.")],
    [("spell 'necessary' for me", "n-e-c-e-s-s-a-r-y.")],
    [("is it going to rain, do you think?", "I can't see a forecast from here; a weather site will know.")],
    [("who is Lina?", "Lina is your sister, according to your notes.")],
    [("what do my notes say about Marek?", "Your notes say Marek is a colleague, the planting specialist on the Kirkstall project.")],
    [("what's the status of the Kirkstall Park project?", "Your notes have the project's current state; "
                                                          "nothing new was added today.")],
    [("do I have any notes about my preferences?", "Yes, preferences.md holds them.")],
    [("list my notes", "You have notes on Lina, Marek, the Kirkstall Park project and your preferences.")],
    [("what's a good name for a goldfish?", "Bubbles."), ("ha, ok", "Glad it made you smile.")],
    [("remind me what 2 to the 10th is", "1,024.")],
    [("how long should I steep green tea?", "About 2 to 3 minutes, in water below boiling.")],
    [("write a haiku about autumn", "Leaves drift to the ground / the air smells of woodsmoke now / "
                                    "the year exhales slow.")],
]

DURABLE: list[list[tuple[str, str]]] = [
    [("my brother Tomas is moving to Oslo next month", "That's a big move for Tomas! I hope it goes well.")],
    [("from now on, call me Sam, not Samuel", "Understood, Sam.")],
    [("I'm vegetarian, keep that in mind for recipes", "Noted: vegetarian recipes only.")],
    [("I started a new project: rebuilding the garden shed", "Nice! A garden shed rebuild sounds fun.")],
    [("correction: Lina's birthday is on 3 May, not 5 May", "Thanks for the correction: 3 May.")],
    [("my manager is called Priya Shah", "Got it, your manager is Priya Shah.")],
    [("I prefer short answers without bullet points", "Understood: short answers, no bullet points.")],
    [("the Kirkstall Park project is now finished, we handed it over on Friday",
      "Congratulations on finishing Kirkstall Park!")],
]


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    shutil.copytree(REPO / "workspace.example", ws)
    return ws


class Timed:
    """The model, with each step's wall time and token counts kept (for the figures only)."""

    def __init__(self, model) -> None:
        self.model, self.name, self.steps = model, getattr(model, "name", "?"), []

    def step(self, messages, schema, **kw):
        started = time.monotonic()
        result = self.model.step(messages, schema, **kw)
        self.steps.append({"s": round(time.monotonic() - started, 1), "evaluated": result.evaluated_tokens,
                           "completion": result.completion_tokens, "text": result.text[:120]})
        return result


def run_chat(session, model, exchanges: list[tuple[str, str]], seconds: float) -> dict:
    if isinstance(model, Timed):
        model.steps = []
    agent = session.new_agent(model)
    for said, replied in exchanges:
        agent.conversation.add_user(said)
        agent.conversation.add_action(json.dumps({"reply": replied}, ensure_ascii=False))
    started = time.monotonic()
    outcome = reflect(agent, seconds=seconds, label="bench")
    elapsed = time.monotonic() - started
    if outcome.worker is not None:     # cut at the bound: the model is busy until its step ends
        outcome.worker.join(600)
    row = {"chat": exchanges[0][0], "proposals": [{"tool": p.tool, "path": p.path} for p in outcome.proposals],
            "dropped": outcome.dropped, "ended": outcome.ended, "invalid": outcome.invalid,
            "error": outcome.error, "seconds": round(elapsed, 2),
           "steps": list(getattr(model, "steps", []))}
    print(json.dumps(row, ensure_ascii=False), file=sys.stderr, flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="script:FILE.json for the harness; default the embedded model")
    parser.add_argument("--seconds", type=float, default=REFLECT_SECONDS, help="the reflection's time bound")
    parser.add_argument("--json", action="store_true", help="every chat's result as JSON lines too")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ws_path = _workspace(Path(tmp))
        ws = open_workspace(ws_path)
        session = open_session(ws, "watched", kind="chat", inline_ask=lambda question: None)
        try:
            model = Timed(load_model(args.model, ws, progress=None))
            # in a chat the model has evaluated the system prompt and the conversation before the
            # reflection comes; here one untimed reflection first puts the shared prefix in its cache
            warm = run_chat(session, model, [("hello", "Hello!")], 600.0) if not args.model else None
            if warm is not None:
                print(f"warm-up (not counted): {warm['seconds']:g} s", file=sys.stderr)
            rows = {"nothing": [run_chat(session, model, c, args.seconds) for c in NOTHING],
                    "durable": [run_chat(session, model, c, args.seconds) for c in DURABLE]}
        finally:
            session.close()
    if args.json:
        for group, results in rows.items():
            for r in results:
                print(json.dumps({"group": group, **r}, ensure_ascii=False))
    quiet = sum(1 for r in rows["nothing"] if not r["proposals"])
    share = quiet / len(rows["nothing"])
    made = sum(len(r["proposals"]) for r in rows["durable"])
    with_any = sum(1 for r in rows["durable"] if r["proposals"])
    ended = {}
    for r in rows["nothing"] + rows["durable"]:
        ended[r["ended"]] = ended.get(r["ended"], 0) + 1
    slowest = max(r["seconds"] for r in rows["nothing"] + rows["durable"])
    label = args.model or "embedded (Gemma 3 270M, in process)"
    print(f"model: {label}; time bound {args.seconds:g} s")
    print(f"nothing-durable chats proposing nothing: {quiet}/{len(rows['nothing'])} ({share:.0%}; target >= {TARGET:.0%})")
    print(f"durable chats: {with_any}/{len(rows['durable'])} proposed something; {made} proposals in all")
    print(f"how the reflections ended: {', '.join(f'{k} {v}' for k, v in sorted(ended.items()))}; slowest {slowest:g} s")
    print(f'default by this figure: reflect = "{"chat" if share >= TARGET else "off"}"')
    return 0


if __name__ == "__main__":
    sys.exit(main())
