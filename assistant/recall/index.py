"""The derived search index of notes (and past conversations): SQLite FTS5 in `state/`.

Guards three properties.

1. Derived, never the source of truth. Everything in `state/index.sqlite3` is rebuilt from
   `memory/` (and `state/transcripts/`) on its own when the file is missing, corrupt, written by
   an older schema, copied from another workspace, or when the vault's set of secrets changed.
   Deleting it loses nothing.
2. Private. Notes are read through the confined `Root` (no link followed: a symlink, FIFO or
   hard-linked note is never indexed), bounded in size, and redacted by the session's scanner
   *before* a byte of them reaches SQLite, so no vault value is ever in the index, its journal
   or its WAL. When the vault gains (or loses) a secret the index is dropped and rebuilt with
   secure_delete on, vacuumed and its WAL truncated, so a value that just became secret does
   not linger in free pages. Only a keyed hash of the secret set is stored, never a value.
3. Fresh and cheap. `sync()` compares (size, mtime_ns, inode, ctime_ns) of every note with what
   was indexed and re-reads only the changed ones; `refresh(paths)` re-reads just the notes a
   watcher reported. Several processes may sync and search at once: WAL mode, a bounded
   busy timeout, and every change applied in one IMMEDIATE transaction of idempotent upserts.

Queries are questions, not FTS syntax: `query_terms()` keeps the meaningful words (no
stopwords, no question words), each quoted, so quotes, `*`, `NEAR`, `:`, parentheses and
AND/OR/NOT are plain words and never a syntax error.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import sqlite3
import stat as _stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from policy.fileio import LinkedFolder, open_folder

from assistant.confine import ConfinementError, Root
from assistant.notes.frontmatter import parse

if TYPE_CHECKING:
    from assistant.secrets.vault import Vault

SCHEMA_VERSION = 3                    # 3: fts_exact, the words as typed (unstemmed)
INDEX_FILE = "index.sqlite3"
SOURCES = ("note", "conversation")
MAX_NOTE_BYTES = 64 * 1024            # what is indexed of one note (its head, when larger)
MAX_TRANSCRIPT_BYTES = 256 * 1024     # what is indexed of one transcript (its head)
MAX_QUERY_CHARS = 2000                # longer queries are cut here
MAX_QUERY_TERMS = 24
MAX_DEPTH = 32
BUSY_TIMEOUT_MS = 5000                # every wait on another process's transaction is bounded
SEARCH_LIMIT_MAX = 50
# A term found in more than this share of the searched documents is common: it tells no note
# from another (per-turn recall needs at least one term that is not).
COMMON_SHARE = 0.5
# bm25 column weights: path, description, category, body
WEIGHTS = (2.0, 4.0, 1.5, 1.0)
# At equal relevance (bm25 equal to this many decimals) a note ranks above a past conversation:
# the note is what the person keeps; a conversation only mentions it.
TIE_DIGITS = 6

# Words that carry no topic: function words, question words, and what people say to an assistant
# about its memory ("what do you remember about ..."). A file name like how-i-work.md can
# therefore never win on "how".
STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren as at be because been before
being below between both but by can cannot could couldn did didn do does doesn doing don down
during each either else ever few for from further get gets got had hadn has hasn have haven
having he her here hers herself him himself his how i if in into is isn it its itself just let
ll me might mine more most must mustn my myself no nor not now of off on once only or other
ought our ours ourselves out over own please re same shall she should shouldn so some such
than that the their theirs them themselves then there these they this those through to too
under until up upon us ve very was wasn we were weren what whats when whens where wheres which
while who whom whos whose why will with won would wouldn yet you your yours yourself yourselves
d s t m o y
remember remembered recall know knew tell told say said think thought anything something
thing things again ever exactly actually really kind sort bit like
much many often long far left going gonna keep supposed right now still ago soon currently lately
moment way stuff need needs want wanted good best whats wheres whos hows im ive id
""".split())

# Words a person uses for the same thing (general English, not any one set of notes): a question
# word in a family also searches its other members. Kept small; each family is one idea.
_FAMILIES = [
    "sibling brother sister", "mum mom mother", "dad father", "gran granny grandma grandmother nan",
    "grandad grandpa grandfather", "kids kid children child son daughter", "wife husband partner spouse",
    "car vehicle", "bike bicycle cycling", "teeth tooth dentist dental", "doctor gp physician",
    "medication medicine meds pills tablets prescription", "job work career employer",
    "home house flat", "holiday vacation trip", "birthday bday born", "phone mobile number",
    "tv television", "boss manager", "novel book", "film movie cinema", "allergy allergic allergies",
    "hypertension pressure", "retirement pension", "appraisal review performance",
    "resolutions goals", "tent tents camping", "brew coffee", "bands music", "dough bread sourdough",
    "rubbish bins waste", "internet broadband wifi", "heating boiler", "gym fitness workout",
    "salary pay wage", "flight flights plane", "exercises physio", "hairdresser haircut barber",
    "restaurant eat dinner", "emergency rainy",
]
SYNONYMS: dict[str, tuple[str, ...]] = {}
for _family in _FAMILIES:
    _words = _family.split()
    for _w in _words:
        SYNONYMS[_w] = tuple(x for x in _words if x != _w)

_WORD = re.compile(r"\w+", re.UNICODE)
_PATH_SPLIT = re.compile(r"[/_.\-]+")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class IndexUnavailable(Exception):
    """The index cannot be opened or rebuilt. The message says why; the catalog still works."""


@dataclass(frozen=True)
class Hit:
    """One search result. `score`: higher is better (negated bm25, or fused rank score)."""

    path: str
    source: str          # "note" | "conversation"
    score: float
    snippet: str
    description: str = ""

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "source": self.source, "score": round(self.score, 4),
                "snippet": self.snippet, "description": self.description}


@dataclass(frozen=True)
class SyncStats:
    scanned: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    rebuilt: bool = False

    @property
    def touched(self) -> int:
        return self.added + self.changed + self.removed


# (size, mtime_ns, inode, ctime_ns) of a file: a plain tuple, compared 10,000 times per sync
_Meta = tuple


def _meta_of(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


# --- queries -----------------------------------------------------------------------------------

def query_terms(text: str) -> list[str]:
    """The meaningful words of a question, lowercased, deduplicated, in order, bounded."""
    if not isinstance(text, str):
        return []
    out: list[str] = []
    for word in _WORD.findall(text[:MAX_QUERY_CHARS].lower()):
        word = word.strip("_")
        if not word or word in STOPWORDS or word in out:
            continue
        if len(word) == 1 and not word.isdigit():
            continue
        out.append(word)
        if len(out) >= MAX_QUERY_TERMS:
            break
    extra = [x for w in out for x in SYNONYMS.get(w, ()) if x not in out]
    for word in extra:
        if len(out) >= MAX_QUERY_TERMS:
            break
        if word not in out:
            out.append(word)
    return out


def fts_query(terms: Sequence[str]) -> str:
    """Terms as an FTS5 query: each a quoted string (so nothing in it is syntax), OR-ed."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


# --- the secret set, as a keyed hash -----------------------------------------------------------

def secret_fingerprint(secrets: Mapping[str, str], key: bytes = b"") -> str:
    """A keyed hash of the vault's names and values (computed in memory; never a value stored).
    `key` is the vault's derived key, so the stored hash cannot be used to test guesses."""
    mac = hmac.new(b"assistant-index-secrets\x00" + key, digestmod=hashlib.sha256)
    for name in sorted(secrets):
        mac.update(json.dumps([name, secrets[name]]).encode("utf-8", "surrogatepass") + b"\n")
    return mac.hexdigest()


def vault_fingerprint(vault: "Vault | None") -> str:
    """secret_fingerprint of an unlocked assistant.secrets.vault.Vault (or of no secrets), keyed with the
    vault's derived key (never stored, never shown)."""
    if vault is None:
        return secret_fingerprint({})
    return secret_fingerprint(vault.secrets(), vault._key)  # noqa: SLF001 - the key stays in memory


# --- walking memory/ ---------------------------------------------------------------------------

def _open_folder(path: Path | str) -> int | None:
    """A descriptor of the folder, None if there is none."""
    try:
        return os.open(os.fspath(path), os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None


def scan_notes(memory_dir: Path | str) -> dict[str, _Meta]:
    """{relpath: metadata} of every regular `*.md` note (no link followed, dot names skipped).
    Symlinks, FIFOs and other non-regular entries are left out: they are never indexed."""
    out: dict[str, _Meta] = {}
    root = _open_folder(memory_dir)
    if root is None:
        return out
    try:
        _walk(root, "", 0, os.fstat(root).st_dev, out)
    finally:
        os.close(root)
    return out


def _walk(fd: int, prefix: str, depth: int, dev: int, out: dict[str, _Meta]) -> None:
    try:
        with os.scandir(fd) as it:
            entries = list(it)
    except OSError:
        return
    for e in entries:
        name = e.name
        if name.startswith("."):
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        rel = f"{prefix}/{name}" if prefix else name
        if _stat.S_ISDIR(st.st_mode):
            if depth + 1 >= MAX_DEPTH:
                continue
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue
            try:
                if os.fstat(sub).st_dev == dev:
                    _walk(sub, rel, depth + 1, dev, out)
            finally:
                os.close(sub)
        elif name.endswith(".md") and _stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
            out[rel] = _meta_of(st)


def scan_transcripts(transcripts_dir: Path | str) -> dict[str, _Meta]:
    out: dict[str, _Meta] = {}
    fd = _open_folder(transcripts_dir)
    if fd is None:
        return out
    try:
        with os.scandir(fd) as it:
            for e in it:
                if e.name.startswith(".") or not e.name.endswith(".jsonl"):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if _stat.S_ISREG(st.st_mode):
                    out[e.name] = _meta_of(st)
    finally:
        os.close(fd)
    return out


# --- documents ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Doc:
    path_words: str
    description: str
    category: str
    body: str


def _path_words(rel: str) -> str:
    stem = rel[:-3] if rel.endswith(".md") else rel
    return " ".join(w for w in _PATH_SPLIT.split(stem) if w)


def note_doc(rel: str, data: bytes, truncated: bool, redact: Callable[[str], str],
             redact_prefix: Callable[[str], str]) -> _Doc:
    """A note's fields, redacted. A head cut at the size bound is redacted as a prefix (a secret
    cut in two must not be stored in part)."""
    text = data.decode("utf-8", "replace").replace("\x00", " ")
    text = redact_prefix(text) if truncated else redact(text)
    note = parse(text)
    desc = note.meta.get("description", "") if note.has_frontmatter else ""
    cat = note.meta.get("category", "") if note.has_frontmatter else ""
    extra = [v for k, v in note.meta.items() if k not in ("description", "category")] if note.has_frontmatter else []
    body = note.body if note.has_frontmatter else text
    if extra:   # other frontmatter values (tags, aliases) are searchable as body text
        body = " ".join(extra) + "\n" + body
    return _Doc(redact(_path_words(rel)), desc, cat, body)


def transcript_doc(name: str, data: bytes, redact: Callable[[str], str]) -> _Doc:
    """A conversation's words: what the person said and what the assistant replied."""
    lines: list[str] = []
    for raw in data.decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(raw)
        except ValueError:
            continue          # the cut last line of a bounded head, or a torn write
        if not isinstance(event, dict):
            continue
        kind, text = event.get("event"), event.get("text")
        if kind in ("user", "reply") and isinstance(text, str) and text.strip():
            lines.append(("you: " if kind == "user" else "assistant: ") + text.strip())
    body = redact("\n".join(lines))
    return _Doc(redact(name.removesuffix(".jsonl")), "", "conversation", body)


# --- the index ---------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs(
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,
    UNIQUE(source, path));
CREATE TABLE IF NOT EXISTS vectors(id INTEGER PRIMARY KEY, model TEXT NOT NULL, digest TEXT NOT NULL, vec BLOB NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    path, description, category, body, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS fts_exact USING fts5(
    path, description, category, body, tokenize = 'unicode61 remove_diacritics 2');
"""


class Index:
    """One workspace's search index. Cheap to construct; the database is opened on first use.

    `memory_dir`, `transcripts_dir`, `state_dir`: the workspace's folders. `redact`/
    `redact_prefix`: the session scanner's. `fingerprint`: secret_fingerprint of the vault.
    `notice`: called with a one-line message when the index had to be rebuilt."""

    def __init__(self, state_dir: Path | str, memory_dir: Path | str, transcripts_dir: Path | str | None = None, *,
                 redact: Callable[[str], str] = lambda s: s, redact_prefix: Callable[[str], str] | None = None,
                 fingerprint: str = "", notice: Callable[[str], None] | None = None,
                 identity: str | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.memory_dir = Path(memory_dir)
        self.transcripts_dir = Path(transcripts_dir) if transcripts_dir is not None else None
        self.path = self.state_dir / INDEX_FILE
        self.redact = redact
        self.redact_prefix = redact_prefix or redact
        self.fingerprint = fingerprint or secret_fingerprint({})
        self.notice = notice or (lambda message: None)
        self._identity = identity
        self._db: sqlite3.Connection | None = None
        self._state_fd: int | None = None
        self._lock = threading.RLock()
        self._pending: set[str] = set()
        self._known: dict[str, tuple[int, dict]] = {}     # source -> (data_version, indexed metadata)
        self._df: tuple[tuple[int, int], int, dict[str, int]] | None = None   # (version, docs, term -> df)
        # (version, sources) -> (documents of those sources, term -> documents holding it)
        self._source_df: dict[tuple[tuple[int, int], tuple[str, ...]], tuple[int, dict[str, int]]] = {}
        self._writes = 0                                   # our own commits (data_version ignores them)
        self._watched = False

    # -- opening ------------------------------------------------------------------------------

    def identity(self) -> str:
        """Which workspace this index belongs to: the memory folder's device, inode and path."""
        if self._identity is None:
            try:
                st = os.stat(self.memory_dir)
                self._identity = f"{st.st_dev}:{st.st_ino}:{os.path.realpath(self.memory_dir)}"
            except OSError:
                self._identity = os.path.realpath(self.memory_dir)
        return self._identity

    def _state(self) -> int:
        """A descriptor of state/, reached from the workspace without following a link (held
        while the database is open: SQLite opens the index and its -wal/-shm through it)."""
        if self._state_fd is None:
            try:
                self._state_fd = open_folder(self.state_dir.parent, self.state_dir.name, create=True)
            except LinkedFolder as exc:
                raise IndexUnavailable(f"the search index is not opened: {exc.strerror}") from None
        return self._state_fd

    def _where(self, dfd: int) -> str:
        """The index's name for SQLite: through the held descriptor where /proc shows it (no
        path string is resolved again), else the path (state/ was just checked to be no link)."""
        via = f"/proc/self/fd/{dfd}"
        return f"{via}/{INDEX_FILE}" if os.path.isdir(via) else str(self.path)

    def _connect(self) -> sqlite3.Connection:
        dfd = self._state()
        try:
            st = os.stat(INDEX_FILE, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
            # a WAL left beside a deleted index belongs to the old file: never replay it into a new one
            for suffix in ("-wal", "-shm", "-journal"):
                try:
                    os.unlink(INDEX_FILE + suffix, dir_fd=dfd)
                except FileNotFoundError:
                    pass
        if st is not None and not _stat.S_ISREG(st.st_mode):
            raise IndexUnavailable(f"{self.path} is not a regular file; remove it and the index is rebuilt")
        fd = os.open(INDEX_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        os.close(fd)
        db = sqlite3.connect(self._where(dfd), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                             check_same_thread=False)
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA secure_delete = ON")
            mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            self._ensure_schema(db)
        except BaseException:
            db.close()
            raise
        return db

    def _meta(self, db: sqlite3.Connection) -> dict[str, str]:
        try:
            return dict(db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return {}
            raise

    def _wanted_meta(self) -> dict[str, str]:
        return {"schema": str(SCHEMA_VERSION), "workspace": self.identity(), "secrets": self.fingerprint}

    def _ensure_schema(self, db: sqlite3.Connection) -> None:
        want = self._wanted_meta()
        if self._meta(db) == want:
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            have = self._meta(db)
            if have == want:
                db.execute("COMMIT")
                return
            stale = bool(have)
            for table in ("fts", "fts_exact", "vectors", "docs", "meta"):
                db.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(want.items()))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        if stale:
            why = ("the vault's secrets changed" if have.get("secrets") != want["secrets"]
                   and have.get("workspace") == want["workspace"] and have.get("schema") == want["schema"]
                   else "it was built by another version or for another workspace")
            self.notice(f"search index rebuilt: {why}")
            self._scrub(db)

    @staticmethod
    def _scrub(db: sqlite3.Connection) -> None:
        """Leave nothing of the old content in free pages or the WAL (best effort while another
        process reads: secure_delete already zeroed what was dropped)."""
        try:
            db.execute("VACUUM")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError:
            pass

    def _open(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        try:
            self._db = self._connect()
        except IndexUnavailable:
            raise
        except sqlite3.OperationalError as exc:
            # locked, no permission, disk full...: the file may be fine and in use by another
            # process, so it is never deleted for this
            raise IndexUnavailable(_operational(exc, self.path)) from None
        except (sqlite3.DatabaseError, OSError) as exc:   # not a database, malformed: rebuild it
            self._db = self._recreate(exc)
        return self._db

    def _remove_files(self) -> None:
        dfd = self._state()
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(INDEX_FILE + suffix, dir_fd=dfd)
            except FileNotFoundError:
                pass

    def _recreate(self, exc: BaseException) -> sqlite3.Connection:
        """The index file cannot be used: remove it and build a new one (one-line notice)."""
        self._known.clear()
        self._df = None
        self._source_df = {}
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        try:
            self._remove_files()
            db = self._connect()
        except (sqlite3.Error, OSError, IndexUnavailable) as again:
            raise IndexUnavailable(f"the search index {self.path} cannot be opened ({why}) nor rebuilt "
                                   f"({again}); answering from the catalog only") from None
        self.notice(f"search index could not be opened ({why}); rebuilt it")
        return db

    def _guarded(self, work: Callable[[sqlite3.Connection], object]) -> object:
        """Run `work` on the database; a corrupt file is rebuilt once and the work retried."""
        with self._lock:
            db = self._open()
            try:
                return work(db)
            except sqlite3.DatabaseError as exc:
                if db.in_transaction:
                    try:
                        db.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                if isinstance(exc, sqlite3.OperationalError):
                    # not corruption: reconnect once (the schema is checked again), else say why
                    self.close()
                    try:
                        return work(self._open())
                    except sqlite3.OperationalError as again:
                        raise IndexUnavailable(_operational(again, self.path)) from None
                self._db = self._recreate(exc)
                return work(self._db)

    def close(self) -> None:
        with self._lock:
            self._known.clear()
            self._df = None
            self._source_df = {}
            try:
                if self._db is not None:
                    try:
                        self._db.close()
                    finally:
                        self._db = None
            finally:
                if self._state_fd is not None:
                    os.close(self._state_fd)
                    self._state_fd = None

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- freshness ----------------------------------------------------------------------------

    def sync(self, *, conversations: bool = True, progress: Callable[[int, int], None] | None = None) -> SyncStats:
        """Bring the index in line with memory/ (and the transcripts) by metadata; re-read only
        what changed. A watcher's pending paths are covered by this too."""
        with self._lock:
            self._pending.clear()
        notes = scan_notes(self.memory_dir)
        result = self._guarded(lambda db: self._apply(db, "note", notes, None, progress))
        assert isinstance(result, SyncStats)
        if conversations:
            more = self.sync_conversations()
            result = SyncStats(result.scanned + more.scanned, result.added + more.added,
                               result.changed + more.changed, result.removed + more.removed)
        return result

    def sync_conversations(self, *, skip: str | None = None) -> SyncStats:
        """Bring the conversations (state/transcripts/*.jsonl) in line, by metadata. `skip`: the
        asking session's own transcript (never one of its hits), neither indexed nor dropped
        here: it grows with every call of the session, and re-indexing it at each search would
        cost more than the search."""
        if self.transcripts_dir is None:
            return SyncStats()
        talks = scan_transcripts(self.transcripts_dir)
        ignore = frozenset((skip,)) if skip else frozenset()
        talks.pop(skip or "", None)
        result = self._guarded(lambda db: self._apply(db, "conversation", talks, None, None, ignore))
        assert isinstance(result, SyncStats)
        return result

    def note_changes(self, paths: Iterable[str]) -> None:
        """A watcher saw these notes change: the next `refresh()` re-checks just them. From the
        first call on, `refresh()` trusts the watcher and does no full sync."""
        with self._lock:
            self._watched = True
            self._pending.update(p for p in paths if isinstance(p, str))

    def own_writes(self, paths: Iterable[str]) -> None:
        """This session's writer changed these notes: the next `refresh()` re-reads them even
        before the watcher (if any) reports them, so a search right after a write finds it.
        Unlike note_changes, it does not make `refresh()` trust a watcher."""
        with self._lock:
            self._pending.update(p for p in paths if isinstance(p, str))

    def watch_lost(self) -> None:
        """The watcher feeding this index stopped: `refresh()` goes back to full syncs."""
        with self._lock:
            self._watched = False

    def refresh(self) -> SyncStats:
        """Fresh enough for per-turn recall: the watcher's pending notes only, when a watcher
        feeds this index; otherwise a full metadata sync (notes only)."""
        with self._lock:
            if not self._watched:
                return self.sync(conversations=False)
            pending, self._pending = sorted(self._pending), set()
        if not pending:
            return SyncStats()
        current: dict[str, _Meta] = {}
        for rel in pending:
            meta = _stat_note(self.memory_dir, rel)
            if meta is not None:
                current[rel] = meta
        result = self._guarded(lambda db: self._apply(db, "note", current, pending, None))
        assert isinstance(result, SyncStats)
        return result

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> SyncStats:
        """Drop everything and index from scratch (`assistant memory reindex`)."""
        def drop(db: sqlite3.Connection) -> None:
            self._known.clear()
            self._df = None
            self._source_df = {}
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM fts")
            db.execute("DELETE FROM fts_exact")
            db.execute("DELETE FROM vectors")
            db.execute("DELETE FROM docs")
            db.execute("COMMIT")
            self._scrub(db)
        self._guarded(drop)
        stats = self.sync(progress=progress)
        return SyncStats(stats.scanned, stats.added, stats.changed, stats.removed, rebuilt=True)

    def _apply(self, db: sqlite3.Connection, source: str, current: dict[str, _Meta], only: Sequence[str] | None,
               progress: Callable[[int, int], None] | None, ignore: frozenset[str] = frozenset()) -> SyncStats:
        def known_rows(paths: Iterable[str] | None) -> dict[str, tuple[int, _Meta]]:
            if paths is None:
                # The whole table, unless nobody committed since we last read it (data_version
                # changes with every other connection's commit; our own commits drop the cache).
                version = db.execute("PRAGMA data_version").fetchone()[0]
                cached = self._known.get(source)
                if cached is not None and cached[0] == version:
                    return cached[1]
                rows = db.execute("SELECT path, id, size, mtime_ns, ino, ctime_ns FROM docs WHERE source = ?",
                                  (source,)).fetchall()
                known = {r[0]: (r[1], r[2:]) for r in rows}
                self._known[source] = (version, known)
                return known
            else:
                rows = []
                for rel in paths:
                    rows.extend(db.execute("SELECT path, id, size, mtime_ns, ino, ctime_ns FROM docs "
                                           "WHERE source = ? AND path = ?", (source, rel)).fetchall())
            return {r[0]: (r[1], r[2:]) for r in rows}

        def diff(known: dict[str, tuple[int, _Meta]], paths: Iterable[str]) -> tuple[list[str], list[str], list[str]]:
            added, changed, removed = [], [], []
            for p in paths:
                have, row = current.get(p), known.get(p)
                if row is None:
                    if have is not None:
                        added.append(p)
                elif have is None:
                    removed.append(p)
                elif row[1] != have:
                    changed.append(p)
            return added, changed, removed

        known = known_rows(only)
        added, changed, removed = diff(known, (set(current) | set(known)) - ignore)
        if not (added or changed or removed):
            return SyncStats(scanned=len(current))
        self._known.pop(source, None)
        self._writes += 1
        db.execute("BEGIN IMMEDIATE")
        try:
            # again under the write lock, for just these paths: another process may have synced them
            candidates = added + changed + removed
            known = known_rows(candidates if len(candidates) < 256 else None)
            added, changed, removed = diff(known, candidates)
            for rel in removed:
                doc_id = known[rel][0]
                db.execute("DELETE FROM fts WHERE rowid = ?", (doc_id,))
                db.execute("DELETE FROM fts_exact WHERE rowid = ?", (doc_id,))
                db.execute("DELETE FROM vectors WHERE id = ?", (doc_id,))
                db.execute("DELETE FROM docs WHERE id = ?", (doc_id,))
            todo = sorted(added + changed)
            folder = self.memory_dir if source == "note" else self.transcripts_dir
            root = Root(folder) if todo and folder is not None else None
            try:
                for n, rel in enumerate(todo, 1):
                    doc = self._read(root, source, rel) if root is not None else None
                    meta = current[rel]
                    if rel in known:
                        doc_id = known[rel][0]
                        db.execute("DELETE FROM fts WHERE rowid = ?", (doc_id,))
                        db.execute("DELETE FROM fts_exact WHERE rowid = ?", (doc_id,))
                        if doc is None:
                            db.execute("DELETE FROM docs WHERE id = ?", (doc_id,))
                            continue
                        db.execute("UPDATE docs SET size=?, mtime_ns=?, ino=?, ctime_ns=? WHERE id=?",
                                   (*meta, doc_id))
                    else:
                        if doc is None:
                            continue
                        cur = db.execute("INSERT INTO docs(source, path, size, mtime_ns, ino, ctime_ns) "
                                         "VALUES (?, ?, ?, ?, ?, ?)",
                                         (source, rel, *meta))
                        doc_id = cur.lastrowid
                    for table in ("fts", "fts_exact"):
                        db.execute(f"INSERT INTO {table}(rowid, path, description, category, body) "
                                   "VALUES (?, ?, ?, ?, ?)",
                                   (doc_id, doc.path_words, doc.description, doc.category, doc.body))
                    if progress is not None and (n % 200 == 0 or n == len(todo)):
                        progress(n, len(todo))
            finally:
                if root is not None:
                    root.close()
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return SyncStats(scanned=len(current), added=len(added), changed=len(changed), removed=len(removed))

    def _read(self, root: Root, source: str, rel: str) -> _Doc | None:
        """The redacted document of one file, or None when it cannot be read as a plain file
        (gone, a link swapped in, a FIFO, hard-linked, not readable): such a file is not indexed."""
        limit = MAX_NOTE_BYTES if source == "note" else MAX_TRANSCRIPT_BYTES
        try:
            data = root.read_head(rel, limit + 1)
        except (OSError, ConfinementError, ValueError):
            return None
        truncated = len(data) > limit
        data = data[:limit]
        if source == "note":
            return note_doc(rel, data, truncated, self.redact, self.redact_prefix)
        return transcript_doc(rel, data, self.redact)

    # -- searching ----------------------------------------------------------------------------

    def search(self, query: str, *, limit: int = 5, offset: int = 0, sources: Sequence[str] = SOURCES,
               snippet_tokens: int = 24, terms: Sequence[str] | None = None) -> list[Hit]:
        """Best matches first. An empty list when nothing matches (or the query has no meaningful
        words). `terms`: search these (from query_terms) instead of the query's own. Does not
        sync: call sync()/refresh() first."""
        terms = list(terms) if terms is not None else query_terms(query)
        if not terms:
            return []
        limit = max(1, min(int(limit), SEARCH_LIMIT_MAX))
        offset = max(0, int(offset))
        srcs = [s for s in sources if s in SOURCES] or list(SOURCES)
        marks = ",".join("?" * len(srcs))
        w = ", ".join(f"{x:g}" for x in WEIGHTS)
        # Rank first, then make snippets for the few rows kept: SQLite would otherwise compute a
        # snippet for every matching row before sorting. The words match stemmed (fts: "meeting"
        # finds "meet" too) and as typed (fts_exact, unstemmed): a note holding the word as the
        # person or the model wrote it ranks above one that only shares its stem.
        sql = (f"SELECT fts.rowid, docs.path, docs.source, bm25(fts, {w}) + COALESCE(exact.erank, 0) AS score "
               f"FROM fts JOIN docs ON docs.id = fts.rowid "
               f"LEFT JOIN (SELECT rowid, bm25(fts_exact, {w}) AS erank FROM fts_exact WHERE fts_exact MATCH ?) "
               f"AS exact ON exact.rowid = fts.rowid "
               f"WHERE fts MATCH ? AND docs.source IN ({marks}) "
               f"ORDER BY round(score, {TIE_DIGITS}), docs.source != 'note', score, docs.path LIMIT ? OFFSET ?")
        snip = (f"SELECT description, snippet(fts, 3, '', '', ' … ', {int(snippet_tokens)}) FROM fts "
                f"WHERE fts MATCH ? AND rowid = ?")

        def run(db: sqlite3.Connection) -> list[Hit]:
            match = fts_query(self._selective(db, terms))
            out = []
            for rowid, path, source, rank in db.execute(sql, (match, match, *srcs, limit, offset)).fetchall():
                desc, text = db.execute(snip, (match, rowid)).fetchone() or ("", "")
                out.append(Hit(path=path, source=source, score=-float(rank), snippet=_one_line(text or desc or ""),
                               description=desc or ""))
            return out
        result = self._guarded(run)
        assert isinstance(result, list)
        return result

    def _selective(self, db: sqlite3.Connection, terms: list[str]) -> list[str]:
        """The terms without those found in more than half of all documents, unless every term
        is that common. Such a term has a bm25 weight of about zero (FTS5 floors its idf), so
        leaving it out keeps the ranking and spares scoring every document that holds it."""
        key = (db.execute("PRAGMA data_version").fetchone()[0], self._writes)
        if self._df is None or self._df[0] != key:
            self._df = (key, db.execute("SELECT count(*) FROM docs").fetchone()[0], {})
        _, total, df = self._df
        if total < 20:
            return terms
        for t in terms:
            if t not in df:
                df[t] = db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (fts_query([t]),)).fetchone()[0]
        rare = [t for t in terms if df[t] * 2 <= total]
        return rare or terms

    def distinctive_terms(self, query: str, *, sources: Sequence[str] = SOURCES,
                          share: float = COMMON_SHARE) -> list[str]:
        """The query's terms that tell notes apart: found in at least one of the searched
        documents and in at most `share` of them (at least one document: a one-note workspace
        still has a match). The same share serves 5 notes and 10,000: document frequency
        relative to the corpus, where a BM25 score moves with corpus size. [] when no term is
        distinctive (nothing matches well). Does not sync."""
        terms = query_terms(query)
        if not terms:
            return []
        srcs = tuple(s for s in SOURCES if s in sources) or SOURCES
        marks = ",".join("?" * len(srcs))

        def run(db: sqlite3.Connection) -> list[str]:
            key = ((db.execute("PRAGMA data_version").fetchone()[0], self._writes), srcs)
            if key not in self._source_df:
                self._source_df = {key: (db.execute(f"SELECT count(*) FROM docs WHERE source IN ({marks})",
                                                    srcs).fetchone()[0], {})}
            total, df = self._source_df[key]
            most = max(1, int(total * share))
            for t in terms:
                if t not in df:
                    df[t] = db.execute(f"SELECT count(*) FROM fts JOIN docs ON docs.id = fts.rowid "
                                       f"WHERE fts MATCH ? AND docs.source IN ({marks})",
                                       (fts_query([t]), *srcs)).fetchone()[0]
            return [t for t in terms if 1 <= df[t] <= most]
        result = self._guarded(run)
        assert isinstance(result, list)
        return result

    def bodies(self, paths: Sequence[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, str]]:
        """{(source, path): (description, body)} as indexed (already redacted)."""
        def run(db: sqlite3.Connection) -> dict[tuple[str, str], tuple[str, str]]:
            out = {}
            for source, path in paths:
                row = db.execute("SELECT fts.description, fts.body FROM docs JOIN fts ON fts.rowid = docs.id "
                                 "WHERE docs.source = ? AND docs.path = ?", (source, path)).fetchone()
                if row is not None:
                    out[(source, path)] = (row[0] or "", row[1] or "")
            return out
        result = self._guarded(run)
        assert isinstance(result, dict)
        return result

    def count(self, source: str = "note") -> int:
        result = self._guarded(lambda db: db.execute("SELECT count(*) FROM docs WHERE source = ?",
                                                     (source,)).fetchone()[0])
        return int(result)  # type: ignore[arg-type]


def _stat_note(memory_dir: Path, rel: str) -> _Meta | None:
    """Metadata of one note if it is a regular, singly linked file reached without links."""
    parts = rel.split("/")
    if any(not p or p.startswith(".") or p in ("..",) for p in parts) or not rel.endswith(".md"):
        return None
    try:
        fd = os.open(os.fspath(memory_dir), os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
        st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
    except OSError:
        return None
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    if not _stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        return None
    return _meta_of(st)


def _operational(exc: sqlite3.OperationalError, path: Path) -> str:
    if "locked" in str(exc) or "busy" in str(exc):
        return (f"the search index is busy (another process held it for over {BUSY_TIMEOUT_MS / 1000:g} s); "
                "try again")
    return f"the search index {path} cannot be used: {exc}"


def _one_line(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def timed(fn: Callable[[], object]) -> tuple[object, float]:
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


__all__ = ["Hit", "Index", "IndexUnavailable", "SCHEMA_VERSION", "STOPWORDS", "SyncStats", "fts_query",
           "query_terms", "scan_notes", "secret_fingerprint", "vault_fingerprint"]
