"""`assistant chat`: the watched session. A person sees every tool call and ruling as it happens.

Guards what "watched" means: the gate runs in mode "watched" (memory and file writes allowed
because they are shown the moment they happen, but a memory write asks once the chat has read
a page, a file or a flagged note, naming them; `net` asks right here, y/N, default no), each
call and its ruling is printed before the result, the transcript is appended (redacted), and
notes that change on disk during the session are put in the volatile tail of the next turn.
Reads plain lines from stdin when it is not a terminal, so scripts and tests can drive it.
A chat that ends the person's way on a terminal reflects first (`[memory] reflect`,
assistant.cli.reflection): its proposals are asked one by one, never allowed silently.
"""

from __future__ import annotations

import hashlib
import json
import queue
import sys
import threading
import time
from typing import Callable

import click

from policy.approvals import read_before
from policy.gate import InlineAnswer, Question

from assistant.display.terminal import (
    Pages, discard_pending_input, escape, hidden_text_warning, is_terminal, one_line, proposed_text,
    read_answer, screen_rows, url_parts,
)
from assistant.display.screen_lines import ScreenLines, terminal_columns
from assistant.display.colour import (
    diff as colour_diff, paint, prompt as colour_prompt, status, wanted,
)
from assistant.agent.interrupt import leave
from assistant.approvals.answering import flag_warning
from assistant.models.base import ModelError
from assistant.records.clock import session_start_times
from assistant.notes.watch import MemoryWatcher
from assistant.session import SessionError, open_session
from assistant.cli.model_load import LoadInterrupted, load_session_model
from assistant.cli.reflection import chat_reflection
from assistant.cli.common import (
    fail, get_workspace, is_tty, model_spec_or_group, warn_unusable_grants, workspace_option,
)
from assistant.agent.events import (
    ClaimUnbacked, Event, Notice, Recalled, Replied, RulingMade, StepRefused, StepTaken, Stopped, Token, ToolCalled,
    ToolFinished, TurnFailed, UserMessage, VaultValueRefused, WriteShown,
)


HELP = """\
commands:
  /catalog   show the memory catalog as it is on disk now
  /full      show in full the last write that was shown cut (over 200 lines)
  /reload    start over with a fresh prompt (persona and catalog re-read, history cleared,
             and what the chat had read from pages and files forgotten)
  /help      this list
  /quit      end the chat (also /exit, or Ctrl-D); a short reflection may then propose notes, each
             asked y/N (Ctrl-C skips it; [memory] reflect = "off" turns it off)
Ctrl-C stops a reply being written; at the prompt it clears the line (twice in a row ends the chat)."""


def _short(text: str, limit: int = 160) -> str:
    # model-chosen text on one line: escaped, and a cut says how long the whole was
    return one_line(text, limit)


# What to type at an inline question. A remembered (durable) scope needs a whole word.
ANSWERS = {"y": "once", "yes": "once", "r": "run", "always": "exact", "folder": "dir"}
_LABELS = {"once": ("y", "yes, this once"), "run": ("r", "for the rest of this chat"),
           "exact": ("always", "always {pattern}"), "dir": ("folder", "always {pattern}")}
SHOWN_LINES = 200     # a write allowed without a question: shown in full up to this many lines


class ChatUI:
    """Terminal side of a chat: input lines, inline asks, and the live event display."""

    def __init__(self, stdin=None, out=None) -> None:
        self.stdin = stdin or sys.stdin
        self.interactive = bool(getattr(self.stdin, "isatty", lambda: False)())
        self.readline = False
        if self.interactive:
            try:
                import readline  # noqa: F401  (line editing and history for input())
                self.readline = True
            except ImportError:
                pass
        self.colour = wanted(sys.stdout)      # speakers, rulings and diffs in colour on a terminal
        self.streaming = False
        # on a terminal, everything shown goes through one ScreenLines (no line wraps by itself)
        self.screen = (ScreenLines(REPLY_CONTINUED, lambda: terminal_columns(sys.stdout.fileno()))
                       if is_tty(sys.stdout) else None)
        self.lock = threading.Lock()
        self.name = "assistant"
        self.own_writes: dict[str, bytes] = {}   # note path -> the text this chat's assistant wrote
        self.last_tool = ""                       # the tool of the call in progress
        self.failed_this_turn: list[str] = []     # "tool target" of each failed call this turn
        self.interrupt_shown = False              # a call's "<- interrupted" said it already
        self.status_shown = False
        self.asking = False
        self.still_wanted: Callable[[], bool] = lambda: True   # the session gate's, once open
        self.last_write: str | None = None     # the last write shown cut, for /full
        self.answer_timeout: float | None = None   # a question unanswered this long is a no
        self._pipe: "queue.Queue[str | None] | None" = None   # lines of a stdin that is no terminal
        try:
            self.tty_in = self.interactive and is_terminal(self.stdin.fileno())
        except (AttributeError, ValueError, OSError):
            self.tty_in = False
        try:
            self.tty_out = self.interactive and sys.stdout.isatty()
        except (AttributeError, ValueError):
            self.tty_out = False

    def thinking(self) -> None:
        """On a terminal, a status line until the first output of the turn (erased then)."""
        if self.tty_out and not self.status_shown:
            self.echo("  (thinking...)", nl=False)
            self.status_shown = True

    def clear_status(self) -> None:
        if self.status_shown:
            self.echo("\r\x1b[K", nl=False)
            self.status_shown = False

    def echo(self, text: str = "", nl: bool = True) -> None:
        if self.screen is not None:
            click.echo(self.screen.feed(text + ("\n" if nl else "")), nl=False)
        else:
            click.echo(text, nl=nl)
        sys.stdout.flush()

    def entered(self) -> None:
        """The person pressed Enter (the terminal, not us, moved to a new line)."""
        if self.screen is not None:
            self.screen.at_line_start()

    def read_line(self, prompt: str = "you> ") -> str | None:
        """The next line from the person, or None at end of input."""
        if self.interactive:
            try:
                line = input(colour_prompt(prompt, "you", on=self.colour, readline=self.readline))
                self.entered()
                return line
            except EOFError:
                # Ctrl-D: end the prompt's line so the shell's prompt starts on a fresh one
                self.echo()
                return None
        return self._stdin_line(None)

    def _stdin_line(self, timeout: float | None) -> str | None:
        """The next line of a stdin that is not a terminal (a pipe, a file): None at its end, or
        after `timeout` seconds (a question's answer is bounded like any approval). One reader
        thread feeds every call, so a line that comes after a question gave up is not lost."""
        if self._pipe is None:
            self._pipe = lines = queue.Queue()

            def pump() -> None:
                try:
                    for line in iter(self.stdin.readline, ""):
                        lines.put(line)
                except (OSError, ValueError):
                    pass
                finally:
                    lines.put(None)

            threading.Thread(target=pump, name="chat-stdin", daemon=True).start()
        try:
            line = self._pipe.get(timeout=timeout)
        except queue.Empty:
            return None
        if line is None:
            self._pipe.put(None)      # at its end it stays at its end
            return None
        return line.rstrip("\r\n")

    def inline_ask(self, question: Question) -> str | InlineAnswer | None:
        """Ask the person right here whether to allow one gated call. Shown first, in full and
        escaped: the URL part by part, or the whole proposed text / diff (paged on a terminal).
        An approval typed before the last page is shown is not one: the person is told how
        many lines are unseen and the paging goes on (a no is a no on any page).
        A durable scope needs its word typed (`always`, `folder`); empty, end of input, Ctrl-C
        or anything unrecognised is no. Returns the chosen offer scope (an InlineAnswer bound
        to the sha256 of the content shown, for a question with content), or None."""
        choices: dict[str, str] = {}
        labels = []
        for offer in question.offers:
            key, label = _LABELS.get(offer.scope, (None, None))
            if key is None:
                continue
            choices[key] = offer.scope
            labels.append(f"{key} = {escape(label.format(pattern=offer.pattern), newlines=False)}")
        content, current, url = question.content, question.current, question.url
        pages = None
        with self.lock:
            if self.tty_in:
                # typed before the question is on the screen: not an answer to it
                discard_pending_input(self.stdin.fileno())
            self.clear_status()
            self.end_stream()
            self.echo(f"  ? {question.kind} {one_line(question.target)}: {one_line(question.summary)}")
            if question.sources:
                # what this chat read from untrusted places (a page, a file, a flagged note) may be
                # what is steering this call: named before anything else is shown
                self.echo(f"  {paint('!', 'warn', on=self.colour)} {one_line(read_before(question.sources))}")
            if url is not None:
                self.echo(url_parts(url), nl=False)
            if content is not None and hidden_text_warning(content):
                self.echo("  " + hidden_text_warning(content).rstrip("\n"))
            flagged = flag_warning(current, content)
            if flagged:
                self.echo("  " + flagged.rstrip("\n"))
            if content is not None:
                # every line of the content is marked, so none can pass for a line of the chat's own
                body = _indent(proposed_text(current, content, question.target))
                if self.tty_in:
                    # paged in screen rows, not in lines: a line wider than the screen is broken
                    # here as the echo would break it, so no page is taller than the screen and
                    # none of it scrolls away before the question (review 23)
                    pages = Pages(self.screen_rows_of(body), screen_rows() - 8, chars=len(content))
                    self.echo(self.shown_body(pages.next(), current), nl=False)
                else:
                    self.echo(self.shown_body(body, current), nl=False)
            ask = (f"    allow? [{'/'.join(choices)}/N] ({'; '.join(labels + ['N = no'])}; "
                   "type the word) ")
            while True:
                unseen = pages is not None and not pages.done
                self.echo(ask if not unseen else
                          ask[:-1] + " (`more` first: an approval counts once the last page is shown) ", nl=False)
                self.asking = True
                try:
                    answer = self._read_answer()
                finally:
                    self.asking = False
                if answer is None:
                    why = "cancelled" if not self.still_wanted() else "no answer"
                    self.echo(f"\n    ({why}: no, nothing was saved)")
                elif not self.tty_in:
                    self.echo(escape(answer, newlines=False))
                word = (answer or "").strip().lower()
                if pages is not None and word in ANSWERS and not pages.done:
                    # an approval counts only once the last page is on the screen: typed earlier
                    # it approves lines not seen, so it is not an answer; the paging goes on
                    left = len(pages.lines) - pages.shown
                    self.echo(f"    (not an approval yet: {left:,} more lines you have not seen; an answer "
                              "counts once the last page is shown. The next page:)")
                    word = "more"
                if word == "more" and pages is not None:
                    self.echo(self.shown_body(pages.next(), current) if not pages.done else
                              f"    (nothing more: all {len(pages.lines):,} lines were shown)\n", nl=False)
                    # typed before this page was on the screen: not an answer to it
                    discard_pending_input(self.stdin.fileno())
                    continue
                break
        wanted = ANSWERS.get(word)
        scope = wanted if wanted in choices.values() else None
        if content is None:
            return scope
        return InlineAnswer(scope, hashlib.sha256(content.encode("utf-8")).hexdigest())

    def _read_answer(self) -> str | None:
        """The answer line: on a terminal, cancelled by Ctrl-C without taking anything typed
        later; otherwise the next line of input."""
        if not self.tty_in:
            if self.interactive:       # a terminal we cannot read raw (no fileno): line by line
                try:
                    return self.read_line(prompt="")
                except (EOFError, KeyboardInterrupt):
                    return None
            try:
                return self._stdin_line(self.answer_timeout)
            except KeyboardInterrupt:
                return None
        answer = read_answer(self.stdin.fileno(), self.still_wanted, timeout=self.answer_timeout)
        if answer is not None:
            self.entered()
        return answer

    def end_stream(self) -> None:
        if self.streaming:
            self.echo()
            self.streaming = False

    def on_event(self, event: Event) -> None:
        """Show one event of the turn as it happens. Everything shown here came from the model, a
        note, a page or a file name: escaped."""
        match event:
            case UserMessage():
                self.failed_this_turn = []
                self.interrupt_shown = False
                return
            case StepTaken() | Recalled():
                return          # for the transcript: the step's raw text and the recalled notes
        self.clear_status()
        match event:
            case Token(text=text):
                if not self.streaming:
                    self.echo(f"{self.speaker()}: ", nl=False)
                    self.streaming = True
                self.echo(_continued(escape(text)), nl=False)
                return
            case Replied(text=text, streamed=streamed):
                if not self.streaming:
                    self.echo(f"{self.speaker()}: {_continued(escape(text))}")
                elif not streamed:
                    # streaming stopped part-way (a long secret was redacted): show it whole
                    self.end_stream()
                    self.echo(f"{self.speaker()} (in full): {_continued(escape(text))}")
                else:
                    self.end_stream()
                if self.failed_this_turn:
                    # the harness, not the model, says what happened: a reply after a failed call
                    # may claim what did not happen
                    self.echo(f"  {paint('!', 'warn', on=self.colour)} this reply follows a failed call ({_short(', '.join(self.failed_this_turn), 120)}): "
                              "check before relying on it")
                return
        self.end_stream()
        match event:
            case ToolCalled(tool=tool, args=args):
                self.last_tool = tool
                if tool == "memory_write" and isinstance(args, dict):
                    if isinstance(args.get("path"), str) and isinstance(args.get("content"), str):
                        self.own_writes[args["path"]] = args["content"].encode("utf-8")
                shown = json.dumps(args, ensure_ascii=False, sort_keys=True)
                self.echo(f"  -> {escape(tool, newlines=False)} {_short(shown)}")
            case RulingMade(kind=kind, target=target, allowed=allowed, verdict=verdict, reason=reason):
                verdict = "allow" if allowed else verdict
                self.echo(f"  [{status(one_line(verdict), on=self.colour)}] {one_line(kind)} {one_line(target)}: "
                          f"{_short(reason, 400)}")
            case WriteShown(kind=kind, target=target, content=content, current=current):
                if kind == "memory" and self.last_tool == "memory_edit":
                    # an edit's whole new text is known only here (its call carries the change)
                    self.own_writes[str(target)] = str(content).encode("utf-8")
                self.show_write(str(target), str(content), current)
            case VaultValueRefused(tool=tool, names=names):
                # the person may be told which secret; the model is not
                shown = ", ".join(str(n) for n in names)
                self.echo(f"  ! {one_line(str(tool))} carried your vault secret {_short(shown, 80)}: refused "
                          "(the assistant was not told which); this turn takes no more tool calls")
            case ToolFinished(tool=tool, ok=ok, output=output):
                if not ok:
                    self.failed_this_turn.append(str(tool))
                self.interrupt_shown = str(output).startswith("interrupted")
                first = str(output).strip().splitlines()
                self.echo(f"  <- {_short(first[0] if first else '(empty)', 200)}"
                          + (f" (+{len(first) - 1} lines)" if len(first) > 1 else ""))
                self.thinking()     # the model's next step can take a while too
            case StepRefused(error=error):
                self.echo(f"  ! model step refused: {_short(error or '', 400)}")
            case Notice(message=message):
                self.echo(f"  ({escape(message)})")
            case ClaimUnbacked(message=message):
                self.echo(f"  ! {escape(message)}")
            case Stopped(message=message):
                self.echo(f"  {status('stopped', on=self.colour)}: {escape(message)}")
            case TurnFailed(message=message):
                self.echo(f"  {status('error', on=self.colour)}: {escape(message)}")
            case _:
                raise TypeError(f"the chat display has no case for {type(event).__name__}")

    def speaker(self) -> str:
        return paint(self.name, "assistant", on=self.colour)

    def screen_rows_of(self, text: str) -> str:
        """`text` (starting at a line's start) broken into the rows the terminal will show, as
        the echo breaks it (assistant.display.screen_lines); as is when stdout is no terminal."""
        if self.screen is None:
            return text
        columns = terminal_columns(sys.stdout.fileno())
        return ScreenLines(REPLY_CONTINUED, lambda: columns).feed(text)

    def shown_body(self, indented: str, current: str | None) -> str:
        """A write's text as shown (indented, escaped): a diff (there was a current text) gets
        its + and - lines coloured on a terminal; a new note's own lines never are."""
        return colour_diff(indented, on=self.colour, prefix=_PREFIX) if current is not None else indented

    def show_write(self, target: str, content: str, current: str | None) -> None:
        """A write allowed without a question: the whole new text, or the whole diff, escaped.
        A very long one is cut at SHOWN_LINES lines with its full length stated; /full shows it all."""
        body = proposed_text(current, content, target)
        lines = body.splitlines(keepends=True)
        if len(lines) <= SHOWN_LINES:
            self.echo(self.shown_body(_indent(body), current), nl=False)
            return
        self.last_write = body
        self.echo(self.shown_body(_indent("".join(lines[:SHOWN_LINES])), current), nl=False)
        self.echo(f"  [{len(lines) - SHOWN_LINES:,} more lines not shown ({len(lines):,} lines, "
                  f"{len(body):,} characters in all): /full shows the whole write]")


# Every line of a reply after its first starts with this mark: no line of the chat's own does, so a
# reply cannot print a line that passes for a ruling ("  [allow] ..."), a write's content
# ("   | ..."), a tool result ("  <- ...") or the prompt ("you> ").
# On a terminal, any line wider than the screen is broken by us and goes on after the same mark
# (assistant.display.screen_lines), so padding cannot wrap model text into column 0 either.
REPLY_CONTINUED = "   : "


def _continued(text: str) -> str:
    return text.replace("\n", "\n" + REPLY_CONTINUED)


_PREFIX = "   | "      # before every line of a write's content or diff


def _indent(text: str) -> str:
    return "".join(f"{_PREFIX}{line}" for line in text.splitlines(keepends=True))


def _own_write(memory, ui: ChatUI, change) -> bool:
    """True if the note on disk is exactly what the assistant wrote in this chat."""
    wrote = ui.own_writes.get(change.path)
    if wrote is None or change.kind == "deleted":
        return False
    try:
        data, _ = memory.read_raw(change.path)
    except Exception:       # unreadable now: certainly worth showing
        return False
    return data == wrote


def _changed_lines(changed: dict[str, str]) -> list[str]:
    return [f"{path} ({'deleted' if kind == 'deleted' else 'changed on disk'})"
            for path, kind in sorted(changed.items())]


@click.command("chat")
@workspace_option
@click.option("--model", "model_spec", default=None, metavar="SPEC",
              help="Model instead of config: script:FILE.json, a .gguf file, or llama:PATH.")
def chat_command(model_spec: str | None) -> None:
    """Chat with the assistant (watched: every tool call and ruling is shown as it happens).

    Memory and file writes are allowed and shown in full (the new text or the diff), except
    that once the chat has read a page or a file of files/, a memory write or edit asks you
    first, naming what was read ([policy] watched_after_untrusted); a web
    fetch asks you first, showing the whole URL: y = this once, r = the rest of this chat,
    always = always this host, folder = always the wider pattern offered (type the word);
    anything else (Enter, Ctrl-C included) is no. Input typed before a question appears is
    discarded. Slash commands: /catalog, /full, /reload, /help, /quit.
    Ctrl-C stops a reply; at the prompt it clears the line, twice in a row ends the chat
    (as does Ctrl-D). At the end, a bounded reflection (at most 30 s, 5 proposals; [memory]
    reflect) may propose memory changes, each shown in full and written only on y; Ctrl-C skips it.
    """
    model_spec = model_spec_or_group(model_spec)

    ws = get_workspace()
    ui = ChatUI()
    try:
        session = open_session(ws, "watched", kind="chat", interactive=True, inline_ask=ui.inline_ask)
    except SessionError as exc:
        fail(str(exc))
    warn_unusable_grants(session)
    ui.still_wanted = session.gate.still_wanted   # False in a tool call cancelled by Ctrl-C
    ui.answer_timeout = session.policy_gate.timeout  # approvals.timeout bounds an inline question too
    watcher = None
    try:
        try:
            # a chat interrupted while loading returns normally: its process exits 0
            loading = time.monotonic()
            model = load_session_model(session, model_spec, interrupted_exit_code=0)
            load_s = time.monotonic() - loading
        except ModelError as exc:
            fail(session.scanner.redact(str(exc)))
        except LoadInterrupted as stop:   # Ctrl-C while llama.cpp loads: leave at once
            click.echo("\ninterrupted while loading the model", file=stop.err)
            stop.err.flush()
            return
        session.transcript.append("session_start", mode="watched", model=getattr(model, "name", "?"),
                                  **session_start_times(load_s))
        watcher = MemoryWatcher(ws.memory_dir).start()
        agent = session.new_agent(model, on_event=ui.on_event)
        changed: dict[str, str] = {}
        click.echo(f"chat in {ws.root} with {getattr(model, 'name', 'the model')} (watched: writes are "
                   "shown as they happen; web fetches ask). /help for commands.", err=True)
        blocked = session.refusals.blocked()    # a chat starts (you are here); the block is said once
        said_block = blocked is not None
        if blocked is not None:
            click.echo(f"note: {blocked.reason()}", err=True)
        reflect = False        # the chat ended the person's way (/quit, Ctrl-D, end of input, Ctrl-C twice)
        try:
            interrupts = 0     # Ctrl-C in a row at the prompt: the first clears the line, the second leaves
            while True:
                try:
                    line = ui.read_line()
                except KeyboardInterrupt:
                    interrupts += 1
                    ui.echo()
                    if interrupts >= 2:
                        reflect = True
                        break
                    ui.echo("(Ctrl-C again, Ctrl-D or /quit to leave)")
                    continue
                interrupts = 0
                if line is None:
                    reflect = True
                    break
                text = line.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    cmd = text.split()[0].lower()
                    if cmd in ("/quit", "/exit"):
                        reflect = True
                        break
                    if cmd == "/help":
                        ui.echo(HELP)
                    elif cmd == "/catalog":
                        ui.echo(escape(session.memory.catalog()))
                    elif cmd == "/full":
                        ui.echo(_indent(ui.last_write) if ui.last_write else "(no write was cut)", nl=False)
                    elif cmd == "/reload":
                        watcher.drain()
                        changed.clear()
                        session.clear_untrusted()   # what was read is in no conversation now
                        agent = session.new_agent(model, on_event=ui.on_event)   # (its catalog may mark again)
                        session.transcript.append("reload")
                        ui.echo("reloaded: persona and catalog re-read; the conversation starts over")
                    else:
                        ui.echo(f"unknown command {cmd}; /help lists them")
                    continue
                fresh = session.notice_hand_edits(watcher)   # recall and history/ take them in
                for ch in fresh:
                    changed[ch.path] = ch.kind
                # show what the model is about to be told, so a hand edit is visibly noticed;
                # not a note that still holds exactly what this chat's assistant wrote into it
                shown = {c.path: c.kind for c in fresh if not _own_write(session.memory, ui, c)}
                if shown:
                    noticed = _changed_lines(shown)
                    ui.echo(f"  (noticed: {escape(', '.join(noticed), newlines=False)}; the assistant is told this turn)")
                try:
                    ui.thinking()
                    result = agent.turn(text, _changed_lines(changed))
                except KeyboardInterrupt:
                    ui.clear_status()
                    ui.end_stream()
                    if not ui.interrupt_shown:      # the call's "<- interrupted" said it once
                        ui.echo("  interrupted")
                    if ui.tty_in:
                        discard_pending_input(sys.stdin.fileno())   # nothing typed meanwhile answers anything
                    session.transcript.append("interrupted")
                    continue
                ui.clear_status()
                ui.end_stream()
                # an error ending the turn was already shown in place, by on_event(TurnFailed(...))
                if result.secret_refused:
                    blocked = session.refusals.blocked()
                    if blocked is not None and not said_block:     # said once per chat
                        said_block = True
                        ui.echo(f"  {blocked.reason()}")
                    if session.refusals.ended:
                        # a second probe of the vault in one chat: the chat ends (each refusal
                        # is one bit an injected instruction could collect)
                        ui.echo("  the chat ends: a second tool call in this chat carried a secret from your "
                                "vault. If you did not ask for that, something the assistant read may be "
                                "steering it; see the transcript.")
                        session.transcript.append("ended", reason="a second tool call carried a vault secret")
                        break
                    ui.echo("  (a second call carrying a vault secret ends this chat)")
        except KeyboardInterrupt:
            ui.clear_status()
            # a Ctrl-C that lands between the prompt and a turn (or during a slash command)
            # ends the chat cleanly instead of with a traceback
            ui.end_stream()
            ui.echo()
        if reflect and session.ws.config.memory.reflect in ("chat", "always") and len(agent.conversation):
            if ui.tty_in:
                # the person is leaving: proposals are put to them one by one, never auto-allowed
                chat_reflection(agent, ui.echo)
            else:
                session.transcript.append("reflection_skipped", reason="stdin is not a terminal")
        session.transcript.append("session_end", exit_code=0)   # what leave(0) below exits with
    finally:
        if watcher is not None:
            watcher.stop()
        session.close()

    leave(0)


COMMANDS = [chat_command]
