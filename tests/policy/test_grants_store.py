"""policy.grants: the grants.json store (real files, real locks, real processes)."""

import json
import multiprocessing
import os

import pytest

from policy.grants import GrantIndex, Grant, GrantsError, GrantStore
import threading
from policy.engine import Session, decide
from gate_support import run_past_fifo


def test_missing_file_is_no_grants(tmp_path):
    store = GrantStore(tmp_path / "grants.json")
    assert store.load() == []
    assert store.matches("memory", "people/lina.md") is None


def test_add_list_match_revoke(tmp_path):
    path = tmp_path / "grants.json"
    store = GrantStore(path)
    g = store.add("memory", "people/*", note="from approval abc")
    assert g.granted_at and g.note == "from approval abc"
    assert store.add("memory", "people/*").granted_at == g.granted_at   # idempotent
    store.add("net", "example.com")
    data = json.loads(path.read_text())
    assert data["version"] == 1 and [x["target"] for x in data["grants"]] == ["people/*", "example.com"]
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert store.matches("memory", "people/x.md").target == "people/*"
    assert store.matches("memory", "people/sub/x.md") is None
    assert store.matches("net", "people/x.md") is None
    assert store.revoke("memory", "people/*") is True
    assert store.revoke("memory", "people/*") is False
    assert store.matches("memory", "people/x.md") is None
    # a second store on the same file sees the change (cache follows the file)
    assert [g.target for g in GrantStore(path).load()] == ["example.com"]
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".grants.json.tmp")]


@pytest.mark.parametrize("body,why", [
    (b"{not json", "not valid JSON"),
    (b'{"version": 2, "grants": []}', "unknown version 2"),
    (b'{"grants": []}', "unknown version None"),
    (b'[]', "expected an object"),
    (b'{"version": 1, "grants": {}}', "must be a list"),
    (b'{"version": 1, "grants": [{"kind": "shell", "target": "x"}]}', "unknown kind 'shell'"),
    (b'{"version": 1, "grants": [{"kind": "memory", "target": "people/[x"}]}', "malformed pattern"),
    (b'{"version": 1, "grants": [{"kind": "memory"}]}', "no target"),
    (b"\xff\xfe", "not valid JSON"),
])
def test_corrupt_file_is_a_clear_error_and_never_overwritten(tmp_path, body, why):
    path = tmp_path / "grants.json"
    path.write_bytes(body)
    store = GrantStore(path)
    with pytest.raises(GrantsError, match=why):
        store.load()
    with pytest.raises(GrantsError):
        store.matches("memory", "people/x.md")
    with pytest.raises(GrantsError):
        store.add("memory", "people/*")
    assert path.read_bytes() == body


def test_corruption_after_a_good_load_is_noticed(tmp_path):
    path = tmp_path / "grants.json"
    store = GrantStore(path)
    store.add("memory", "people/*")
    assert store.matches("memory", "people/x.md")
    path.write_text("garbage")
    with pytest.raises(GrantsError):
        store.matches("memory", "people/x.md")


def test_symlinked_grants_file_refused(tmp_path):
    real = tmp_path / "elsewhere.json"
    real.write_text('{"version": 1, "grants": [{"kind": "memory", "target": "*"}]}')
    (tmp_path / "grants.json").symlink_to(real)
    with pytest.raises(GrantsError, match="symbolic link"):
        GrantStore(tmp_path / "grants.json").load()


def test_add_refuses_bad_input(tmp_path):
    store = GrantStore(tmp_path / "grants.json")
    with pytest.raises(GrantsError, match="unknown kind"):
        store.add("shell", "x")
    with pytest.raises(GrantsError, match="unclosed"):
        store.add("memory", "people/[x")
    assert not (tmp_path / "grants.json").exists()


def _adder(path, who, n):
    store = GrantStore(path)
    for i in range(n):
        store.add("memory", f"{who}/note{i}.md")


def test_two_approvers_at_once_lose_nothing(tmp_path):
    path = tmp_path / "grants.json"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_adder, args=(path, who, 40)) for who in ("alice", "bob")]
    for p in procs:
        p.start()
    _adder(path, "carol", 40)   # and a third, in this process
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    targets = {g.target for g in GrantStore(path).load()}
    assert len(targets) == 120
    assert {f"bob/note{i}.md" for i in range(40)} <= targets


def test_index_finds_only_real_matches():
    idx = GrantIndex([Grant("memory", "people/*"), Grant("memory", "a/b.md"), Grant("memory", "p\\*q.md"),
                      Grant("net", "*.example.com"), Grant("memory", "x?.md")])
    assert idx.find("memory", "people/a.md").target == "people/*"
    assert idx.find("memory", "a/b.md").target == "a/b.md"
    assert idx.find("memory", "a/b.mdx") is None
    assert idx.find("memory", "p*q.md").target == "p\\*q.md"
    assert idx.find("memory", "pxq.md") is None
    assert idx.find("memory", "xy.md").target == "x?.md"
    assert idx.find("net", "api.example.com").target == "*.example.com"
    assert idx.find("memory", "api.example.com") is None


def test_index_agrees_with_a_linear_scan():
    from policy.match import match
    pats = ["people/*", "people/l*.md", "*", "a/*/c.md", "a/b/[cd].md", "a/b/c.md", "q?/x.md", "[^z]*"]
    names = ["people/lina.md", "people/sub/x.md", "top.md", "a/b/c.md", "a/x/c.md", "a/b/d.md", "q1/x.md",
             "zz", "people/", ""]
    for p in pats:
        idx = GrantIndex([Grant("memory", p)])
        for n in names:
            assert (idx.find("memory", n) is not None) == match(p, n), (p, n)


def test_big_index_agrees_with_a_linear_scan():
    """Seeded random patterns and names: the indexed lookup finds a grant iff a scan does."""
    import random

    from policy.match import match
    rng = random.Random(7)
    alphabet = ["a", "b", "p", "/", ".md", "*", "?", "[ab]", "[^a]", "\\*", "x"]
    pats = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(400)}
    pats = [p for p in pats if not p.endswith("\\")]
    grants = [Grant("memory", p) for p in pats]
    idx = GrantIndex(grants)
    names = {"".join(rng.choice(["a", "b", "p", "/", ".md", "x", "*"]) for _ in range(rng.randint(0, 6)))
             for _ in range(600)}
    for n in names:
        found = idx.find("memory", n)
        expected = [p for p in pats if match(p, n)]
        assert (found is not None) == bool(expected), (n, expected)
        if found is not None:
            assert match(found.target, n)


def test_suffix_indexed_patterns():
    idx = GrantIndex([Grant("net", "*.example.com"), Grant("net", "*.svc1.example.net:443"), Grant("memory", "*")])
    assert idx.find("net", "a.b.example.com").target == "*.example.com"
    assert idx.find("net", "x.svc1.example.net:443") is not None
    assert idx.find("net", "x.svc1.example.net") is None
    assert idx.find("net", "example.com") is None
    assert idx.find("memory", "top.md").target == "*"
    assert idx.find("memory", "a/top.md") is None


# review (policy): grants.json that is not a list of grants
@pytest.mark.parametrize("body", [
    '{"version": 1, "grants": [{"kind": [], "target": "people/*"}]}',        # unhashable kind
    '{"version": 1, "grants": [{"kind": {}, "target": "people/*"}]}',
    '{"version": 1, "grants": ' + "[" * 100000 + "]" * 100000 + "}",        # nesting past the recursion limit
    '{"version": true, "grants": [{"kind": "memory", "target": "people/*"}]}',   # true == 1 in Python
    '{"version": 1.0, "grants": [{"kind": "memory", "target": "people/*"}]}',
    '{"version": 1, "grants": [], "version": 2}',                              # duplicate keys
    '{"version": 1, "grants": [{"kind": "memory", "target": "people/*", "target": "*"}]}',
])
def test_odd_grants_json_is_a_clear_error_and_counts_as_no_grant(tmp_path, body):
    path = tmp_path / "grants.json"
    path.write_text(body)
    store = GrantStore(path)
    with pytest.raises(GrantsError):
        store.load()
    s = Session("r", grants=store)
    watched = decide("memory", "people/lina.md", "watched", s)
    assert watched.verdict == "allow"          # the root policy still stands
    r = decide("memory", "people/lina.md", "unattended", s)
    assert r.verdict == "ask" and "grants.json unreadable" in r.reason


def test_engine_never_raises_for_an_unhashable_kind():
    s = Session("r")
    assert decide(["memory"], "people/a.md", "watched", s).verdict == "deny"
    assert decide("memory", "people/a.md", ["watched"], s).verdict == "deny"


# review (policy): FIFOs: a hang is not a ruling
def test_grants_json_fifo_is_unreadable_not_a_hang(tmp_path):
    path = tmp_path / "grants.json"
    os.mkfifo(path)
    s = Session("r", grants=GrantStore(path))
    r = run_past_fifo(lambda: decide("memory", "people/a.md", "unattended", s), path,
                      "decide() hung opening a FIFO grants.json")
    assert r.verdict == "ask" and "grants.json unreadable" in r.reason


# review (policy): what held up (pinned so it stays)
def test_hand_written_star_grants_stay_at_the_root(tmp_path):
    (tmp_path / "grants.json").write_text(json.dumps({"version": 1, "grants": [
        {"kind": "memory", "target": "*"}, {"kind": "memory", "target": "**"}]}))
    s = Session("r", grants=GrantStore(tmp_path / "grants.json"))
    assert decide("memory", "top.md", "unattended", s).verdict == "allow"
    assert decide("memory", "people/lina.md", "unattended", s).verdict == "ask"
