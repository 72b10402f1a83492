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
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

from policy.fileio import LinkedFolder, open_folder

from assistant.notes.store import (
    Conflict, Edit, EditTouchesSecret, Memory, NoteError, NotFound, RemoveResult, SecretRefused, SecretWouldBeLost,
    Unreadable, WriteResult,
)
from assistant.notes.flagging import FLAG
from assistant.notes.names import not_nfc, shown
from assistant.workspace.layout import STATE
from assistant.display.localtime import local_time
from assistant.display.terminal import escape, invisible_line, one_line
from assistant.notes.watch import MemoryWatcher
from assistant.secrets.unredact import RestoreError, restore
from assistant.secrets.vault import ENV_NEW_PASSPHRASE, ENV_PASSPHRASE
from assistant.session import SessionError, open_session
from assistant.cli.common import (
    echo_json, fail, get_workspace, is_tty, json_option, visible, workspace_group,
)

EDITS = "edits"     # state/edits/: the editor's copies (`memory edit`); one kept after a refusal stays there

def _session():
    """The person's session, opened at the composition root (watched: the person is the
    watcher); the caller closes it. A vault that cannot be unlocked fails closed with how to
    unlock it."""
    try:
        return open_session(get_workspace(), "watched", kind="cli", interactive=True, transcript=False)
    except SessionError as exc:
        fail(str(exc))


def _memory() -> Memory:
    """The person's Memory, from a session opened at the composition root (`_session`). The
    session is closed when the command ends (click closes its context, on any exit)."""
    return click.get_current_context().with_resource(_session()).memory


def _child_env() -> dict[str, str]:
    """The environment for a program we start (the editor): without the vault passphrases."""
    return {k: v for k, v in os.environ.items() if k not in (ENV_PASSPHRASE, ENV_NEW_PASSPHRASE)}




def note_name(path: str) -> str:
    """Notes are markdown files: a name whose last part has no `.` means that name with `.md`
    (`people/lina` is people/lina.md), for every command that takes a note."""
    leaf = path.rsplit("/", 1)[-1]
    return f"{path}.md" if leaf and "." not in leaf else path


def _refusal(exc: NoteError, session=None, *, command: str = "", target: str = "") -> str:
    """A refusal as the person sees it: a refused secret is named here (the model is never told
    which one; the person, whose vault it is, may be). With the `session` the command ran in, a
    vault value refused is audited (`secret_refused`, tool = the command) through the session's
    refusal rule, the same record a chat or MCP refusal makes. It is not counted toward the
    refusal budget: a CLI session is the person's own (assistant.session.PERSON_KINDS)."""
    if session is not None and isinstance(exc, SecretRefused) and exc.vault:
        session.refusals.refuse(command, target, exc.names)
    if isinstance(exc, SecretRefused) and exc.names:
        return f"{exc} (found: {', '.join(exc.names)})"
    return str(exc)


def person_conflict(exc: Conflict, *, action: str = "write") -> str:
    """A read-before-overwrite refusal worded for the person at the CLI (`--base REV`, `memory
    cat`), not for the model (whose message speaks of memory_read and `base`). action: "write",
    "edit", "rm" or "rename" (what the person ran)."""
    path = visible(exc.path, keep_newlines=False) if exc.path else "the note"
    quoted = shlex.quote(exc.path) if exc.path else "PATH"
    where = f"`assistant memory cat --json {quoted}` shows its revision"
    force = "" if action in ("rm", "rename") else "; --force replaces it whatever it holds"
    gave = f"--base {exc.given}" if exc.given else "the --base you gave"
    if action == "edit" and exc.why in ("exists", "created"):
        return (f"{path} was created by someone else while you were editing: run "
                f"`assistant memory edit {quoted}` again")
    if exc.why == "exists":
        return f"{path} already exists: to replace it, pass --base REV ({where}){force}"
    if exc.why == "changed":
        if action == "edit":
            return f"{path} changed since you read it, read it again: it changed on disk while you were editing"
        return f"{path} changed since you read it, read it again: {gave} is not its current revision ({where}{force})"
    if exc.why == "removed":
        return f"{path} no longer exists: it was removed since you read it (write it without --base to create it)"
    if exc.why == "raced":
        what = {"rm": "removal", "edit": "edit", "rename": "rename"}.get(action, "write")
        return f"{path} changed since you read it, read it again: it changed on disk while this {what} was being decided"
    if exc.why == "created" and action == "rename":
        return f"{path} was created by someone else while this rename was being decided; nothing was renamed"
    if exc.why == "created":
        return (f"{path} was created by someone else while this write was being decided: read it "
                f"(`assistant memory cat {quoted}`) and pass --base REV to replace it")
    return str(exc)


def _edit_folder(mem: Memory) -> Path:
    """A new private folder for the editor's copy of a note, inside the workspace
    (state/edits/, 0700), never the system's shared temp folder: note text is not left in /tmp,
    and a copy kept after a refusal sits beside the workspace it belongs to."""
    edits = mem.ws.state_dir / EDITS
    try:
        mem.ws.ensure_state()
        os.close(open_folder(mem.ws.root, f"{STATE}/{EDITS}", create=True))   # no link at state/ or edits/
        st = os.lstat(edits)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            fail(f"{edits} is not a folder of yours (a link or a file?): move it aside")
        folder = Path(tempfile.mkdtemp(prefix="edit-", dir=edits))
    except LinkedFolder as exc:
        fail(f"no folder for the editor's copy: {exc.strerror}")
    except OSError as exc:
        fail(f"cannot make a folder for the editor's copy in {edits}: {exc.strerror or exc}")
    os.chmod(folder, 0o700)
    return folder


def _report(result: WriteResult | RemoveResult) -> None:
    if result.warning:
        click.echo(f"warning: {one_line(result.warning)}", err=True)


memory_group = workspace_group("memory", """Your notes in memory/: list, read, write, edit, remove, and the catalog the model sees.

    Writes from here are yours (you are watching), so they are allowed, but they go through
    the same checks as the model's: path rules, size, the leak scanner, and read before
    overwrite (pass --base REV as shown by `memory cat`, or --force to replace whatever is
    there).
    """)


@memory_group.command("ls")
@click.argument("prefix", required=False, metavar="[PATH]")
@click.option("--sort", "sort", type=click.Choice(["catalog", "name", "changed"]), default="catalog",
              show_default=True,
              help="catalog: pinned first, then most recently changed (what the model sees); "
                   "name: by path; changed: most recently changed first.")
@json_option()
def ls_cmd(prefix: str | None, sort: str, as_json: bool) -> None:
    """List notes; PATH limits it to one folder or the notes whose path starts with PATH
    (e.g. `memory ls people/`)."""
    mem = _memory()
    try:
        entries = mem.entries()
    except (NoteError, OSError) as exc:
        fail(str(exc))
    if prefix:
        entries = [e for e in entries if e.path.startswith(prefix)]
    if sort == "name":
        entries = sorted(entries, key=lambda e: e.path)
    elif sort == "changed":
        entries = sorted(entries, key=lambda e: (-e.mtime_ns, e.path))
    if as_json:
        echo_json([e.to_json() for e in entries])
        return
    if not entries:
        click.echo(f"no notes under {visible(prefix)}" if prefix else "no notes yet")
        return
    for e in entries:
        summary = e.summary or "(no summary)"
        if e.problem:
            summary = f"{e.summary + ' ' if e.summary else ''}(unreadable: {e.problem})"
        if e.flagged:
            summary = f"{summary} {FLAG}"
        # sorted by change: the time of the change is shown too (local time, with its zone)
        changed = f"{local_time(e.mtime_ns / 1e9)}\t" if sort == "changed" else ""
        click.echo(f"{escape(e.path, newlines=False)}\t{e.size}\t{changed}{one_line(summary)}")


@memory_group.command("cat")
@click.argument("path")
@json_option("Print {path, revision, content} as JSON.")
def cat_cmd(path: str, as_json: bool) -> None:
    """Print a note (secrets redacted). Its revision goes to stderr on a terminal, and always
    into --json."""
    mem = _memory()
    try:
        note = mem.read(note_name(path))
    except NotFound:
        fail(f"no note at {visible(note_name(path))}")
    except NoteError as exc:
        fail(str(exc))
    if as_json:
        echo_json({"path": note.path, "revision": note.revision, "content": note.content})
        return
    # On a terminal the note is shown escaped (an escape sequence or a bare carriage return in
    # it could hide a line); into a pipe or a file it goes byte for byte.
    # On a terminal the count of invisible characters follows (once), as every display says it.
    if is_tty(sys.stdout):
        hidden = invisible_line(note.content)
        gap = "\n" if hidden and not note.content.endswith("\n") else ""
        click.echo(escape(note.content) + gap + hidden, nl=False)
    else:
        click.echo(note.content, nl=False)
    # The revision is for the person at a terminal; captured output (a script, a test runner
    # that merges stderr into stdout) gets exactly the note. --json always carries it.
    if is_tty(sys.stderr):
        click.echo(f"revision {note.revision}", err=True)


@memory_group.command("write")
@click.argument("path")
@click.option("--base", "base", metavar="REV", default=None,
              help="The revision you read (memory cat --json); required to replace a note.")
@click.option("--force", is_flag=True,
              help="Replace an existing note without naming its revision, whatever it holds (a "
                   "secret in it included; history keeps the old version). The new text is still scanned.")
def write_cmd(path: str, base: str | None, force: bool) -> None:
    """Create or replace a note with the text on stdin (whole-file replacement)."""
    if base and force:
        fail("give --base or --force, not both")
    if sys.stdin.isatty():
        click.echo(f"reading the new text of {one_line(path)} from stdin; end with Ctrl-D", err=True)
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    session = _session()
    mem = session.memory
    try:
        result = mem.write(path, data, base=base, force=force)
    except Conflict as exc:
        fail(person_conflict(exc))
    except SecretWouldBeLost:
        fail(f"{visible(path)} holds a secret (shown as a [redacted:...] marker when read) that this text does "
             f"not keep, so nothing was written: `assistant memory edit {shlex.quote(path)}` keeps it behind its "
             "marker; --force replaces the whole note, dropping it (history keeps the old version)")
    except NoteError as exc:
        fail(_refusal(exc, session, command="memory write", target=path))
    _report(result)
    click.echo(f"{'created' if result.created else 'replaced'} {one_line(result.path)} "
               f"({result.bytes} bytes, revision {result.revision})")


@memory_group.command("edit")
@click.argument("path")
@click.option("--append", "append", metavar="TEXT", default=None, help="Add TEXT at the end of the note.")
@click.option("--replace", "replace", nargs=2, metavar="OLD NEW", default=None,
              help="Replace OLD (as `memory cat` shows it; it must occur exactly once) by NEW.")
@click.option("--insert-after", "insert_after", nargs=2, metavar="HEADING TEXT", default=None,
              help="Insert TEXT right after the heading line HEADING (the whole line, e.g. '## Plans').")
@click.option("--replace-section", "replace_section", nargs=2, metavar="HEADING TEXT", default=None,
              help="Replace what is under HEADING, up to the next heading of the same or a higher "
                   "level, by TEXT (the heading stays).")
@click.option("--base", "base", metavar="REV", default=None,
              help="With an edit option: apply it only if the note is still at this revision "
                   "(`memory cat --json`); without it, the edit applies to the note as it is now.")
def edit_cmd(path: str, append: str | None, replace: tuple[str, str] | None,
             insert_after: tuple[str, str] | None, replace_section: tuple[str, str] | None,
             base: str | None) -> None:
    """Open a note in $EDITOR and save it back through the same checks; or, with one of
    --append, --replace, --insert-after or --replace-section, make that one change.

    Refused if the note changed on disk while you were editing (your text is kept and its
    location printed). Secrets in the note are shown as [redacted:NAME] markers; saving puts
    the exact original value back for every marker you leave as it is (delete a marker to
    drop that secret). A marker that cannot be put back is an error and nothing is saved.

    An edit option matches OLD and HEADING in the note as `memory cat` shows it (secrets
    redacted) and refuses an edit of a marker or of the text right next to one (use the
    editor for that); the rest of the note, its secrets included, stays byte for byte.
    """
    path = note_name(path)
    given = [(op, value) for op, value in (("append", append), ("replace", replace),
                                            ("insert_after", insert_after),
                                            ("replace_section", replace_section)) if value is not None]
    if len(given) > 1:
        fail("give one of --append, --replace, --insert-after or --replace-section, not several")
    if given:
        _edit_in_place(path, *given[0], base=base)
        return
    if base is not None:
        fail("--base goes with an edit option (--append, --replace, --insert-after or --replace-section); "
             "the editor always saves against the revision it opened")
    session = _session()
    mem = session.memory
    try:
        mem.check_path(path)
        try:
            data, text = mem.read_raw(path)
            base: str | None = mem.revision(data)
        except NotFound:
            data, text, base = None, "", None
    except NoteError as exc:
        fail(str(exc))
    shown = mem.scanner.redact(text)
    if shown != text:
        click.echo("note: secrets in this note are shown as [redacted:NAME] markers; saving puts the real "
                   "values back for the markers you leave as they are (delete one to drop that secret)",
                   err=True)
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
    tmpdir = _edit_folder(mem)
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
            click.echo(f"no changes to {one_line(path)}")
            return

        try:
            restored = restore(text, new.decode("utf-8"), mem.scanner).encode("utf-8")
        except UnicodeDecodeError as exc:
            keep = True
            fail(f"the edited text is not UTF-8 (byte {exc.start}); nothing was saved. Your edited text "
                 f"is kept at {tmp}")
        except RestoreError as exc:
            keep = True
            fail(f"{exc}. Nothing was saved; your edited text is kept at {tmp}")
        try:
            result = mem.write(path, restored, base=base, person_edit=True)
        except NoteError as exc:
            keep = True
            why = (person_conflict(exc, action="edit") if isinstance(exc, Conflict)
                   else _refusal(exc, session, command="memory edit", target=path))
            fail(f"{why}. Your edited text is kept at {tmp}")
        _report(result)
        click.echo(f"{'created' if result.created else 'saved'} {one_line(result.path)} "
                   f"({result.bytes} bytes, revision {result.revision})")
    finally:
        if not keep:
            # the copy and whatever the editor left beside it (a backup, a swap file)
            shutil.rmtree(tmpdir, ignore_errors=True)


def _edit_in_place(path: str, op: str, value: str | tuple[str, str], *, base: str | None) -> None:
    """`memory edit PATH --append TEXT` (and the other edit options): one change through
    Memory.edit, the model's and MCP's memory_edit, with the person's own wording of refusals."""
    if op == "append":
        change = Edit(op, str(value))
    elif op == "replace":
        old, new = value
        change = Edit(op, new, old=old)
    else:
        heading, text = value
        change = Edit(op, text, heading=heading)
    mem = _memory()
    try:
        result = mem.edit(path, change, base=base)
    except Conflict as exc:
        if exc.why == "changed":
            where = f"`assistant memory cat --json {shlex.quote(path)}` shows its revision"
            gave = f"--base {exc.given}" if exc.given else "the --base you gave"
            fail(f"{visible(path)} changed since you read it, read it again: {gave} is not its current "
                 f"revision ({where}; without --base the edit applies to the note as it is now)")
        fail(person_conflict(exc, action="edit"))
    except EditTouchesSecret:
        fail(f"the edit touches a secret in {visible(path)} (shown as a [redacted:...] marker by `memory cat`), "
             "or the text right next to one, so nothing was written: edit other text, or open the note "
             f"with `assistant memory edit {shlex.quote(path)}` (no option), which puts the secret back behind "
             "its marker")
    except NoteError as exc:
        fail(_refusal(exc))
    _report(result)
    click.echo(f"edited {one_line(result.path)} ({result.bytes} bytes, revision {result.revision})")


@memory_group.command("rm")
@click.argument("path")
@click.option("--base", "base", metavar="REV", default=None,
              help="Only remove the note if it is still at this revision.")
def rm_cmd(path: str, base: str | None) -> None:
    """Remove a note."""
    path = note_name(path)
    mem = _memory()
    try:
        result = mem.remove(path, base=base)
    except Unreadable as exc:
        # not a note (a link, a FIFO...): the confined path never touches it; the person can
        where = shlex.quote(str(mem.ws.memory_dir / path))
        fail(f"{exc}; it is not a note: if it should go, remove it yourself: rm {where}")
    except Conflict as exc:
        fail(person_conflict(exc, action="rm"))
    except NoteError as exc:
        fail(str(exc))
    _report(result)
    click.echo(f"removed {one_line(result.path)} (was revision {result.revision})")


@memory_group.command("rename")
@click.argument("old")
@click.argument("new")
def rename_cmd(old: str, new: str) -> None:
    """Give note OLD the name NEW (refused if NEW exists).

    Goes through the same checks as `memory write` and `memory rm` (NEW is a write of the same
    text, OLD a removal; history records both), done as one rename, so a failure leaves
    nothing half-done. OLD may be a name stored in decomposed Unicode (as macOS or a sync
    tool writes it): type it as it reads, and NEW gets the usual (NFC) spelling.
    """
    old, new = note_name(old), note_name(new)
    mem = _memory()
    try:
        result = mem.rename(old, new)
    except Conflict as exc:
        fail(person_conflict(exc, action="rename"))
    except NoteError as exc:
        fail(_refusal(exc))
    _report(result)
    # an old name in another Unicode spelling is shown escaped: it reads like the new one
    was = shown(result.old) if not_nfc([result.old]) else result.old
    click.echo(f"renamed {one_line(was)} to {one_line(result.new)} (revision {result.revision})")


@memory_group.command("catalog")
def catalog_cmd() -> None:
    """Print the catalog exactly as the model sees it at the start of a session."""
    mem = _memory()
    try:
        click.echo(escape(mem.catalog()))
    except (NoteError, OSError) as exc:
        fail(str(exc))


@memory_group.command("watch")
@json_option("One JSON object per change.")
@click.option("--timeout", type=float, default=None, hidden=True,
              help="Stop after this many seconds (for tests and scripts).")
def watch_cmd(as_json: bool, timeout: float | None) -> None:
    """Print note changes (added, modified, deleted) as they happen, until Ctrl-C."""
    import json

    ws = get_workspace()
    # The watches go in first: changes made while the session starts are not missed.
    try:
        watcher = MemoryWatcher(ws.memory_dir).start()
    except FileNotFoundError as exc:
        fail(str(exc))
    session = None
    try:
        session = _session()
        scanner = session.scanner   # note names are redacted like any output (locked vault: refused)
        deadline = None if timeout is None else time.monotonic() + timeout
        if not as_json:
            click.echo(f"watching {ws.memory_dir} (Ctrl-C to stop)", err=True)
        while deadline is None or time.monotonic() < deadline:
            if not watcher.wait(0.2 if deadline is None else max(0.0, min(0.2, deadline - time.monotonic()))):
                if watcher.error is not None:
                    fail(f"watching {ws.memory_dir} failed: {watcher.error}")
                continue
            batch = session.notice_hand_edits(watcher)   # a hand edit becomes a version in history/
            for change in batch:
                shown = scanner.redact(change.path)
                if as_json:
                    click.echo(json.dumps({"path": shown, "change": change.kind}))
                else:
                    click.echo(f"{change.kind}\t{one_line(shown)}")
                sys.stdout.flush()
    except KeyboardInterrupt:
        click.echo(err=True)    # the terminal echoed ^C: leave the shell a fresh line
    finally:
        watcher.stop()
        if session is not None:
            session.close()


from assistant.cli.memory_search import reindex_cmd, search_cmd  # noqa: E402  (search and reindex: cli/memory_search.py)

memory_group.add_command(search_cmd)
memory_group.add_command(reindex_cmd)

COMMANDS = [memory_group]
