"""The turn loop: prompt -> model step -> action -> tool (gated inside) -> redacted result -> ...

Guards the model/tool boundary at run time:
- every step is parsed strictly (assistant.actions); a malformed step is refused and the model
  is told why, never guessed at;
- a tool runs only when the model names it, under a per-tool wall-clock limit (time spent
  waiting for a person's approval does not count against it), and a call that ran out of time
  can no longer pass the gate;
- every tool output is redacted by the leak scanner and goes back to the model as untrusted
  data (assistant.prompt), and every event is appended, redacted, to the transcript;
- a runaway model is stopped at `limits.max_steps` tool calls per turn, *before* the extra
  call runs, so nothing is left half-done;
- a tool call whose arguments carry a vault value is refused before it runs, with one message
  naming neither the secret nor where it was, and the turn ends there (so refusals are no
  oracle a model can binary-search); the person is told which secret (event `secret_refused`,
  transcript, audit log).
Every ruling the gate makes is reported the moment it happens (`on_event("ruling", ...)`) and
remembered, so an unattended run can report "denied" with its own exit code.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable

from policy.gate import Decision, Gate

from .actions import DEFAULT_MAX_REPLY, ActionError, Reply, ToolCall, action_schema, parse_action
from .call_context import Authorizer
from .config import Config
from .leaks import VAULT_RULE, Scanner
from .models.base import ContextOverflow, Model, ModelError, StepResult
from .prompt import Conversation
from .tools.base import SecretRefusal, Tool, ToolContext, ToolError
from .transcript import Transcript

if TYPE_CHECKING:
    from .recall import Recaller

EventSink = Callable[[str, dict], None]
DISPLAY_ONLY = frozenset({"write_shown"})   # events for the screen, not the transcript
MAX_TOOL_OUTPUT_CHARS = 32 * 1024


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


@dataclass(frozen=True)
class GateRecord:
    """One gate Decision as the session saw it: which tool asked, for what, and the outcome.
    (Not policy.engine.Ruling, which is the engine's verdict before anyone is asked.)"""

    tool: str
    kind: str
    target: str
    allowed: bool
    verdict: str
    reason: str


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

    @property
    def denials(self) -> list[GateRecord]:
        return [r for r in self.rulings if not r.allowed]


@dataclass(frozen=True)
class FailedCall:
    """A tool call that failed (refused, denied, conflicted, errored), as shown to the person."""

    tool: str
    target: str        # the path or URL the call named (redacted), "" if none
    message: str       # the error the model was told (redacted)


SECRET_REFUSED = ("refused: the call carries a secret stored in the person's vault; it did not run. "
                  "Secrets never leave the vault through a tool. No further tool calls are taken in "
                  "this turn.")


def _call_target(args: dict) -> str:
    for key in ("path", "url"):
        if isinstance(args.get(key), str):
            return args[key]
    return ""


def _deny(reason: str) -> Decision:
    return Decision(allowed=False, verdict="deny", reason=reason, sha256=None)


class ObservedGate:
    """The session's policy Gate, observed: every ruling is reported as it happens and
    remembered (an unattended run reports "denied" with its own exit code). A gate that
    raises is a deny. `gate` is the policy Gate itself."""

    def __init__(self, gate: Authorizer, emit: EventSink) -> None:
        self.gate = gate
        self.emit = emit
        self.rulings: list[GateRecord] = []
        self._lock = threading.Lock()
        self._asking: list["ToolCallState"] = []   # tool calls now inside the gate (a person may be asked)

    def still_wanted(self) -> bool:
        """False once a tool call now waiting in the gate has been given up on (Ctrl-C at a
        question in the chat): the question is cancelled and nothing typed later answers it."""
        with self._lock:
            asking = list(self._asking)
        return not any(state.cancelled() for state in asking)

    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        """A ruling for a call made outside any tool call (the person's CLI, the Python API)."""
        return self.authorize_for("?", kind, target, content=content, current=current, summary=summary, url=url)

    def authorize_for(self, tool: str, kind: str, target: str, *, content: bytes | None = None,
                      current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        try:
            decision = self.gate.authorize(kind, target, content=content, current=current, summary=summary,
                                           url=url)
        except Exception as exc:   # the gate fails closed; so do we if it ever raises
            decision = _deny(f"the gate failed ({type(exc).__name__}); denied")
        self.record(tool, kind, target, decision)
        return decision

    def record(self, tool: str, kind: str, target: str, decision: Decision) -> None:
        r = GateRecord(tool=tool, kind=kind, target=str(target), allowed=bool(decision.allowed),
                       verdict=str(decision.verdict), reason=str(decision.reason))
        with self._lock:
            self.rulings.append(r)
        self.emit("ruling", {"tool": r.tool, "kind": r.kind, "target": r.target, "allowed": r.allowed,
                             "verdict": r.verdict, "reason": r.reason, "sha256": decision.sha256})


class ToolCallState:
    """One tool call's view of the gate (passed to the tool in its ToolContext, as `gate` and
    `cancel`): time spent in the gate is excluded from the call's timeout, and once the agent
    has given up on the call (timed out, interrupted) it can no longer pass the gate and a
    writer asking `cancelled()` just before it commits writes nothing."""

    def __init__(self, tool: str, gate: ObservedGate) -> None:
        self.tool = tool
        self.observed = gate
        self.lock = threading.Lock()
        self.gate_seconds = 0.0
        self.in_gate_since: float | None = None
        self._cancelled = False

    def cancel(self) -> None:
        with self.lock:
            self._cancelled = True

    def cancelled(self) -> bool:
        with self.lock:
            return self._cancelled

    def work_seconds(self, started: float, now: float) -> float:
        with self.lock:
            in_gate = (now - self.in_gate_since) if self.in_gate_since is not None else 0.0
            return (now - started) - self.gate_seconds - in_gate

    def authorize(self, kind: str, target: str, *, content: bytes | None = None,
                  current: bytes | None = None, summary: str = "", url: str | None = None) -> Decision:
        with self.lock:
            if self._cancelled:
                decision = _deny("the tool call ran out of time before this was allowed")
                late = True
            else:
                late = False
                self.in_gate_since = time.monotonic()
        if late:
            self.observed.record(self.tool, kind, target, decision)
            return decision
        with self.observed._lock:
            self.observed._asking.append(self)
        try:
            decision = self.observed.gate.authorize(kind, target, content=content, current=current,
                                                    summary=summary, url=url)
        except Exception as exc:   # the gate fails closed; so do we if it ever raises
            decision = _deny(f"the gate failed ({type(exc).__name__}); denied")
        finally:
            with self.observed._lock:
                self.observed._asking.remove(self)
            with self.lock:
                if self.in_gate_since is not None:
                    self.gate_seconds += time.monotonic() - self.in_gate_since
                self.in_gate_since = None
        if self.cancelled() and decision.allowed:
            decision = _deny("the tool call ran out of time while waiting; denied")
        self.observed.record(self.tool, kind, target, decision)
        if decision.allowed and content is not None and decision.remember is None:
            # allowed without a question (a watched chat, a grant): the person sees the whole
            # write now, not just the call's line (display only: the transcript has the args)
            self.observed.emit("write_shown", {
                "kind": kind, "target": str(target), "content": content.decode("utf-8", "replace"),
                "current": current.decode("utf-8", "replace") if current is not None else None})
        return decision


_REPLY_START = re.compile(r'\s*\{\s*"reply"\s*:\s*"')


class ReplyStream:
    """Feeds the text of a `{"reply": "..."}` action to `on_text` as the model produces it.

    Only the reply string is shown (decoded from its JSON escapes); a tool-call action shows
    nothing. Anything it cannot follow is simply not streamed (the final reply is printed by
    the caller from the parsed action, so display never depends on this)."""

    _PREFIX_CHARS = 64

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self.on_text = on_text
        self.buf = ""
        self.state = "prefix"      # prefix -> string -> done
        self.pending = ""          # an escape sequence not yet complete
        self.shown = ""

    def feed(self, piece: str) -> None:
        if self.state == "done":
            return
        if self.state == "prefix":
            self.buf += piece
            m = _REPLY_START.match(self.buf)
            if not m:
                if len(self.buf) > self._PREFIX_CHARS or '"tool"' in self.buf:
                    self.state = "done"
                return
            self.state = "string"
            piece = self.buf[m.end():]
        out = []
        text = self.pending + piece
        self.pending = ""
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\\":
                if i + 1 >= len(text):
                    self.pending = text[i:]
                    break
                e = text[i + 1]
                if e == "u":
                    if i + 6 > len(text):
                        self.pending = text[i:]
                        break
                    code = text[i + 2:i + 6]
                    try:
                        cp = int(code, 16)
                    except ValueError:
                        self.state = "done"
                        break
                    if 0xD800 <= cp < 0xDC00:
                        if i + 12 > len(text):
                            self.pending = text[i:]
                            break
                        try:
                            out.append(json.loads('"' + text[i:i + 12] + '"'))
                        except ValueError:
                            pass
                        i += 12
                        continue
                    out.append(chr(cp))
                    i += 6
                    continue
                out.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(e, e))
                i += 2
                continue
            if c == '"':
                self.state = "done"
                break
            out.append(c)
            i += 1
        if out:
            chunk = "".join(out)
            self.shown += chunk
            self.on_text(chunk)


class SafeStream:
    """Redacts a streamed reply before any of it is shown.

    The whole text so far is redacted on every piece and only what lies more than `holdback`
    characters before its end is emitted, so a secret still being produced (shorter than the
    holdback) is never shown in part. With a `scanner`, a vault value of any length that is
    still being produced (its first KEY_PREFIX characters present) also holds the stream back
    from its start: a value longer than the holdback is not shown in part either. `finish()`
    emits the redacted rest. If a redaction ever reaches back into text already shown,
    streaming stops (`intact` False) and the caller prints the full redacted reply instead."""

    def __init__(self, emit: Callable[[str], None], redact: Callable[[str], str], holdback: int = 96,
                 *, scanner: Scanner | None = None) -> None:
        self.emit, self.redact, self.holdback = emit, redact, holdback
        self.scanner = scanner
        self.step = 24
        self._pushed_at = 0
        self.raw = ""
        self.shown = ""
        self.intact = True

    def _push(self, upto_end: bool) -> None:
        if not self.intact:
            return
        if upto_end:
            stable = self.redact(self.raw)
        elif self.scanner is not None:
            # Cut before any hit that runs past the cut, counting a vault value cut by the end
            # of the text so far (truncated=True) as a hit: then redact only what is kept.
            cut = max(0, len(self.raw) - self.holdback)
            for h in reversed(self.scanner.find(self.raw, truncated=True)):
                if h.start < cut < h.end or (h.start < cut and h.end >= len(self.raw)):
                    cut = h.start
            stable = self.redact(self.raw[:cut])
        else:
            red = self.redact(self.raw)
            stable = red[: max(0, len(red) - self.holdback)]
        if not stable.startswith(self.shown):
            self.intact = False
            return
        new = stable[len(self.shown):]
        if new:
            self.shown = stable
            self.emit(new)

    def feed(self, piece: str) -> None:
        self.raw += piece
        # Redact in steps of a few words, not per token: the whole text is rescanned each time.
        if len(self.raw) - self._pushed_at >= self.step:
            self._pushed_at = len(self.raw)
            self._push(False)

    def finish(self) -> None:
        self._push(True)


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
    """Runs turns of one session. `on_event(name, data)` sees everything as it happens:
    token, tool_call, ruling, tool_result, invalid, reply, stopped, error."""

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
        self.schema = action_schema(self.tool_list, max_reply=self.max_reply)
        # Every gate call any tool makes in this session (memory's included) goes through here.
        if isinstance(ctx.gate, ObservedGate):
            self.gate = ctx.gate
            self.gate.emit = self._emit
        else:
            self.gate = ObservedGate(ctx.gate, self._emit)
        self.ctx = replace(ctx, gate=self.gate)
        self.scanner = ctx.scanner
        self._refused: tuple[str, ...] | None = None   # set by _run_tool on a vault-value refusal
        # assistant.recall.Recaller (or None): the notes matching each message, for the tail
        self.recall = recall

    # -- plumbing
    def _emit(self, name: str, data: dict) -> None:
        """Every event leaves redacted: the display and the transcript never see a secret."""
        if name != "token":
            data = {k: _redact_value(v, self.scanner) for k, v in data.items()}
            if self.transcript is not None and name not in DISPLAY_ONLY:
                try:
                    self.transcript.append(name, **data)
                except Exception:
                    pass
        if self.on_event is not None:
            self.on_event(name, data)

    def _redact(self, text: str) -> str:
        return self.scanner.redact(text) if self.scanner is not None else text

    # -- one turn
    def turn(self, text: str, changed_notes: list[str] | tuple[str, ...] = ()) -> TurnResult:
        first_ruling = len(self.gate.rulings)
        self.ctx.sources = []   # what this turn reads from untrusted places (kept with its writes)
        result = TurnResult(outcome="error")
        self._emit("user", {"text": text, "changed_notes": list(changed_notes)})
        # The model never sees a secret value, not even one the person typed.
        shown = self._redact(text)
        if shown != text:
            self._emit("notice", {"message": "a secret in the message was replaced by [redacted:NAME] "
                                             "before the model saw it"})
        recalled = self._recall(shown)
        # Note paths are names a person chose: a secret in one is redacted like any text.
        self.conversation.add_user(shown, [self._redact(c) for c in changed_notes],
                                   recalled=[(self._redact(r.label()), self._redact(r.text)) for r in recalled])
        try:
            self._loop(result)
        except ModelError as exc:
            result.outcome = "error"
            result.message = f"model error: {self._redact(str(exc))}"
            self._emit("error", {"message": result.message})
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:   # a backend crash ends the turn with a message, not a traceback
            result.outcome = "error"
            result.message = f"model backend failed: {type(exc).__name__}: {self._redact(str(exc))}"
            self._emit("error", {"message": result.message})
        result.rulings = list(self.gate.rulings[first_ruling:])
        return result

    def _recall(self, text: str) -> list:
        """The notes recalled for this message; a `recall` event says which (and how well they
        matched). A broken index is reported once and the turn goes on without recall."""
        if self.recall is None or not self.recall.settings.enabled:
            return []
        try:
            recalled = self.recall(text)
        except Exception as exc:   # recall is context, never a reason to fail a turn
            recalled = []
            self.recall.problem = f"{type(exc).__name__}: {exc}"
        problem = self.recall.take_problem()
        if problem:
            self._emit("notice", {"message": f"memory search: {problem}"})
        self._emit("recall", {"notes": [{"path": r.path, "score": r.score, "source": r.source,
                                         **({"stale": r.stale} if r.stale else {})} for r in recalled]})
        return recalled

    def _loop(self, result: TurnResult) -> None:
        while True:
            result.steps += 1
            safe = SafeStream(lambda chunk: self._emit("token", {"text": chunk}), self._redact,
                              scanner=self.scanner)
            streamer = ReplyStream(safe.feed)
            step = self._step_that_fits(streamer.feed)
            raw = step.text
            try:
                action = parse_action(raw, self.tool_list, max_reply=self.max_reply)
                parse_error = None
            except ActionError as exc:
                action, parse_error = None, str(exc)
                if step.finish_reason == "length":
                    parse_error = (f"the step was cut off at max_tokens ({self.limits.max_tokens}) "
                                   f"before its JSON closed: {parse_error}")
            self._emit("step", {"n": result.steps, "action": raw, "parsed": parse_error is None,
                                "error": parse_error, "prompt_tokens": step.prompt_tokens,
                                "evaluated_tokens": step.evaluated_tokens,
                                "completion_tokens": step.completion_tokens,
                                **({"cached_tokens": step.cached_tokens}
                                   if step.cached_tokens is not None else {})})
            self.conversation.add_action(raw)
            if isinstance(action, Reply):
                result.outcome, result.reply = "reply", action.text
                safe.finish()
                self._emit("reply", {"text": action.text, "streamed": safe.intact and bool(safe.shown)})
                return
            if action is None:
                self._emit("invalid", {"error": parse_error})
                # A malformed step counts as a step, so a model that never produces a valid
                # action is stopped by the same limit.
                if result.steps > self.limits.max_steps:
                    return self._stop(result, f"the model produced {result.steps} steps without a valid reply "
                                              f"(limit {self.limits.max_steps} tool steps per turn); stopped")
                self.conversation.add_error(parse_error or "invalid action")
                continue
            assert isinstance(action, ToolCall)
            if result.tool_calls >= self.limits.max_steps:
                # Refused before it runs: nothing half-done.
                return self._stop(result, f"the model asked for more than {self.limits.max_steps} tool calls "
                                          f"in one turn (limits.max_steps); stopped before {action.name} ran")
            result.tool_calls += 1
            output = self._run_tool(action, result)
            self.conversation.add_tool_result(action.name, output)
            if self._refused is not None:
                # One bit per turn at most: a refusal for a vault value ends the turn, so a model
                # cannot binary-search a word list with write after write.
                self._refused = None
                result.secret_refused = True
                return self._stop(result, f"{action.name} carried a value stored in the vault; it was refused "
                                          "and this turn takes no more tool calls")

    def _step_that_fits(self, on_token: Callable[[str], None]) -> StepResult:
        """One model step. When the conversation no longer fits the context, the oldest
        exchanges are dropped (the stable prefix stays) and the person is told in one line; an
        exchange too large for any context is dropped itself and refused with its size."""
        dropped = 0
        while True:
            try:
                step = self.model.step(self.conversation.messages(), self.schema,
                                       max_tokens=self.limits.max_tokens, on_token=on_token)
            except ContextOverflow as exc:
                if self.conversation.drop_oldest_exchange():
                    dropped += 1
                    continue
                size = sum(len(m["content"].encode("utf-8")) for m in self.conversation.messages()[1:])
                self.conversation.drop_current_exchange()
                raise ModelError(f"this message is too large for the model's context: {size:,} bytes with what "
                                 f"this turn added, beyond what fits with the persona, tools and catalog ({exc}); "
                                 "it was dropped, so the next message starts afresh") from None
            if dropped:
                self._emit("notice", {"message": f"the conversation no longer fit the model's context: the "
                                                 f"{dropped} oldest exchange{'s were' if dropped > 1 else ' was'} "
                                                 "dropped (persona, tools and catalog stay)"})
            return step

    def _stop(self, result: TurnResult, message: str) -> None:
        result.outcome = "stopped"
        result.message = message
        self._emit("stopped", {"message": message})

    def _vault_names_in(self, value: object) -> tuple[str, ...]:
        """Vault names whose value (in any encoding the scanner knows) is in the call's arguments."""
        if self.scanner is None:
            return ()
        if isinstance(value, str):
            return tuple(dict.fromkeys(f.name for f in self.scanner.find(value) if f.rule == VAULT_RULE))
        found: list[str] = []
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        if isinstance(value, dict):
            found.extend(n for k in value for n in self._vault_names_in(k))
        for v in items:
            found.extend(self._vault_names_in(v))
        return tuple(dict.fromkeys(found))

    def _secret_refused(self, call: ToolCall, names: tuple[str, ...]) -> None:
        """Record a refusal for a vault value: the person sees which secret (display, transcript,
        audit log); the model gets SECRET_REFUSED or the tool's own generic message."""
        self._refused = names
        self._emit("secret_refused", {"tool": call.name, "target": _call_target(call.args), "names": list(names)})
        gate = self.gate.gate
        if isinstance(gate, Gate):
            try:
                gate.audit.append({"event": "secret_refused", "run": gate.run_id,
                              "tool": call.name, "target": self._redact(_call_target(call.args)),
                              "secrets": list(names)})
            except Exception:
                pass   # the refusal stands either way; the transcript has it too

    def _run_tool(self, call: ToolCall, result: TurnResult | None = None) -> str:
        tool = self.tools[call.name]
        self._emit("tool_call", {"tool": call.name, "args": call.args, "kind": tool.kind})
        result = result if result is not None else TurnResult(outcome="reply")
        names = self._vault_names_in(call.args)
        if names:
            # Refused before the tool runs: nothing that echoes an argument back (a path in a
            # "not found", a URL in an error) can turn redaction markers into an oracle.
            self._secret_refused(call, names)
            output = f"error: {SECRET_REFUSED}"
            result.failed_calls.append(FailedCall(call.name, self._redact(_call_target(call.args)), output))
            self._emit("tool_result", {"tool": call.name, "ok": False, "output": output, "secret": True})
            return output
        state = ToolCallState(call.name, self.gate)
        ctx = replace(self.ctx, gate=state, cancel=state)    # this call's own gate view
        box: dict[str, object] = {}
        done = threading.Event()

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
                    state.cancel()
                    break
        except KeyboardInterrupt:
            state.cancel()
            if state.in_gate_since is not None and self.gate.gate.mode == "watched":
                # Ctrl-C at a question: the asker sees the cancellation and answers no; let it
                # finish (bounded) so its deny is shown before the prompt comes back
                done.wait(2.0)
            self._emit("tool_result", {"tool": call.name, "ok": False, "output": "interrupted"})
            raise
        if not done.is_set():
            msg = f"error: {call.name} took longer than {timeout:g}s (limits.tool_timeout); stopped waiting for it"
            result.failed_calls.append(FailedCall(call.name, self._redact(_call_target(call.args)), msg))
            self._emit("tool_result", {"tool": call.name, "ok": False, "output": msg, "timeout": True})
            return msg
        if "secret" in box:
            self._secret_refused(call, tuple(box["secret"]))  # type: ignore[arg-type]
        if "error" in box:
            output, ok = f"error: {self._redact(str(box['error']))}", False
            result.failed_calls.append(FailedCall(call.name, self._redact(_call_target(call.args)), output))
        else:
            output, ok = box.get("output", ""), True
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
        self._emit("tool_result", {"tool": call.name, "ok": ok, "output": output,
                                   "seconds": round(time.monotonic() - started, 3)})
        return output
