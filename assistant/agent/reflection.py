"""Reflection: one bounded extra turn at the end of a chat (or a clean run) that proposes memory changes.

Guards "proposed, never done behind the person's back". The model is given the conversation and
one reflection instruction; each memory_write or memory_edit it calls is collected as a
`Proposal` and not executed (the read-only memory tools run, so it can read a note and edit it
with its revision as base instead of writing a near-duplicate). The turn is bounded twice: at
most `seconds` of wall time (REFLECT_SECONDS; the model runs in a worker the caller stops
waiting for) and at most `max_proposals` kept (MAX_PROPOSALS; later ones are counted as
dropped). Anything that is not a valid proposal (a malformed step, a reply, arguments a tool
would refuse, a model error) never becomes one: "nothing proposed" is the expected answer. A call
carrying a value from the vault is refused and counted like any turn's and ends the reflection.

`write_proposal` then sends one proposal through the same gated writer as any memory call
(history, audit, the leak scan) with a `ProposalCall` authority: the gate allows it only on a
person's answer, this once (inline in a chat: the full text or diff, y/N; out of band after a
run: one approval request each), whatever the table or a grant says. Every event is recorded
in the transcript under its own `reflection_*` kind.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from assistant.agent.actions import ActionError, Reply, ToolCall, action_schema, parse_action
from assistant.agent.native_tools import call_schema, parse_native
from assistant.agent.interrupt import DoneFlag, abandon
from assistant.agent.loop import MAX_TOOL_OUTPUT_CHARS, Agent
from assistant.gating.context import COMMITTED_WRITE_WAIT
from assistant.gating.observed import ProposalCall
from assistant.models.base import ModelError
from assistant.notes.history import Origin
from assistant.notes.store import NoteError
from assistant.tools.base import ToolError
from assistant.tools.memory import edit_args, edited_text, write_args

__all__ = ["INSTRUCTION", "MAX_PROPOSALS", "REFLECT_SECONDS", "Proposal", "Reflection", "reflect",
           "write_proposal"]

REFLECT_SECONDS = 30.0     # wall time of the whole reflection turn
MAX_PROPOSALS = 5          # proposals kept (shown); later ones are dropped and counted
MAX_INVALID = 2            # malformed steps tolerated before the reflection ends
PROPOSING = ("memory_write", "memory_edit")
READING = ("memory_read", "memory_list", "memory_search")
ANSWER_REQUIRED = "a memory change the reflection proposed is written only on a person's yes"

INSTRUCTION = (
    "[assistant program] The conversation has ended. Before it closes, decide whether anything the "
    "person said in it is worth keeping in your long-term memory for later conversations.\n"
    "Worth keeping: names of people and how they relate to the person, standing preferences, "
    "ongoing projects and their state, corrections the person gave you.\n"
    "Not worth keeping: what your notes already say, anything that came from a web page or a file, "
    "one-off requests and questions, small talk.\n"
    "To add to a note that exists, memory_read it and call memory_edit with its revision as base; "
    "do not write a second note on the same topic. A memory_write or memory_edit you call now is only "
    "a proposal: the person sees it and decides.\n"
    "Most conversations hold nothing worth keeping: then reply {\"reply\": \"nothing to keep\"}. "
    "When you have proposed what is worth keeping, reply {\"reply\": \"done\"}."
)
AFTER_PROPOSAL = ("[assistant program] Recorded as a proposal (not written yet). Propose the next "
                  "change, or reply \"done\".")


@dataclass(frozen=True)
class Proposal:
    """One memory change the model proposed: the tool (memory_write or memory_edit) and its
    arguments as checked by that tool's own argument parsing."""

    tool: str
    args: dict

    @property
    def path(self) -> str:
        return str(self.args.get("path", ""))


@dataclass
class Reflection:
    """What a reflection turn came to. `dropped`: valid proposals beyond the limit;
    `unfinished`: the time bound came while a step was still being written (it is dropped);
    `skipped`: why it did not run to its end (Ctrl-C), else None."""

    proposals: list[Proposal] = field(default_factory=list)
    dropped: int = 0
    unfinished: bool = False
    steps: int = 0
    invalid: int = 0
    error: str | None = None
    ended: str = ""           # "reply" | "time" | "invalid" | "error" | "steps" | "secret"
    # at the time bound: the worker left inside a model step (the model is busy until it ends;
    # a caller that uses the model again first joins it)
    worker: threading.Thread | None = field(default=None, compare=False, repr=False)

    @property
    def at_bound(self) -> bool:
        return self.ended == "time" or self.dropped > 0


def reflect(agent: Agent, *, seconds: float = REFLECT_SECONDS, max_proposals: int = MAX_PROPOSALS,
            label: str = "chat") -> Reflection:
    """Run the reflection turn over `agent`'s conversation: at most `seconds` of wall time, at
    most `max_proposals` proposals kept. KeyboardInterrupt reaches the caller at once (the
    worker is left to stop at its next step and no proposal it makes is kept)."""
    outcome = Reflection()
    lock = threading.Lock()
    stop = threading.Event()
    busy = threading.Event()      # set while a model step is being written
    log = agent.transcript
    _record(log, "reflection_start", door=label, seconds=seconds, max_proposals=max_proposals)

    def work() -> None:
        try:
            _collect(agent, outcome, lock, stop, busy, max_proposals)
        except ModelError as exc:
            with lock:
                outcome.error, outcome.ended = agent.scanner.redact(str(exc)) if agent.scanner else str(exc), "error"
        except Exception as exc:   # noqa: BLE001 - a backend crash is "nothing more proposed"
            with lock:
                outcome.error, outcome.ended = f"{type(exc).__name__}", "error"

    worker = threading.Thread(target=work, name="reflection", daemon=True)
    deadline = time.monotonic() + max(0.0, seconds)
    try:
        # start() waits for the thread to run: a Ctrl-C can land inside it (seen under CI load,
        # the worker already in its second step), so it sits inside the try like the wait
        worker.start()
        while worker.is_alive():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            worker.join(min(0.05, left))
    except KeyboardInterrupt:
        stop.set()
        abandon(worker)
        _record(log, "reflection_end", ended="interrupted", proposals=0, dropped=0)
        raise
    stop.set()
    with lock:
        if worker.is_alive():
            abandon(worker)         # still inside a model step: left to finish, never kept
            outcome.ended = "time"
            outcome.unfinished = busy.is_set()
        result = Reflection(list(outcome.proposals), outcome.dropped, outcome.unfinished, outcome.steps,
                            outcome.invalid, outcome.error, outcome.ended,
                            worker=worker if worker.is_alive() else None)
    _record(log, "reflection_end", ended=result.ended, proposals=len(result.proposals), dropped=result.dropped,
            unfinished=result.unfinished, steps=result.steps, invalid=result.invalid,
            **({"message": result.error} if result.error else {}))
    return result


def _collect(agent: Agent, out: Reflection, lock: threading.Lock, stop: threading.Event,
             busy: threading.Event, max_proposals: int) -> None:
    """The reflection loop (in the worker): model steps until a reply, the step limit, too many
    malformed steps, or `stop`. Proposals are collected, reads run, nothing is written."""
    tools = [t for t in agent.tool_list if t.name in PROPOSING + READING]
    by_name = {t.name: t for t in tools}
    if not any(name in by_name for name in PROPOSING):
        with lock:
            out.ended = "error"
            out.error = "this session has no memory_write or memory_edit"
        return
    # the turn's own protocol: a model on the native tool-call template (chatml's "tools", the
    # default for such a GGUF) gets its call schema and parse, never JSON actions it was not offered
    native = getattr(agent, "protocol", "actions") == "tools"
    schema = (call_schema(tools, max_reply=agent.max_reply) if native
              else action_schema(tools, max_reply=agent.max_reply))
    parse = parse_native if native else parse_action
    conversation = agent.conversation
    conversation.add_user(INSTRUCTION)
    max_steps = 2 * max_proposals + 4
    while not stop.is_set():
        with lock:
            if out.steps >= max_steps:
                out.ended = "steps"
                return
            out.steps += 1
            n = out.steps
        busy.set()
        step = agent.model.step(conversation.messages(), schema, max_tokens=agent.limits.max_tokens)
        busy.clear()
        if stop.is_set():
            return
        raw = step.text
        try:
            action = parse(raw, tools, max_reply=agent.max_reply)
            error = None
        except ActionError as exc:
            action, error = None, str(exc)
        _record(agent.transcript, "reflection_step", n=n, action=raw, parsed=error is None,
                **({"error": error} if error else {}))
        conversation.add_action(raw)
        if isinstance(action, Reply):
            with lock:
                out.ended = out.ended or "reply"
            return
        if action is None or not isinstance(action, ToolCall):
            with lock:
                out.invalid += 1
                if out.invalid >= MAX_INVALID:
                    out.ended = "invalid"
                    return
            conversation.add_error(error or "invalid action")
            continue
        names = agent.refusals.vault_names(dict(action.args))
        if names:
            # a value from the vault in a call: refused and counted like any turn's, and the
            # reflection ends (one bit per turn at most; the person sees the count, not the model)
            agent.refusals.refuse(action.name, str(action.args.get("path", "")), names)
            _record(agent.transcript, "reflection_step_refused", n=n, tool=action.name, secrets=list(names))
            with lock:
                out.ended = "secret"
            return
        if action.name in READING:
            conversation.add_tool_result(action.name, _read(agent, by_name[action.name], action.args))
            continue
        try:
            (write_args if action.name == "memory_write" else edit_args)(dict(action.args))
            _not_a_duplicate(agent, action)
        except ToolError as exc:      # arguments the tool would refuse: no proposal
            with lock:
                out.invalid += 1
                if out.invalid >= MAX_INVALID:
                    out.ended = "invalid"
                    return
            conversation.add_error(f"{action.name}: {exc}")
            continue
        with lock:
            if stop.is_set():
                return
            if len(out.proposals) < max_proposals:
                out.proposals.append(Proposal(action.name, dict(action.args)))
                kept = True
            else:
                out.dropped += 1
                kept = False
        _record(agent.transcript, "reflection_proposal", n=n, tool=action.name, args=dict(action.args), kept=kept)
        conversation.add_tool_result(action.name, AFTER_PROPOSAL)


def _not_a_duplicate(agent: Agent, action: ToolCall) -> None:
    """A memory_write without a base over a note that exists would be refused when written:
    ToolError, so the model is told to edit that note instead (no proposal)."""
    if action.name != "memory_write" or action.args.get("base") or agent.ctx.memory is None:
        return
    try:
        agent.ctx.memory.read_raw(str(action.args["path"]))
    except Exception:   # noqa: BLE001 - no such note (or unreadable): the writer decides later
        return
    raise ToolError(f"{action.args['path']} already exists: memory_read it and propose memory_edit "
                    "with its revision as base")


def _read(agent: Agent, tool, args: dict) -> str:
    """A read-only memory tool's output for the model (redacted, cut); an error as its text."""
    try:
        output = str(tool.run(dict(args), agent.ctx))
    except ToolError as exc:
        output = f"error: {exc}"
    except Exception as exc:   # noqa: BLE001 - a tool bug is reported to the model, never a crash
        output = f"error: {type(exc).__name__}"
    output = output[:MAX_TOOL_OUTPUT_CHARS]
    return agent.scanner.redact(output) if agent.scanner is not None else output


def _record(log, event: str, **data: object) -> None:
    if log is None:
        return
    try:
        log.append(event, **data)
    except Exception:   # noqa: BLE001 - the transcript is a record; it never stops the reflection
        pass


@dataclass(frozen=True)
class Written:
    """How one proposal ended: written (with the text the model would have been told) or not."""

    proposal: Proposal
    written: bool
    message: str


def write_proposal(agent: Agent, proposal: Proposal, *, number: int, total: int, door: str = "chat") -> Written:
    """Send one proposal through the gated writer; only a person's yes writes it. Runs in a
    worker so that Ctrl-C (KeyboardInterrupt in the caller) gives the call up: a question being
    asked is answered no and nothing is written; a write already committed is waited for
    (bounded). The interrupt then reaches the caller."""
    memory = agent.ctx.memory
    if memory is None:
        return Written(proposal, False, "memory is not available in this session")
    call = ProposalCall(proposal.tool, agent.gate, ANSWER_REQUIRED,
                        label=f"proposed at the end of the {door} ({number} of {total})")
    origin = Origin("assistant", model=agent.ctx.model)
    box: dict[str, Written] = {}
    done = DoneFlag()   # its wait survives a Ctrl-C (agent/interrupt.py)

    def work() -> None:
        try:
            if proposal.tool == "memory_write":
                parsed = write_args(dict(proposal.args))
                result = memory.write(parsed.path, parsed.content, base=parsed.base, origin=origin, call=call)
                verb = "created" if result.created else "replaced"
                text = f"{verb} {result.path} ({result.bytes} bytes)"
            else:
                parsed_edit = edit_args(dict(proposal.args))
                result = memory.edit(parsed_edit.path, parsed_edit.edit, base=parsed_edit.base, origin=origin,
                                     call=call)
                text = edited_text(result, parsed_edit.edit.op)
            box["out"] = Written(proposal, True, text)
        except (NoteError, ToolError) as exc:
            box["out"] = Written(proposal, False, _redact(agent, str(exc)))
        except Exception as exc:   # noqa: BLE001 - a writer bug is "not written", said
            box["out"] = Written(proposal, False, f"{type(exc).__name__}: {_redact(agent, str(exc))}")
        finally:
            done.set()

    worker = threading.Thread(target=work, name="reflection-write", daemon=True)
    worker.start()
    try:
        while not done.wait(0.05):
            pass
    except KeyboardInterrupt:
        if not call.cancel():
            done.wait(COMMITTED_WRITE_WAIT)     # its writer committed: let the write land
        else:
            done.wait(2.0)                      # the question shows its "cancelled: no"
        written = box.get("out", Written(proposal, False, "interrupted"))
        _record(agent.transcript, "reflection_write", tool=proposal.tool, path=proposal.path,
                written=written.written, message=written.message, interrupted=True)
        raise
    written = box["out"]
    _record(agent.transcript, "reflection_write", tool=proposal.tool, path=proposal.path,
            written=written.written, message=written.message)
    return written


def _redact(agent: Agent, text: str) -> str:
    return agent.scanner.redact(text) if agent.scanner is not None else text
