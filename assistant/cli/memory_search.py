"""`assistant memory search` and `assistant memory reindex`: the person's view of the search index.

Guards what the person sees of the derived index: results come from a session opened at the
composition root (so the index is redacted by the vault's scanner), the index is synced by
metadata before every search (a hand edit is found at once, no manual step), and every name or
snippet is escaped for the terminal. An index that cannot be used is a clear error naming why.
"""

from __future__ import annotations

import sys

import click

from assistant.recall.index import IndexUnavailable, query_terms
from assistant.session import SessionError, open_session
from assistant.cli.common import (
    echo_json, fail, get_workspace, json_option, visible, workspace_option,
)


def _session():
    try:
        return open_session(get_workspace(), "watched", kind="cli", interactive=True, transcript=False)
    except SessionError as exc:
        fail(str(exc))


def _notices(session) -> None:
    for line in session.recall.notices:
        click.echo(f"notice: {visible(line)}", err=True)
    session.recall.notices.clear()


@click.command("search")
@workspace_option
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", type=click.IntRange(1, 50), default=10, show_default=True,
              help="Most results to show.")
@json_option(
    "A JSON list, best first: {path, score (higher is better), snippet, source, description}.")
def search_cmd(query: tuple[str, ...], limit: int, as_json: bool) -> None:
    """Search your notes and past conversations, best match first.

    QUERY is plain words or a question ("when is Lina's birthday"); question words and stopwords
    are ignored and words are stemmed. Quotes, *, NEAR, AND/OR/NOT are plain words here.
    The index in state/ is brought up to date with memory/ first.
    """
    text = " ".join(query)
    session = _session()
    with session:
        if not query_terms(text):
            if as_json:
                echo_json([])
                return
            fail(f"no words to search for in {visible(text)!r} (question words and stopwords are ignored)")
        try:
            hits = session.recall.search(text, limit=limit)
        except IndexUnavailable as exc:
            _notices(session)
            fail(str(exc))
        _notices(session)
        if as_json:
            echo_json([h.to_json() for h in hits])
            return
        if not hits:
            click.echo(f"no notes or conversations match {visible(text)!r}", err=True)
            sys.exit(1)
        for h in hits:
            where = visible(h.path) + ("" if h.source == "note" else " (conversation)")
            click.echo(f"{h.score:7.2f}  {where}")
            if h.snippet:
                click.echo(f"         {visible(h.snippet)}")


@click.command("reindex")
@workspace_option
def reindex_cmd() -> None:
    """Rebuild the search index (state/index.sqlite3) from scratch.

    Never needed for correctness: the index follows memory/ on its own. Use it after restoring
    notes from a backup or if search looks wrong.
    """
    session = _session()
    with session:
        bar = None
        if sys.stderr.isatty():
            def progress(done: int, total: int) -> None:
                nonlocal bar
                if total < 200:
                    return
                if bar is None:
                    bar = click.progressbar(length=total, label="indexing", file=sys.stderr)
                    bar.__enter__()
                bar.update(done - bar.pos)
        else:
            progress = None  # type: ignore[assignment]
        try:
            stats = session.index.rebuild(progress=progress)
        except IndexUnavailable as exc:
            fail(str(exc))
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
        _notices(session)
        notes, talks = session.index.count("note"), session.index.count("conversation")
        click.echo(f"reindexed {notes} note{'s' if notes != 1 else ''} and {talks} "
                   f"conversation{'s' if talks != 1 else ''} into {session.index.path}")
        del stats
