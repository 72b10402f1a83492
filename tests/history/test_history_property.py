"""Property: whatever sequence of model writes, person writes, hand edits, removals and reverts
happens (even cut by SIGKILL at a random instant), every version the project wrote or noticed
is retrievable byte-exact, `revert` restores it, and the log is in order with the right sources."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import history_driver
from assistant.cli import main
from assistant.notes.history import History
from assistant.notes.frontmatter import revision as keyed_revision
from assistant.secrets.revision_key import load_key


def revision_for(ws):
    """The workspace's keyed revision function (issue 10 item 6), as Memory.revision computes it."""
    key = load_key(Path(ws) / "state")
    return lambda data: keyed_revision(data, key)
from assistant.session import open_session

DRIVER = Path(history_driver.__file__)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# `ws` (the example workspace, a Path) comes from tests/conftest.py

def journal(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.endswith("}")]


def settle(ws: Path) -> History:
    """A new session (what a person's next command does): recovery + hand edits noticed."""
    with open_session(ws, "watched", kind="api", transcript=False) as s:
        s.memory.notice()
    h = History(ws / "history", revision=revision_for(ws))
    return h


def cli(ws: Path, *args: str):
    return CliRunner().invoke(main, ["-w", str(ws), "memory", *args], catch_exceptions=False)


def check_integrity(ws: Path, h: History) -> list:
    versions = h.versions()
    assert h.skipped_lines() == 0
    assert [v.seq for v in versions] == list(range(1, len(versions) + 1))
    assert [v.time for v in versions] == sorted(v.time for v in versions)   # in order
    for v in versions:
        data = h.object_bytes(v.sha256)                                   # byte-exact, never missing
        assert sha(data) == v.sha256 and len(data) == v.bytes and revision_for(ws)(data) == v.rev
    # the newest version of every note is what is on disk now
    for p in h.paths():
        head = h.head(p)
        disk = ws / "memory" / p
        if head.removed:
            assert not disk.exists(), p
        else:
            assert disk.read_bytes() == h.object_bytes(head.sha256), p
    return versions


def project_entries(versions) -> list[tuple[str, str, str]]:
    return [(v.source, v.path, v.sha256) for v in versions if v.source != "hand-edit" and not v.baseline]


def expected_from_journal(rows: list[dict]) -> list[tuple[str, str, str]]:
    return [(r["source"], r["path"], r["sha"]) for r in rows if r["op"] == "done"]


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_random_sequences_keep_every_version(ws, tmp_path, seed):
    jpath = tmp_path / "journal.jsonl"
    history_driver.run(str(ws), seed, 60, str(jpath))
    rows = journal(jpath)
    h = settle(ws)
    versions = check_integrity(ws, h)
    # every project write is logged, in order, with its source
    assert project_entries(versions) == expected_from_journal(rows)
    # the model's writes carry the model and what the turn had read
    for v in versions:
        if v.source == "assistant":
            assert v.model == "script:test" and v.sources == ("web:example.org",)
        if v.source in ("assistant", "person", "revert", "removal") and not v.grant == "noticed: removed outside the assistant":
            assert v.run.startswith("2") and "-api-" in v.run
    # a hand edit followed by a project write of that note (or the end) was noticed, byte-exact
    disk: dict[str, str | None] = {}
    head: dict[str, str | None] = {}
    expected_hand = []
    for r in rows:
        p = r["path"]
        if r["op"] == "hand":
            disk[p] = r["sha"]
        elif r["op"] == "begin":
            if disk.get(p) != head.get(p) and disk.get(p) is not None:
                expected_hand.append((p, disk[p]))
        elif r["op"] == "done":
            head[p] = None if r["source"] == "removal" else r["sha"]
            disk[p] = head[p]
    for p in sorted(disk):      # the last ones are noticed by the next session, in path order
        if disk[p] is not None and disk[p] != head.get(p):
            expected_hand.append((p, disk[p]))
    hand = [(v.path, v.sha256) for v in versions if v.source == "hand-edit" and not v.baseline and not v.removed]
    assert hand == expected_hand
    # `memory show --raw` gives each version's exact bytes; `revert` restores one
    rnd = random.Random(seed)
    for v in rnd.sample([v for v in versions if not v.removed], 5):
        r = CliRunner().invoke(main, ["-w", str(ws), "memory", "show", v.path, "--rev", v.rev, "--raw"])
        assert r.exit_code == 0 and r.stdout_bytes == h.object_bytes(v.sha256)
    target = rnd.choice([v for v in versions if not v.removed])
    before = len(h.versions())
    r = cli(ws, "revert", target.path, "--to", target.rev)
    assert r.exit_code == 0, r.output
    assert (ws / "memory" / target.path).read_bytes() == h.object_bytes(target.sha256)
    after = h.versions()
    if "nothing to do" not in r.output:
        assert len(after) == before + 1 and after[-1].source == "revert" and after[-1].sha256 == target.sha256


def _kill_run(ws: Path, jpath: Path, seed: int) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, str(DRIVER), str(ws), str(seed), "100000", str(jpath)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    rnd = random.Random(seed)
    # wait until it is writing, then kill it at a random instant
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(journal(jpath)) < 5 and proc.poll() is None:
        time.sleep(0.01)
    time.sleep(rnd.uniform(0.0, 0.8))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    proc.stderr.close()


@pytest.mark.parametrize("seed", [11, 12, 13, 14, 15])
def test_kill_9_at_a_random_instant_loses_nothing(ws, tmp_path, seed):
    jpath = tmp_path / "journal.jsonl"
    for round_ in range(2):    # killed twice, each time followed by more work
        _kill_run(ws, jpath, seed * 10 + round_)
    rows = journal(jpath)
    h = settle(ws)
    versions = check_integrity(ws, h)
    got = project_entries(versions)
    want = expected_from_journal(rows)
    # every finished write is there, in order, with its source; a write cut by the kill is
    # either absent or logged with *its* source (never mistaken for a hand edit)
    begun = [(r["source"], r["path"], r["sha"]) for r in rows if r["op"] == "begin"]
    # `want` appears in `got` in order (a subsequence); what is left over are cut writes. (A cut
    # write may equal a finished one, e.g. two reverts to the same bytes, so membership alone
    # cannot tell them apart: match in order.)
    extra, i = [], 0
    for e in got:
        if i < len(want) and e == want[i]:
            i += 1
        else:
            extra.append(e)
    assert i == len(want), (want, got)
    for e in extra:
        assert e in begun
    assert len(extra) <= 2    # at most the one cut write per killed run
    # nothing the cut writes intended shows up as a hand edit
    cut = {(p, s) for (src, p, s) in begun if (src, p, s) not in want}
    hand = {(v.path, v.sha256) for v in versions if v.source == "hand-edit"}
    done_hand = {(r["path"], r["sha"]) for r in rows if r["op"] == "hand"}
    assert not ((cut & hand) - done_hand)
    # and every version is recoverable with the CLI, byte-exact
    for v in random.Random(seed).sample([v for v in versions if not v.removed], 3):
        r = CliRunner().invoke(main, ["-w", str(ws), "memory", "show", v.path, "--rev", v.rev, "--raw"])
        assert r.exit_code == 0 and r.stdout_bytes == h.object_bytes(v.sha256)
