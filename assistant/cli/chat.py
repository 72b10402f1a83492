"""`assistant chat`: the watched session. A person sees every tool call and ruling as it happens.

Guards what "watched" means: the gate runs in mode "watched" (memory and file writes allowed
because they are shown the moment they happen; `net` asks right here, y/N, default no), each
call and its ruling is printed before the result, the transcript is appended (redacted), and
notes that change on disk during the session are put in the volatile tail of the next turn.
Reads plain lines from stdin when it is not a terminal, so scripts and tests can drive it.
"""

from __future__ import annotations

import json
import sys
import threading

import click

from .common import EXIT_ERROR, fail, get_workspace, model_spec_or_group, visible, workspace_option

HELP = """\
commands:
  /catalog   show the memory catalog as it is on disk now
  /reload    start over with a fresh prompt (persona and catalog re-read, history cleared)
  /help      this list
  /quit      end the chat (also /exit, or Ctrl-D)
Ctrl-C stops a reply being written; at the prompt it clears the line (twice in a row ends the chat)."""


def _short(text: str, limit: int = 160) -> str:
    # model-chosen text (a URL, a path): escape controls so it cannot repaint the prompt
    flat = visible(" ".join(str(text).split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class ChatUI:
    """Terminal side of a chat: input lines, inline asks, and the live event display."""

    def __init__(self, stdin=None, out=None) -> None:
        self.stdin = stdin or sys.stdin
        self.interactive = bool(getattr(self.stdin, "isatty", lambda: False)())
        if self.interactive:
            try:
                import readline  # noqa: F401  (line editing and history for input())
            except ImportError:
                pass
        self.streaming = False
        self.lock = threading.Lock()
        self.name = "assistant"
        self.own_writes: dict[str, bytes] = {}   # note path -> the text this chat's assistant wrote
        self.status_shown = False
        try:
            self.tty_out = self.interactive and sys.stdout.isatty()
        except (AttributeError, ValueError):
            self.tty_out = False

    def thinking(self) -> None:
        """On a terminal, a status line until the first output of the turn (erased then)."""
        if self.tty_out and not self.status_shown:
            sys.stdout.write("  (thinking...)")
            sys.stdout.flush()
            self.status_shown = True

    def clear_status(self) -> None:
        if self.status_shown:
            sys.stdout.write("\r\x1b[K")
            sys.stdout.flush()
            self.status_shown = False

    def echo(self, text: str = "", nl: bool = True) -> None:
        click.echo(text, nl=nl)
        sys.stdout.flush()

    def read_line(self, prompt: str = "you> ") -> str | None:
        """The next line from the person, or None at end of input."""
        if self.interactive:
            try:
                return input(prompt)
            except EOFError:
                # Ctrl-D: end the prompt's line so the shell's prompt starts on a fresh one
                self.echo()
                return None
        line = self.stdin.readline()
        if not line:
            return None
        return line.rstrip("\r\n")

    _KEYS = {"once": ("y", "yes, this once"), "run": ("r", "for the rest of this chat"),
             "exact": ("a", "always {pattern}"), "dir": ("d", "always {pattern}")}

    def inline_ask(self, question) -> str | None:
        """Ask the person right here whether to allow one gated call. Default (empty, EOF,
        anything unrecognised) is no. Returns the chosen offer scope, or None."""
        choices: dict[str, str] = {}
        labels = []
        for offer in getattr(question, "offers", ()):
            key, label = self._KEYS.get(offer.scope, (None, None))
            if key is None:
                continue
            choices[key] = offer.scope
            labels.append(f"{key} = {label.format(pattern=offer.pattern)}")
        with self.lock:
            self.clear_status()
            self.end_stream()
            self.echo(f"  ? {question.kind} {visible(str(question.target))}: {_short(question.summary, 160)}")
            self.echo(f"    allow? [{'/'.join(choices)}/N] ({'; '.join(labels + ['N = no'])}) ", nl=False)
            try:
                answer = self.read_line(prompt="")
            except (EOFError, KeyboardInterrupt):
                answer = None
            if not self.interactive:
                self.echo(answer or "")
        key = (answer or "").strip().lower()
        if key == "yes":
            key = "y"
        return choices.get(key)

    def end_stream(self) -> None:
        if self.streaming:
            self.echo()
            self.streaming = False

    def on_event(self, name: str, data: dict) -> None:
        if name in ("token", "reply", "tool_call", "ruling", "tool_result", "invalid", "stopped", "error", "notice"):
            self.clear_status()
        if name == "token":
            if not self.streaming:
                self.echo(f"{self.name}: ", nl=False)
                self.streaming = True
            self.echo(data["text"], nl=False)
            return
        if name == "reply":
            if not self.streaming:
                self.echo(f"{self.name}: {data['text']}")
            elif not data.get("streamed", True):
                # streaming stopped part-way (a long secret was redacted): show it whole
                self.end_stream()
                self.echo(f"{self.name} (in full): {data['text']}")
            else:
                self.end_stream()
            return
        if name not in ("tool_call", "ruling", "tool_result", "invalid", "stopped", "error", "notice"):
            return
        self.end_stream()
        if name == "tool_call":
            if data.get("tool") == "memory_write" and isinstance(data.get("args"), dict):
                a = data["args"]
                if isinstance(a.get("path"), str) and isinstance(a.get("content"), str):
                    self.own_writes[a["path"]] = a["content"].encode("utf-8")
            args = json.dumps(data.get("args", {}), ensure_ascii=False, sort_keys=True)
            self.echo(f"  -> {data['tool']} {_short(args)}")
        elif name == "ruling":
            verdict = "allow" if data.get("allowed") else data.get("verdict", "deny")
            self.echo(f"  [{verdict}] {data['kind']} {visible(str(data['target']))}: {_short(data.get('reason', ''), 200)}")
        elif name == "tool_result":
            first = str(data.get("output", "")).strip().splitlines()
            self.echo(f"  <- {_short(first[0] if first else '(empty)', 200)}"
                      + (f" (+{len(first) - 1} lines)" if len(first) > 1 else ""))
            self.thinking()     # the model's next step can take a while too
        elif name == "invalid":
            self.echo(f"  ! model step refused: {_short(data.get('error', ''), 200)}")
        elif name == "notice":
            self.echo(f"  ({data.get('message', '')})")
        elif name == "stopped":
            self.echo(f"  stopped: {data.get('message', '')}")
        elif name == "error":
            self.echo(f"  error: {data.get('message', '')}")


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

    Memory and file writes are allowed and shown; a web fetch asks you first: y = this once,
    r = the rest of this chat, a = always this host, d = always the wider pattern offered;
    anything else (Enter included) is no. Slash commands: /catalog, /reload, /help, /quit.
    Ctrl-C stops a reply; at the prompt it clears the line, twice in a row ends the chat
    (as does Ctrl-D).
    """
    model_spec = model_spec_or_group(model_spec)
    from ..models.base import ModelError
    from ..models.loader import load_model
    from ..session import SessionError, open_session
    from ..watch import MemoryWatcher

    ws = get_workspace()
    ui = ChatUI()
    try:
        session = open_session(ws, "watched", kind="chat", interactive=True, inline_ask=ui.inline_ask)
    except SessionError as exc:
        fail(str(exc))
    watcher = None
    try:
        try:
            model = load_model(model_spec, ws, progress=sys.stderr)
        except ModelError as exc:
            session.transcript.append("error", message=str(exc))
            fail(str(exc))
        session.transcript.append("session_start", mode="watched", model=getattr(model, "name", "?"))
        watcher = MemoryWatcher(ws.memory_dir).start()
        agent = session.new_agent(model, on_event=ui.on_event)
        changed: dict[str, str] = {}
        click.echo(f"chat in {ws.root} with {getattr(model, 'name', 'the model')} (watched: writes are "
                   "shown as they happen; web fetches ask). /help for commands.", err=True)
        try:
            interrupts = 0     # Ctrl-C in a row at the prompt: the first clears the line, the second leaves
            while True:
                try:
                    line = ui.read_line()
                except KeyboardInterrupt:
                    interrupts += 1
                    ui.echo()
                    if interrupts >= 2:
                        break
                    ui.echo("(Ctrl-C again, Ctrl-D or /quit to leave)")
                    continue
                interrupts = 0
                if line is None:
                    break
                text = line.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    cmd = text.split()[0].lower()
                    if cmd in ("/quit", "/exit"):
                        break
                    if cmd == "/help":
                        ui.echo(HELP)
                    elif cmd == "/catalog":
                        ui.echo(session.memory.catalog())
                    elif cmd == "/reload":
                        watcher.drain()
                        changed.clear()
                        agent = session.new_agent(model, on_event=ui.on_event)
                        session.transcript.append("reload")
                        ui.echo("reloaded: persona and catalog re-read; the conversation starts over")
                    else:
                        ui.echo(f"unknown command {cmd}; /help lists them")
                    continue
                fresh = watcher.drain()
                session.index.note_changes(ch.path for ch in fresh)   # recall re-reads just these
                for ch in fresh:
                    changed[ch.path] = ch.kind
                # show what the model is about to be told, so a hand edit is visibly noticed;
                # not a note that still holds exactly what this chat's assistant wrote into it
                shown = {c.path: c.kind for c in fresh if not _own_write(session.memory, ui, c)}
                if shown:
                    noticed = _changed_lines(shown)
                    ui.echo(f"  (noticed: {visible(', '.join(noticed))}; the assistant is told this turn)")
                try:
                    ui.thinking()
                    agent.turn(text, _changed_lines(changed))
                except KeyboardInterrupt:
                    ui.clear_status()
                    ui.end_stream()
                    ui.echo("  interrupted")
                    session.transcript.append("interrupted")
                    continue
                ui.clear_status()
                ui.end_stream()
                # an error ending the turn was already shown in place, by on_event("error")
        except KeyboardInterrupt:
            ui.clear_status()
            # a Ctrl-C that lands between the prompt and a turn (or during a slash command)
            # ends the chat cleanly instead of with a traceback
            ui.end_stream()
            ui.echo()
        session.transcript.append("session_end")
    finally:
        if watcher is not None:
            watcher.stop()
        session.close()


COMMANDS = [chat_command]
