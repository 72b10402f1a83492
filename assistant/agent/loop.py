"""The turn loop: prompt -> model step -> action -> tool (gated inside) -> redacted result -> ...

Guards the model/tool boundary at run time:
- every step is parsed strictly (assistant.agent.actions); a malformed step is refused and the model
  is told why, never guessed at;
- a tool runs only when the model names it, under a per-tool wall-clock limit (time spent
  waiting for a person's approval does not count against it), and a call that ran out of time
  can no longer pass the gate;
- every tool output is redacted by the leak scanner and goes back to the model as untrusted
  data (assistant.agent.prompt), and every event is appended, redacted, to the transcript;
- a runaway model is stopped at `limits.max_steps` tool calls per turn, *before* the extra
  call runs, so nothing is left half-done;
- a tool call whose arguments carry a vault value is refused before it runs, with one message
  naming neither the secret nor where it was, and the turn ends there (so refusals are no
  oracle a model can binary-search); the person is told which secret (event `secret_refused`,
  transcript, audit log).
Every ruling the gate makes is reported the moment it happens (`on_event(RulingMade(...))`) and
remembered, so an unattended run can report "denied" with its own exit code. Every event is one
of the frozen dataclasses of assistant.agent.events.

The gate observer and each call's own gate view live in assistant.gating.observed, the events in
assistant.agent.events, the streaming display in assistant.agent.streaming; this module is the loop
that uses them (and the name their
tests and callers import: `assistant.agent.loop.ObservedGate`, `ReplyStream`, ... are those).
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable

from policy.gate import Gate

from assistant.agent.actions import (
    DEFAULT_MAX_REPLY, ActionError, Reply, ToolCall, action_schema, parse_action, reply_only_schema,
)
from assistant.gating.context import COMMITTED_WRITE_WAIT
from assistant.workspace.config import Config
from assistant.secrets.refusals import SecretRefusals
from assistant.secrets.scanner import Scanner
from assistant.models.base import ContextOverflow, Model, ModelError, StepResult
from assistant.gating.observed import GateRecord, ObservedGate, ToolCallState
from assistant.agent.events import (
    ClaimUnbacked, Event, EventSink, GateEvents, Notice, Recalled, Replied, StepRefused, StepTaken, Stopped, Token,
    ToolCalled, ToolFinished, TurnFailed, UserMessage, VaultValueRefused, WriteShown, record, redacted,
)
from assistant.agent import completion
from assistant.agent.claims import FALSE_CLAIM, claims_a_change
from assistant.agent.native_tools import call_schema, parse_native, reply_only_call_schema
from assistant.agent.interrupt import DoneFlag
from assistant.agent.prompt import SAVING_TOOLS, Conversation, asks
from assistant.agent.streaming import ReplyStream, SafeStream
from assistant.recall.turn import untrusted_place
from assistant.agent.usable import MAX_REPLY_TRIES, correction, unusable_reply
from assistant.tools.base import SecretRefusal, Tool, ToolContext, ToolError
from assistant.records.transcript import Transcript

if TYPE_CHECKING:
    from assistant.recall.turn import Recaller

DISPLAY_ONLY = frozenset({WriteShown.EVENT})   # events for the screen, not the transcript (nor are tokens)
MAX_TOOL_OUTPUT_CHARS = 32 * 1024


# A call that failed may run once more unchanged in the same turn (a lock or a server may have
# been busy); the next unchanged try ends the turn.
MAX_FAILED_REPEATS = 2
# After a landed memory_write or memory_edit the next step may only reply. Measured on the 1.5B
# model with the tools protocol: told "Saved: now reply", it re-read and re-appended the same note
# until a guard ended the turn, so the person never got a reply to a fact they told. The cost: a
# message holding two facts for two notes gets one saved per turn (the reply can say so).
REPLY_AFTER_SAVE = ("that is saved: now reply to the person in one short line (no more tool calls this turn; "
                    "anything else to save can be saved next turn)")


@dataclass
class Limits:
    max_steps: int = 8           # tool calls per turn
    tool_timeout: float = 30.0   # seconds of tool work (approval waits excluded)
    max_tokens: int = 512        # per model step

    @classmethod
    def from_config(cls, config: Config) -> "Limits":
        """From [limits] and [model] max_tokens (ConfigError if either section is bad)."""
        config.require("limits", "model")
        return cls(max_steps=config.limits.max_steps, tool_timeout=config.limits.tool_timeout,
                   max_tokens=config.model.max_tokens)


@dataclass
class TurnResult:
    outcome: str                      # "reply" | "stopped" | "error"
    reply: str | None = None
    message: str = ""                 # why it stopped / what failed
    steps: int = 0                    # model steps taken
    tool_calls: int = 0
    rulings: list[GateRecord] = field(default_factory=list)
    secret_refused: bool = False      # a call carried a vault value: refused, and the turn ended
    failed_calls: list["FailedCall"] = field(default_factory=list)   # calls whose result was an error
    calls: list["CallResult"] = field(default_factory=list)   # every call's result, in order
    false_claim: bool = False         # the reply claimed a save no call made (the person was told)

    @property
    def denials(self) -> list[GateRecord]:
        return [r for r in self.rulings if not r.allowed]


@dataclass(frozen=True)
class FailedCall:
    """A tool call that failed (refused, denied, conflicted, errored), as shown to the person."""

    tool: str
    target: str        # the path or URL the call named (redacted), "" if none
    message: str       # the error the model was told (redacted)


@dataclass(frozen=True)
class CallResult:
    """One tool call of a turn and how it ended (a later success may make a failure good)."""

    tool: str
    target: str        # the path or URL the call named (redacted), "" if none
    ok: bool
    message: str       # for a failed call, the error the model was told (redacted); else ""


SECRET_REFUSED = ("refused: the call carries a secret stored in the person's vault; it did not run. "
                  "Secrets never leave the vault through a tool. No further tool calls are taken in "
                  "this turn.")


def _call_target(args: dict) -> str:
    for key in ("path", "url"):
        if isinstance(args.get(key), str):
            return args[key]
    return ""


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _redact_value(value: object, scanner: Scanner | None) -> object:
    if scanner is None:
        return value
    if isinstance(value, str):
        return scanner.redact(value)
    if isinstance(value, dict):
        return {k: _redact_value(v, scanner) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact_value(v, scanner) for v in value]
    return value


def reply_limit(max_tokens: int) -> int:
    """Longest reply (characters) a step can always finish within `max_tokens`: every token
    carries at least one character, and the JSON around the reply takes a few tokens."""
    return max(16, min(DEFAULT_MAX_REPLY, max_tokens - 12))


class Agent:
    """Runs turns of one session. `on_event(event)` sees everything as it happens, each event one
    of assistant.agent.events (Token, ToolCalled, RulingMade, ToolFinished, StepRefused, Replied,
    Stopped, TurnFailed, ...)."""

    def __init__(
        self,
        *,
        model: Model,
        tools: list[Tool],
        ctx: ToolContext,
        conversation: Conversation,
        transcript: Transcript | None = None,
        limits: Limits | None = None,
        on_event: EventSink | None = None,
        max_reply: int | None = None,
        recall: "Recaller | None" = None,
        refusals: SecretRefusals | None = None,
    ) -> None:
        self.model = model
        self.tools = {t.name: t for t in tools}
        self.tool_list = list(tools)
        self.conversation = conversation
        self.transcript = transcript
        self.limits = limits or Limits()
        self.on_event = on_event
        # The reply's length bound is what the grammar enforces; keeping it within the token
        # budget means a step always closes its JSON instead of being cut off mid-string.
        self.max_reply = max_reply or reply_limit(self.limits.max_tokens)
        # "actions" (JSON actions), "tools" (the model's own tool-call template: native_tools) or
        # "completion" (a base model continues a page of notes: assistant.agent.completion; no tools)
        self.protocol = str(getattr(model, "protocol", "actions") or "actions")
        self.schema = (call_schema(self.tool_list, max_reply=self.max_reply) if self.protocol == "tools"
                       else action_schema(self.tool_list, max_reply=self.max_reply))
        # the step after a landed save may only reply (see REPLY_AFTER_SAVE)
        self.reply_schema = (reply_only_call_schema(self.schema) if self.protocol == "tools"
                             else reply_only_schema(self.schema))
        # Every gate call any tool makes in this session (memory's included) goes through here.
        if isinstance(ctx.gate, ObservedGate):
            self.gate = ctx.gate
            self.gate.report_to(GateEvents(self._emit))
        else:
            self.gate = ObservedGate(ctx.gate, GateEvents(self._emit))
        self.ctx = replace(ctx, gate=self.gate)
        self.scanner = ctx.scanner
        self._refused: tuple[str, ...] | None = None   # set by _run_tool on a vault-value refusal
        # the session's secret-refusal rule (scan, audit record, count), shared with every door;
        # an Agent built without a session keeps its own, on its gate's audit log
        gate = self.gate.gate
        self.refusals = refusals if refusals is not None else SecretRefusals(
            self.scanner, gate.audit if isinstance(gate, Gate) else None,
            run_id=gate.run_id if isinstance(gate, Gate) else "")
        # assistant.recall.turn.Recaller (or None): the notes matching each message, for the tail
        self.recall = recall
        self._exchanges: list[tuple[str, str]] = []   # completion: this chat's (question, answer) pairs

    # -- plumbing
    def _emit(self, event: Event) -> None:
        """Every event leaves redacted: the display and the transcript never see a secret (a
        Token is redacted already, by SafeStream). The transcript gets each recorded event."""
        if not isinstance(event, Token):
            event = redacted(event, lambda value: _redact_value(value, self.scanner))
            if self.transcript is not None and event.RECORDED:
                try:
                    self.transcript.append(event.EVENT, **record(event))
                except Exception:
                    pass
        if self.on_event is not None:
            self.on_event(event)

    def _redact(self, text: str) -> str:
        return self.scanner.redact(text) if self.scanner is not None else text

    # -- one turn
    def turn(self, text: str, changed_notes: list[str] | tuple[str, ...] = ()) -> TurnResult:
        first_ruling = len(self.gate.rulings)
        self.ctx.sources = []   # what this turn reads from untrusted places (kept with its writes)
        result = TurnResult(outcome="error")
        self._emit(UserMessage(text, tuple(changed_notes)))
        # The model never sees a secret value, not even one the person typed.
        shown = self._redact(text)
        if shown != text:
            self._emit(Notice("a secret in the message was replaced by [redacted:NAME] before the model saw it"))
        recalled = self._recall(shown)
        for r in recalled or ():   # untrusted content put in the prompt: a flagged note, any past conversation
            source = untrusted_place(r.source, r.path, r.flagged is not None)
            if source is not None:
                self.ctx.read_untrusted(source)
        # Note paths are names a person chose: a secret in one is redacted like any text.
        notes = None if recalled is None else [(self._redact(self._recalled_label(r)), self._redact(r.text))
                                               for r in recalled]
        if self.protocol != "completion":
            self.conversation.add_user(shown, [self._redact(c) for c in changed_notes], recalled=notes)
        try:
            if self.protocol == "completion":
                self._complete(result, shown, notes or [])
            else:
                self._loop(result, shown)
        except ModelError as exc:
            result.outcome = "error"
            result.message = f"model error: {self._redact(str(exc))}"
            self._emit(TurnFailed(result.message))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:   # a backend crash ends the turn with a message, not a traceback
            result.outcome = "error"
            result.message = f"model backend failed: {type(exc).__name__}: {self._redact(str(exc))}"
            self._emit(TurnFailed(result.message))
        result.rulings = list(self.gate.rulings[first_ruling:])
        return result

    def _recalled_label(self, recalled) -> str:
        """A recalled note's label, with its current revision where the model may edit it: the
        1.5B model took the first 12 hex digits of the block's marker tag for a base, and spent a
        memory_read step on every note it meant to change."""
        label = recalled.label()
        if (recalled.source != "note" or self.ctx.memory is None
                or not any(t.name in SAVING_TOOLS for t in self.tool_list)):
            return label
        try:
            return f"{label} (revision {self.ctx.memory.read(recalled.path).revision})"
        except Exception:   # noqa: BLE001 - gone or unreadable since recall: the label alone
            return label

    def _recall(self, text: str) -> list | None:
        """The notes recalled for this message (None: recall is off); a `recall` event says
        which (and how well they matched). A broken index is reported once and the turn goes
        on without recall."""
        if self.recall is None or not self.recall.settings.enabled:
            return None
        try:
            recalled = self.recall(text)
        except Exception as exc:   # recall is context, never a reason to fail a turn
            recalled = []
            self.recall.problem = f"{type(exc).__name__}: {exc}"
        problem = self.recall.take_problem()
        if problem:
            self._emit(Notice(f"memory search: {problem}"))
        self._emit(Recalled(tuple({"path": r.path, "score": r.score, "source": r.source,
                                   **({"stale": r.stale} if r.stale else {}),
                                   **({"flagged": r.flagged} if r.flagged else {})} for r in recalled)))
        return recalled

    def _loop(self, result: TurnResult, message: str = "") -> None:
        unusable = 0      # replies in a row that were no answer (a placeholder, an echo, nothing)
        failures: dict[tuple[str, str], int] = {}   # calls that failed in this turn, by (name, arguments)
        telling = not asks(message) and any(t.name in SAVING_TOOLS for t in self.tool_list)
        saved = False       # a memory_write or memory_edit landed in this turn: the next step replies
        while True:
            result.steps += 1
            safe = SafeStream(lambda chunk: self._emit(Token(chunk)), self._redact,
                              scanner=self.scanner)
            streamer = ReplyStream(safe.feed)
            began = time.monotonic()
            step = self._step_that_fits(streamer.feed, self.reply_schema if saved else self.schema)
            model_s = round(time.monotonic() - began, 3)
            raw = step.text
            try:
                parse = parse_native if self.protocol == "tools" else parse_action
                action = parse(raw, self.tool_list, max_reply=self.max_reply)
                parse_error = None
            except ActionError as exc:
                action, parse_error = None, str(exc)
                if step.finish_reason == "length":
                    parse_error = (f"the step was cut off at max_tokens ({self.limits.max_tokens}) "
                                   f"before its JSON closed: {parse_error}")
            self._emit(StepTaken(n=result.steps, action=raw, parsed=parse_error is None, error=parse_error,
                                 prompt_tokens=step.prompt_tokens, evaluated_tokens=step.evaluated_tokens,
                                 completion_tokens=step.completion_tokens, cached_tokens=step.cached_tokens,
                                 model_s=model_s))
            self.conversation.add_action(raw)
            if isinstance(action, Reply):
                # After a save, saying the fact back is a confirmation, not a parrot: measured on the
                # 1.5B model, the reply-only step restated the message and was refused three times.
                why = unusable_reply(action.text, self.conversation.instructions(), "" if saved else message,
                                     saved=saved)
                if why is None:
                    result.outcome, result.reply = "reply", action.text
                    safe.finish()
                    self._emit(Replied(action.text, streamed=safe.intact and bool(safe.shown)))
                    self._check_claim(result, action.text)
                    return
                # No answer: never finished on screen, refused like a malformed step, asked again.
                unusable += 1
                self._emit(StepRefused(why))
                if unusable >= MAX_REPLY_TRIES:
                    result.outcome = "error"
                    result.message = f"the model gave no usable reply after {unusable} tries"
                    self._emit(TurnFailed(result.message))
                    return
                self.conversation.add_error(correction(why, native=self.protocol == "tools", telling=telling,
                                                         message=message, saved=saved))
                continue
            if action is None or saved:
                # A malformed step, or a call after a landed save (held by the grammar where the
                # backend takes one; here it runs nothing). Either counts as a step, so a model
                # that never produces a valid action is stopped by the same limit.
                why = (parse_error or "invalid action") if action is None else REPLY_AFTER_SAVE
                self._emit(StepRefused(why))
                if result.steps > self.limits.max_steps:
                    return self._stop(result, f"the model produced {result.steps} steps without a valid reply "
                                              f"(limit {self.limits.max_steps} tool steps per turn); stopped")
                self.conversation.add_error(why)
                continue
            assert isinstance(action, ToolCall)
            if self.refusals.ended:
                # The session's refusal rule ended it (through any door): no call runs any more.
                return self._stop(result, "this session takes no more tool calls: calls carried values from "
                                          "your vault (you have been told)")
            if result.tool_calls >= self.limits.max_steps:
                # Refused before it runs: nothing half-done.
                return self._stop(result, f"the model asked for more than {self.limits.max_steps} tool calls "
                                          f"in one turn (limits.max_steps); stopped before {action.name} ran")
            key = (action.name, json.dumps(action.args, sort_keys=True, ensure_ascii=False))
            if failures.get(key, 0) >= MAX_FAILED_REPEATS:
                # the 1.5B model sent one failing memory_edit six times, told the same error each
                # time (sometimes with a memory_read between): the turn ends instead
                return self._stop(result, f"the model sent the same failing {action.name} call "
                                          f"{failures[key] + 1} times; stopped before it ran again")
            result.tool_calls += 1
            calls_before = len(result.calls)
            output = self._run_tool(action, result)
            ran = result.calls[calls_before:]
            if ran and not ran[-1].ok:
                failures[key] = failures.get(key, 0) + 1
            elif ran and action.name in SAVING_TOOLS:
                saved = True
            self.conversation.add_tool_result(action.name, output)
            if self._refused is not None:
                # One bit per turn at most: a refusal for a vault value ends the turn, so a model
                # cannot binary-search a word list with write after write.
                self._refused = None
                result.secret_refused = True
                return self._stop(result, f"{action.name} carried a value stored in the vault; it was refused "
                                          "and this turn takes no more tool calls")

    def _check_claim(self, result: TurnResult, reply: str) -> None:
        """A reply that says it saved, updated or deleted something, in a turn where no
        memory-changing call succeeded: the person is told nothing was saved (assistant.agent.claims)."""
        if not claims_a_change(reply):
            return
        changed = any(c.ok and getattr(self.tools.get(c.tool), "kind", None) == "memory" for c in result.calls)
        if not changed:
            result.false_claim = True
            self._emit(ClaimUnbacked(FALSE_CLAIM, reply))

    def _complete(self, result: TurnResult, question: str, notes: list[tuple[str, str]]) -> None:
        """One turn of the completion protocol: the page (notes, worked questions, this chat's
        last exchanges, the question) continued up to a stop; an unusable continuation is asked
        again with another seed, then the turn fails with the same line as the action loop's."""
        max_tokens = min(self.limits.max_tokens, completion.MAX_ANSWER_TOKENS)
        fixed = completion.instructions()
        exchanges = list(self._exchanges)
        for attempt in range(MAX_REPLY_TRIES):
            result.steps += 1
            page = completion.render_page(question, notes, exchanges)
            try:
                step = self.model.complete(page, max_tokens=max_tokens, stop=completion.STOPS, attempt=attempt)
            except ContextOverflow:
                if not exchanges:
                    raise ModelError("this message and its recalled notes are too large for the model's "
                                     "context") from None
                exchanges = []      # the chat's earlier exchanges go first
                self._emit(Notice("the conversation no longer fit the model's context: the earlier "
                                  "exchanges were dropped"))
                result.steps -= 1
                continue
            text = completion.reply_from(step.text)
            self._emit(StepTaken(n=result.steps, action=text, parsed=True, error=None,
                                 prompt_tokens=step.prompt_tokens, evaluated_tokens=step.evaluated_tokens,
                                 completion_tokens=step.completion_tokens, cached_tokens=step.cached_tokens))
            why = unusable_reply(text, fixed)
            if why is None and completion.copies_an_example(text):
                why = "the reply copied a worked example instead of answering"
            if why is None:
                result.outcome, result.reply = "reply", text
                self._exchanges = (exchanges + [(question, text)])[-completion.MAX_EXCHANGES:]
                self._emit(Replied(text, streamed=False))
                self._check_claim(result, text)
                return
            self._emit(StepRefused(why))
        result.outcome = "error"
        result.message = f"the model gave no usable reply after {MAX_REPLY_TRIES} tries"
        self._emit(TurnFailed(result.message))

    def _step_that_fits(self, on_token: Callable[[str], None], schema: dict) -> StepResult:
        """One model step. When the conversation no longer fits the context, the oldest
        exchanges are dropped (the stable prefix stays) and the person is told in one line; an
        exchange too large for any context is dropped itself and refused with its size.

        The first overflow drops the older half of the earlier exchanges at once, not just enough
        to fit, as llama.cpp's own context shift discards half: a drop changes the prompt right
        after the stable prefix, so everything after it is evaluated again (about 5,000 tokens,
        240-280 s a step on the 1.5B model on two cores), and dropping one exchange at a time
        paid that on every step from the first overflow on."""
        dropped = 0
        while True:
            try:
                step = self.model.step(self.conversation.messages(), schema,
                                       max_tokens=self.limits.max_tokens, on_token=on_token)
            except ContextOverflow as exc:
                earlier = self.conversation.earlier_exchanges()
                if earlier:
                    cut = 1 if dropped else (earlier + 1) // 2
                    for _ in range(cut):
                        self.conversation.drop_oldest_exchange()
                    dropped += cut
                    continue
                size = sum(len(m["content"].encode("utf-8")) for m in self.conversation.messages()[1:])
                self.conversation.drop_current_exchange()
                raise ModelError(f"this message is too large for the model's context: {size:,} bytes with what "
                                 f"this turn added, beyond what fits with the persona, tools and catalog ({exc}); "
                                 "it was dropped, so the next message starts afresh") from None
            if dropped:
                self._emit(Notice(f"the conversation no longer fit the model's context: the "
                                  f"{dropped} oldest exchange{'s were' if dropped > 1 else ' was'} "
                                  "dropped (persona, tools and catalog stay)"))
            return step

    def _stop(self, result: TurnResult, message: str) -> None:
        result.outcome = "stopped"
        result.message = message
        self._emit(Stopped(message))

    def _secret_refused(self, call: ToolCall, names: tuple[str, ...]) -> None:
        """Record a refusal for a vault value: the person sees which secret (display, transcript,
        audit log); the model gets SECRET_REFUSED or the tool's own generic message."""
        self._refused = names
        self._emit(VaultValueRefused(call.name, _call_target(call.args), tuple(names)))
        self.refusals.refuse(call.name, _call_target(call.args), names)

    def _failed(self, result: TurnResult, call: ToolCall, message: str) -> None:
        target = self._redact(_call_target(call.args))
        result.failed_calls.append(FailedCall(call.name, target, message))
        result.calls.append(CallResult(call.name, target, False, message))

    def _run_tool(self, call: ToolCall, result: TurnResult | None = None) -> str:
        tool = self.tools[call.name]
        self._emit(ToolCalled(call.name, call.args, tool.kind))
        result = result if result is not None else TurnResult(outcome="reply")
        names = self.refusals.vault_names(call.args)
        if names:
            # Refused before the tool runs: nothing that echoes an argument back (a path in a
            # "not found", a URL in an error) can turn redaction markers into an oracle.
            self._secret_refused(call, names)
            output = f"error: {SECRET_REFUSED}"
            self._failed(result, call, output)
            self._emit(ToolFinished(call.name, ok=False, output=output, secret=True))
            return output
        state = ToolCallState(call.name, self.gate)
        ctx = replace(self.ctx, gate=state, cancel=state, own_call=state)    # this call's own gate view
        box: dict[str, object] = {}
        done = DoneFlag()   # its wait survives a Ctrl-C (agent/interrupt.py)

        def work() -> None:
            try:
                box["output"] = tool.run(dict(call.args), ctx)
            except SecretRefusal as exc:
                box["error"], box["secret"] = str(exc), exc.names
            except ToolError as exc:
                box["error"] = str(exc)
            except Exception as exc:   # a tool bug or an OS error: reported, never a crash
                box["error"] = f"{type(exc).__name__}: {exc}"
            finally:
                done.set()

        started = time.monotonic()
        worker = threading.Thread(target=work, name=f"tool-{call.name}", daemon=True)
        worker.start()
        timeout = self.limits.tool_timeout
        try:
            while not done.wait(0.05):
                if state.work_seconds(started, time.monotonic()) > timeout:
                    if not state.cancel():
                        # too late to give up: its writer has committed; the write lands, so
                        # wait for it (bounded) and report what happened, not a timeout
                        done.wait(COMMITTED_WRITE_WAIT)
                    break
        except KeyboardInterrupt:
            if not state.cancel():
                # too late to stop: its writer has committed. Let the write land (bounded) before
                # the interrupt goes on (a chat's /quit or the run's exit must not cut its tail:
                # history, audit), and record what it did
                done.wait(COMMITTED_WRITE_WAIT)
                output = str(box.get("output", box.get("error", "did not finish in time")))
                self._emit(ToolFinished(call.name, ok="output" in box,
                                        output=f"interrupted after its write had begun: {self._redact(output)}"))
                raise
            if state.in_gate_since is not None and self.gate.gate.mode == "watched":
                # Ctrl-C at a question: the asker sees the cancellation and answers no; let it
                # finish (bounded) so its deny is shown before the prompt comes back
                done.wait(2.0)
            self._emit(ToolFinished(call.name, ok=False, output="interrupted"))
            raise
        if not done.is_set():
            msg = f"error: {call.name} took longer than {timeout:g}s (limits.tool_timeout); stopped waiting for it"
            self._failed(result, call, msg)
            self._emit(ToolFinished(call.name, ok=False, output=msg, timeout=True))
            return msg
        if "secret" in box:
            self._secret_refused(call, tuple(box["secret"]))  # type: ignore[arg-type]
        if "error" in box:
            output, ok = f"error: {self._redact(str(box['error']))}", False
            self._failed(result, call, output)
        else:
            output, ok = box.get("output", ""), True
            result.calls.append(CallResult(call.name, self._redact(_call_target(call.args)), True, ""))
            if not isinstance(output, str):
                output = str(output)
            if len(output) > MAX_TOOL_OUTPUT_CHARS and self.scanner is not None:
                # cut, then redact as a prefix: a secret cut in two must not show in part
                output = (self.scanner.redact_prefix(output[:MAX_TOOL_OUTPUT_CHARS])
                          + f"\n[... output cut at {MAX_TOOL_OUTPUT_CHARS} characters]")
            elif len(output) > MAX_TOOL_OUTPUT_CHARS:
                output = output[:MAX_TOOL_OUTPUT_CHARS] + f"\n[... output cut at {MAX_TOOL_OUTPUT_CHARS} characters]"
            else:
                output = self._redact(output)
        if ok and tool.untrusted is not None:
            try:
                place = tool.untrusted(dict(call.args))
            except Exception:   # noqa: BLE001 - the call ran, so something was read: say so
                place = f"{call.name}:?"
            if place and place not in self.ctx.sources:
                self.ctx.sources.append(place)
        # A lone surrogate (a page decoded with the charset its server named, e.g. utf-7) cannot be
        # encoded as UTF-8: the transcript dropped the record and the backends failed the turn.
        output = _LONE_SURROGATE.sub("\ufffd", output)
        self._emit(ToolFinished(call.name, ok=ok, output=output, seconds=round(time.monotonic() - started, 3)))
        return output
