"""`assistant memory`: the person's view of the notes (ls, cat, write, edit, rm, catalog, watch;
search and reindex live in cli/memory_search.py).

Guards the person's path into memory: the person is the watcher, so writes are allowed by the
gate in "watched" mode, but they still go through the same confined, scanned writer as the
model's (`assistant.memory.Memory`): a secret is refused, a path rule is refused, and a note
that changed since it was read is refused. Output is redacted. If the vault exists and cannot
be unlocked, every command fails closed with the vault's message on how to unlock it.
Every refusal is `error: <specific message>` on stderr and a non-zero exit.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import click

from ..memory import Conflict, Memory, NoteError, NotFound, Unreadable
from ..notes import revision
from .common import echo_json, fail, get_workspace, workspace_option

def _memory() -> Memory:
    """The person's Memory, from a session opened at the composition root (watched: the person
    is the watcher). A vault that cannot be unlocked fails closed with how to unlock it."""
    from ..session import SessionError, open_session

    try:
        return open_session(get_workspace(), "watched", kind="cli", interactive=True, transcript=False).memory
    except SessionError as exc:
        fail(str(exc))


def _child_env() -> dict[str, str]:
    """The environment for a program we start (the editor): without the vault passphrases."""
    from ..vault import ENV_PASSPHRASE
    from .vault import ENV_NEW_PASSPHRASE

    return {k: v for k, v in os.environ.items() if k not in (ENV_PASSPHRASE, ENV_NEW_PASSPHRASE)}


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _report(result) -> None:
    if getattr(result, "warning", None):
        click.echo(f"warning: {result.warning}", err=True)


@click.group("memory")
@workspace_option
def memory_group() -> None:
    """Your notes in memory/: list, read, write, edit, remove, and the catalog the model sees.

    Writes from here are yours (you are watching), so they are allowed, but they go through
    the same checks as the model's: path rules, size, the leak scanner, and read before
    overwrite (pass --base REV as shown by `memory cat`, or --force to replace whatever is
    there).
    """


@memory_group.command("ls")
@workspace_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def ls_cmd(as_json: bool) -> None:
    """List notes in catalog order (pinned first, then most recently changed)."""
    mem = _memory()
    try:
        entries = mem.entries()
    except (NoteError, OSError) as exc:
        fail(str(exc))
    if as_json:
        echo_json([e.to_json() for e in entries])
        return
    if not entries:
        click.echo("no notes yet")
        return
    for e in entries:
        summary = e.summary or "(no summary)"
        if e.problem:
            summary = f"{e.summary + ' ' if e.summary else ''}(unreadable: {e.problem})"
        click.echo(f"{e.path}\t{e.size}\t{summary}")


@memory_group.command("cat")
@workspace_option
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="Print {path, revision, content} as JSON.")
def cat_cmd(path: str, as_json: bool) -> None:
    """Print a note (secrets redacted). Its revision goes to stderr on a terminal, and always
    into --json."""
    mem = _memory()
    try:
        note = mem.read(path)
    except NoteError as exc:
        fail(str(exc))
    if as_json:
        echo_json({"path": note.path, "revision": note.revision, "content": note.content})
        return
    click.echo(note.content, nl=False)
    # The revision is for the person at a terminal; captured output (a script, a test runner
    # that merges stderr into stdout) gets exactly the note. --json always carries it.
    if _stderr_is_tty():
        click.echo(f"revision {note.revision}", err=True)


@memory_group.command("write")
@workspace_option
@click.argument("path")
@click.option("--base", "base", metavar="REV", default=None,
              help="The revision you read (memory cat --json); required to replace a note.")
@click.option("--force", is_flag=True,
              help="Replace an existing note without naming its revision (still scanned).")
def write_cmd(path: str, base: str | None, force: bool) -> None:
    """Create or replace a note with the text on stdin (whole-file replacement)."""
    if base and force:
        fail("give --base or --force, not both")
    if sys.stdin.isatty():
        click.echo(f"reading the new text of {path} from stdin; end with Ctrl-D", err=True)
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    mem = _memory()
    try:
        result = mem.write(path, data, base=base, force=force)
    except Conflict as exc:
        hint = "" if base else (f" (from the command line: pass --base REV, the revision shown by "
                                f"`assistant memory cat --json {path}`, or --force to replace it)")
        fail(f"{exc}{hint}")
    except NoteError as exc:
        fail(str(exc))
    _report(result)
    click.echo(f"{'created' if result.created else 'replaced'} {result.path} "
               f"({result.bytes} bytes, revision {result.revision})")


@memory_group.command("edit")
@workspace_option
@click.argument("path")
def edit_cmd(path: str) -> None:
    """Open a note in $EDITOR and save it back through the same checks.

    Refused if the note changed on disk while you were editing (your text is kept and its
    location printed). Secrets in the note are shown redacted; saving keeps the markers.
    """
    mem = _memory()
    try:
        mem.check_path(path)
        try:
            data, text = mem.read_raw(path)
            base: str | None = revision(data)
        except NotFound:
            data, text, base = None, "", None
    except NoteError as exc:
        fail(str(exc))
    shown = mem.scanner.redact(text)
    if shown != text:
        click.echo("note: secrets in this note are shown redacted; saving keeps the [redacted:...] "
                   "markers in their place", err=True)
    # $EDITOR is the contract (issue 5: "opens $EDITOR"); $VISUAL only when $EDITOR is unset
    editor = os.environ.get("EDITOR") or os.environ.get("VISUAL")
    if not editor:
        if not sys.stdin.isatty():
            fail("no $EDITOR (or $VISUAL) is set and there is no terminal to run vi in: set $EDITOR, "
                 f"or pipe the new text into `assistant memory write {path} --base REV`")
        editor = "vi"
    which = "$EDITOR" if os.environ.get("EDITOR") else "$VISUAL"
    try:
        editor_argv = shlex.split(editor)
    except ValueError as exc:
        fail(f"cannot read {which} {editor!r}: {exc} (check its quoting)")
    if not editor_argv:
        fail(f"{which} is blank; set $EDITOR to your editor")
    tmpdir = Path(tempfile.mkdtemp(prefix="assistant-edit-"))
    os.chmod(tmpdir, 0o700)
    tmp = tmpdir / Path(path).name
    keep = False
    try:
        tmp.write_text(shown, encoding="utf-8")
        os.chmod(tmp, 0o600)
        try:
            rc = subprocess.call([*editor_argv, str(tmp)], env=_child_env())
        except OSError as exc:
            fail(f"cannot run the editor {editor!r}: {exc.strerror or exc}; set $EDITOR")
        if rc != 0:
            fail(f"the editor exited with status {rc}; nothing was written")
        new = tmp.read_bytes()
        if new == shown.encode("utf-8"):
            click.echo(f"no changes to {path}")
            return
        try:
            result = mem.write(path, new, base=base)
        except NoteError as exc:
            keep = True
            fail(f"{exc}. Your edited text is kept at {tmp}")
        _report(result)
        click.echo(f"{'created' if result.created else 'saved'} {result.path} "
                   f"({result.bytes} bytes, revision {result.revision})")
    finally:
        if not keep:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
            os.rmdir(tmpdir)


@memory_group.command("rm")
@workspace_option
@click.argument("path")
@click.option("--base", "base", metavar="REV", default=None,
              help="Only remove the note if it is still at this revision.")
def rm_cmd(path: str, base: str | None) -> None:
    """Remove a note."""
    mem = _memory()
    try:
        result = mem.remove(path, base=base)
    except Unreadable as exc:
        # not a note (a link, a FIFO...): the confined path never touches it; the person can
        where = shlex.quote(str(mem.ws.memory_dir / path))
        fail(f"{exc}; it is not a note: if it should go, remove it yourself: rm {where}")
    except NoteError as exc:
        fail(str(exc))
    _report(result)
    click.echo(f"removed {result.path} (was revision {result.revision})")


@memory_group.command("catalog")
@workspace_option
def catalog_cmd() -> None:
    """Print the catalog exactly as the model sees it at the start of a session."""
    mem = _memory()
    try:
        click.echo(mem.catalog())
    except (NoteError, OSError) as exc:
        fail(str(exc))


@memory_group.command("watch")
@workspace_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per change.")
@click.option("--timeout", type=float, default=None, hidden=True,
              help="Stop after this many seconds (for tests and scripts).")
def watch_cmd(as_json: bool, timeout: float | None) -> None:
    """Print note changes (added, modified, deleted) as they happen, until Ctrl-C."""
    import json

    from ..watch import watch_notes

    ws = get_workspace()
    scanner = _memory().scanner   # note names are redacted like any output (locked vault: refused)
    stop = threading.Event()
    timer = None
    if timeout is not None:
        timer = threading.Timer(timeout, stop.set)
        timer.daemon = True
        timer.start()
    if not as_json:
        click.echo(f"watching {ws.memory_dir} (Ctrl-C to stop)", err=True)
    try:
        for batch in watch_notes(ws.memory_dir, stop_event=stop):
            for change in batch:
                shown = scanner.redact(change.path)
                if as_json:
                    click.echo(json.dumps({"path": shown, "change": change.kind}))
                else:
                    click.echo(f"{change.kind}\t{shown}")
                sys.stdout.flush()
    except KeyboardInterrupt:
        click.echo(err=True)    # the terminal echoed ^C: leave the shell a fresh line
    except FileNotFoundError as exc:
        fail(str(exc))
    finally:
        if timer is not None:
            timer.cancel()


from .memory_search import reindex_cmd, search_cmd  # noqa: E402  (search and reindex: cli/memory_search.py)

memory_group.add_command(search_cmd)
memory_group.add_command(reindex_cmd)

COMMANDS = [memory_group]
