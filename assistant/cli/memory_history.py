"""`assistant memory log/show/diff/revert/prune/forget/stale`: a note's history, for the person.

Guards "nothing written is ever lost, and every change says who, why and from what": every
version in history/ can be listed (newest first, with its source, run, approval and the
untrusted places the turn had read), shown (redacted and escaped like `memory cat`, or its exact
bytes with --raw), compared, and restored. A revert goes through the same confined, scanned,
gated writer as `memory write` and is recorded as a new version; a version that writer refuses
(one holding a vault value, say) is refused with the reason and the command that recovers its
bytes. `prune` and `forget` are the only ways history shrinks, and they say what they free.
"""

from __future__ import annotations

import difflib
import json
import shlex
import sys

import click

from policy.duration import parse_duration

from assistant.confine import Root
from assistant.display.colour import diff, wanted
from assistant.display.localtime import local_time
from assistant.display.terminal import invisible_line
from assistant.notes.frontmatter import decode_head, head_meta, staleness
from assistant.notes.history import HistoryError, Origin, Version
from assistant.notes.store import Memory, NoteError, NotFound
from assistant.sync.engine import add_tombstone
from assistant.sync.state import SyncStateError
from assistant.cli.common import echo_json, fail, is_tty, json_option, visible
from assistant.cli.memory import _memory, _refusal, _report, memory_group, note_name


def _history(mem: Memory):
    if mem.history is None:
        fail("this session keeps no history")
    return mem.history


def _notice(mem: Memory) -> None:
    """Hand edits made since history last looked become versions before we show anything."""
    try:
        mem.notice()
    except NoteError as exc:
        click.echo(f"warning: hand edits could not be recorded now: {exc}", err=True)


def _shown(mem: Memory, text: str) -> str:
    """Redacted, then escaped for the terminal (a line with nothing to escape is left as is)."""
    text = mem.scanner.redact(text)
    return text if text.isascii() and text.isprintable() else visible(text)   # a variation selector is "printable"


class _Shown:
    """`_shown` with a memo: a log of thousands of versions repeats the same few paths,
    runs and sources, and each is redacted once."""

    def __init__(self, mem: Memory) -> None:
        self.mem = mem
        self.memo: dict[str, str] = {}

        self.redacted: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        out = self.memo.get(text)
        if out is None:
            out = self.memo[text] = _shown(self.mem, text)
        return out

    def redact(self, text: str) -> str:
        out = self.redacted.get(text)
        if out is None:
            out = self.redacted[text] = self.mem.scanner.redact(text)
        return out


def _json(shown: _Shown, v: Version) -> dict:
    """The JSON of a version (text fields redacted; JSON escapes the rest)."""
    out = v.to_json()
    for key in ("path", "source", "run", "grant", "model"):
        if out[key]:
            out[key] = shown.redact(out[key])
    out["sources"] = [shown.redact(s) for s in v.sources]
    return out


_enc = json.encoder.encode_basestring   # what json.dumps(ensure_ascii=False) uses for a str


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _json_list(shown: _Shown, versions: list[Version]) -> str:
    """`versions` as the JSON list `memory log --json` prints: exactly
    json.dumps([_json(shown, v) ...], sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
    with one object per line, built without a dict per version. The versions of a note share
    all but five fields (seq, time, rev, sha256, bytes), so each distinct rest is rendered
    once, by json.dumps itself, into the text between those five; tests/history/
    test_history_log_speed.py checks the result against json.dumps."""
    shapes: dict[tuple, tuple[str, str, str, str, str]] = {}
    out = []
    for v in versions:
        key = (v.approval, v.baseline, v.grant, v.model, v.path, v.removed, v.run, v.scope,
               v.source, v.sources, v.conflict, v.device, v.imported)
        shape = shapes.get(key)
        if shape is None:
            red = shown.redact
            shape = shapes[key] = (
                '{"approval": ' + _dump(v.approval) + (', "baseline": true' if v.baseline else "")
                + ', "bytes": ',
                (', "conflict": true' if v.conflict else "")
                + (', "device": ' + _dump(red(v.device)) if v.device else "")
                + ', "grant": ' + _dump(red(v.grant) if v.grant else v.grant)
                + (', "imported": true' if v.imported else "")
                + ', "model": ' + _dump(red(v.model) if v.model else v.model)
                + ', "path": ' + _dump(red(v.path) if v.path else v.path)
                + ', "removed": ' + _dump(v.removed) + ', "rev": ',
                ', "run": ' + _dump(red(v.run) if v.run else v.run)
                + ', "scope": ' + _dump(v.scope) + ', "seq": ',
                ', "sha256": ',
                ', "source": ' + _dump(red(v.source) if v.source else v.source)
                + ', "sources": ' + _dump([red(x) for x in v.sources]) + ', "time": ',
            )
        a, b, c, d, e = shape
        out.append(f"{a}{v.bytes!r}{b}{_enc(v.rev)}{c}{v.seq!r}{d}{_enc(v.sha256)}{e}{_enc(v.time)}}}")
    return "[\n " + ",\n ".join(out) + "]" if out else "[]"


def _line(shown: _Shown, v: Version) -> str:
    what = "removed" if v.removed else f"{v.bytes} bytes"
    return "  ".join([_rev(shown, v), local_time(v.time), *_who(shown, v), what, *_why(shown, v)])


def _rev(shown: _Shown, v: Version) -> str:
    """The version's id as read from history/log.jsonl: shown as it is when it is the usual
    alphanumeric id, else escaped and redacted like every other text from disk."""
    return v.rev if v.rev.isascii() and v.rev.isalnum() else shown(v.rev)


PERSON = "person"     # history's source for the person's own writes (their CLI, their script)


def _who(shown: _Shown, v: Version) -> list[str]:
    """Who wrote it (you, for the person's own writes) and the note."""
    return ["you" if v.source == PERSON else shown(v.source), shown(v.path)]


def _why(shown: _Shown, v: Version) -> list[str]:
    parts = []
    if v.conflict:
        parts.append(shown(f"CONFLICT: {v.device}'s version, not merged (this device's text stays; "
                           "resolve with `assistant memory edit` or `assistant memory revert`)"))
    elif v.imported:
        parts.append(shown(f"on device {v.device}"))
    elif v.device:
        parts.append(shown(f"arrived by sync from device {v.device}"))
    if v.baseline:
        parts.append("(first version: history started)")
    if v.approval:
        parts.append(shown(f"approval {v.approval}" + (f" ({v.scope})" if v.scope else "")))
    elif v.source == PERSON:
        parts.append("your own write")     # not the gate's rule for a chat: you wrote it yourself
    elif v.grant:
        parts.append(shown(f"allowed: {v.grant}"))
    if v.model:
        parts.append(shown(f"model {v.model}"))
    if v.sources:
        parts.append(shown("after reading " + ", ".join(v.sources)))
    if v.run:
        parts.append(shown(f"run {v.run}"))
    return parts


def _lines(shown: _Shown, versions: list[Version]) -> str:
    """"\n".join(_line(shown, v) for v in versions), with what versions share (source, path,
    approval, model, sources, run) rendered once per distinct combination."""
    shapes: dict[tuple, tuple[str, str]] = {}
    out = []
    for v in versions:
        key = (v.source, v.path, v.baseline, v.approval, v.scope, v.grant, v.model, v.sources, v.run,
               v.device, v.imported, v.conflict)
        shape = shapes.get(key)
        if shape is None:
            shape = shapes[key] = ("".join("  " + p for p in _who(shown, v)) + "  ",
                                   "".join("  " + p for p in _why(shown, v)))
        head, tail = shape
        what = "removed" if v.removed else f"{v.bytes} bytes"
        out.append(f"{_rev(shown, v)}  {local_time(v.time)}{head}{what}{tail}")
    return "\n".join(out)


def _resolve(mem: Memory, path: str, rev: str) -> Version:
    try:
        return _history(mem).resolve(path, rev)
    except HistoryError as exc:
        fail(_shown(mem, str(exc)))


def _bytes(mem: Memory, v: Version) -> bytes:
    try:
        return _history(mem).object_bytes(v.sha256)
    except HistoryError as exc:
        fail(_shown(mem, str(exc)))


def _check(mem: Memory, path: str) -> str:
    try:
        return mem.check_path(path)
    except NoteError as exc:
        fail(str(exc))


@memory_group.command("log")
@click.argument("path", required=False)
@json_option("A JSON list, newest first.")
def log_cmd(path: str | None, as_json: bool) -> None:
    """Every recorded version (of PATH, or of all notes), newest first: revision, time,
    source (assistant, person, hand-edit, revert, removal, mcp:NAME), approval or the rule that
    allowed it, the model, and what the turn had read from untrusted places before writing."""
    path = note_name(path) if path is not None else None
    mem = _memory()
    if path is not None:
        _check(mem, path)
    _notice(mem)
    try:
        versions = _history(mem).versions(path)
    except HistoryError as exc:
        fail(str(exc))
    versions.reverse()
    shown = _Shown(mem)
    if as_json:
        # A JSON list, one version per line, sorted keys (see _json_list).
        click.echo(_json_list(shown, versions))
        return
    if not versions:
        click.echo(f"no versions of {_shown(mem, path)} recorded" if path else "no versions recorded yet")
        return
    click.echo(_lines(shown, versions))



@memory_group.command("show")
@click.argument("path")
@click.option("--rev", "rev", metavar="REV", required=True, help="The version (any unique prefix).")
@click.option("--raw", is_flag=True, help="Write the exact bytes (not redacted): for `> FILE`.")
def show_cmd(path: str, rev: str, raw: bool) -> None:
    """Print one version of a note, redacted and escaped like `memory cat` (--raw: exact bytes)."""
    path = note_name(path)
    mem = _memory()
    _check(mem, path)
    v = _resolve(mem, path, rev)
    data = _bytes(mem, v)
    if raw:
        if is_tty(sys.stdout):
            # exact bytes may hold an escape sequence that erases lines (and unredacted secrets)
            fail("--raw writes the exact bytes, unescaped and unredacted: redirect it to a file "
                 f"(assistant memory show {shlex.quote(path)} --rev {v.rev} --raw > FILE); "
                 "without --raw the version is shown here, escaped")
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    text = data.decode("utf-8", "replace")
    click.echo(visible(mem.scanner.redact(text), keep_newlines=True), nl=False)


def _text_of(mem: Memory, path: str, rev: str | None) -> tuple[str, str]:
    """(label, redacted text) of a version, or of the note on disk now when rev is None."""
    if rev is None:
        try:
            data, _text = mem.read_raw(path)
            return f"{path} (now, {mem.revision(data)})", mem.scanner.redact(_text)
        except NotFound:
            return f"{path} (removed now)", ""
        except NoteError as exc:
            fail(str(exc))
    v = _resolve(mem, path, rev)
    return f"{path} ({v.rev}, {local_time(v.time)}, {v.source})", mem.scanner.redact(
        _bytes(mem, v).decode("utf-8", "replace"))


@memory_group.command("diff")
@click.argument("path")
@click.option("--rev", "rev", metavar="REV", default=None,
              help="From this version (default: the one before --to, or before the newest).")
@click.option("--to", "to", metavar="REV", default=None, help="To this version (default: the note now).")
def diff_cmd(path: str, rev: str | None, to: str | None) -> None:
    """A unified diff between two versions of a note (secrets redacted, text escaped)."""
    path = note_name(path)
    mem = _memory()
    _check(mem, path)
    _notice(mem)
    if rev is None:
        try:
            versions = _history(mem).versions(path)
        except HistoryError as exc:
            fail(str(exc))
        if to is not None:
            target = _resolve(mem, path, to)
            earlier = [v for v in versions if v.seq < target.seq and v.rev != target.rev and not v.removed]
        else:
            earlier = [v for v in versions[:-1] if not v.removed]
        if not earlier:
            fail(f"{_shown(mem, path)} has no earlier version to compare with; see `assistant memory log {shlex.quote(path)}`")
        rev = earlier[-1].rev
    a_label, a = _text_of(mem, path, rev)
    b_label, b = _text_of(mem, path, to)
    lines = list(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                      fromfile=a_label, tofile=b_label))
    if not lines:
        click.echo("no differences")
        return
    click.echo(diff("".join(visible(ln.rstrip("\n")) + "\n" for ln in lines), on=wanted(sys.stdout)), nl=False)
    click.echo(invisible_line("".join(lines)), nl=False)


@memory_group.command("revert")
@click.argument("path")
@click.option("--to", "to", metavar="REV", required=True, help="The version to restore (any unique prefix).")
def revert_cmd(path: str, to: str) -> None:
    """Restore a note to an earlier version's exact bytes (also undeletes a removed note).

    Goes through the same checks as `memory write` and is recorded as a new version
    (source `revert`). A version the writer refuses (e.g. one holding a vault value) is not
    restored: the error says why and how to get its bytes with `memory show --raw`.
    """
    path = note_name(path)
    mem = _memory()
    _check(mem, path)
    v = _resolve(mem, path, to)
    data = _bytes(mem, v)
    try:
        now, _text = mem.read_raw(path)
    except NoteError:
        now = None
    if now == data:
        click.echo(f"{_shown(mem, path)} is already at revision {v.rev}; nothing to do")
        return
    try:
        result = mem.write(path, data, force=True, origin=Origin("revert"))
    except NoteError as exc:
        recover = f"assistant memory show {shlex.quote(path)} --rev {v.rev} --raw > FILE"
        fail(f"{_refusal(exc)}. Version {v.rev} stays in history; to get its exact bytes: {_shown(mem, recover)}")
    _report(result)
    click.echo(f"reverted {_shown(mem, result.path)} to {v.rev} ({result.bytes} bytes, "
               f"{'recreated' if result.created else 'now revision ' + result.revision})")


def _size(n: int) -> str:
    for unit, size in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


@memory_group.command("prune")
@click.option("--older-than", "older_than", metavar="DURATION", required=True,
              help="Drop versions older than this (e.g. 90d, 12h); each note's newest version stays.")
def prune_cmd(older_than: str) -> None:
    """Shrink history: drop versions older than DURATION (never a note's newest version)."""
    try:
        seconds = parse_duration(older_than, setting="--older-than")
    except ValueError as exc:
        fail(str(exc))
    mem = _memory()
    _notice(mem)
    try:
        with mem.writers_lock():
            res = _history(mem).prune(seconds)
    except (HistoryError, OSError, TimeoutError) as exc:
        fail(str(exc))
    if not res.versions:
        click.echo(f"nothing to prune: no version older than {older_than} that is not a note's newest")
        return
    click.echo(f"pruned {res.versions} version(s) of {res.notes} note(s) older than {older_than}; "
               f"freed {_size(res.freed)} ({res.objects} stored version file(s)); "
               "each note's newest version is kept")


@memory_group.command("forget")
@click.argument("path")
def forget_cmd(path: str) -> None:
    """Drop every recorded version of one note, for good (asks first on a terminal).

    The note itself is not touched: remove it with `assistant memory rm` first to have it
    gone entirely (otherwise its current text is recorded again as a first version)."""
    path = note_name(path)
    mem = _memory()
    _check(mem, path)
    hist = _history(mem)
    count = len(hist.versions(path))
    if count == 0:
        fail(f"no versions of {_shown(mem, path)} are recorded")
    if sys.stdin.isatty() and not click.confirm(
            f"forget all {count} version(s) of {_shown(mem, path)}? This cannot be undone", err=True):
        fail("nothing forgotten")
    try:
        with mem.writers_lock():
            res = hist.forget(path)
    except (HistoryError, OSError, TimeoutError) as exc:
        fail(str(exc))
    click.echo(f"forgot {res.versions} version(s) of {_shown(mem, path)}; freed {_size(res.freed)} "
               f"({res.objects} stored version file(s); versions shared with other notes stay)")
    try:
        if add_tombstone(mem.ws.state_dir, path):
            click.echo("the next `assistant sync` drops them on your other devices too (a signed tombstone)")
    except SyncStateError as exc:
        click.echo(f"warning: the other devices will not be told ({exc})", err=True)
    try:
        mem.read_raw(path)
        click.echo(f"note: memory/{_shown(mem, path)} still exists; its current text will be recorded "
                   "again as its first version", err=True)
    except NoteError:
        pass


@memory_group.command("stale")
@json_option("A JSON list.")
def stale_cmd(as_json: bool) -> None:
    """Notes whose frontmatter `review_after:` or `expires:` date has passed (nothing is
    ever deleted because of a date)."""
    mem = _memory()
    try:
        entries = mem.entries()
    except NoteError as exc:
        fail(str(exc))
    found = []
    with Root(mem.ws.memory_dir) as root:
        for e in entries:
            if e.problem:
                continue
            try:
                head = root.read_head(e.path, mem.settings.head_bytes)
                text = decode_head(head, len(head) < mem.settings.head_bytes)
            except (OSError, UnicodeDecodeError):
                continue
            flag = staleness(head_meta(text))
            if flag is not None:
                found.append((e, flag))
    if as_json:
        echo_json([{"path": mem.scanner.redact(e.path), "summary": e.summary, **flag.to_json()}
                   for e, flag in found])
        return
    if not found:
        click.echo("no note is due for review or expired")
        return
    for e, flag in found:
        click.echo(_shown(mem, f"{e.path}\t{flag.state}\t{flag.date}\t{e.summary}"))


COMMANDS: list = []   # registered on `assistant memory` above
