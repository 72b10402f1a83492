"""`assistant grants list|revoke`."""

import json

import pytest
from click.testing import CliRunner

from assistant.cli import main
from policy.grants import GrantStore


# `ws` (the example workspace, a Path) comes from tests/conftest.py

def cli(ws, *args):
    return CliRunner().invoke(main, [*args, "-w", str(ws)])


def test_list_and_revoke(ws):
    r = cli(ws, "grants", "list")
    assert r.exit_code == 0 and "no grants" in r.output
    store = GrantStore(ws / "grants.json")
    store.add("memory", "people/*", note="approval abc")
    store.add("net", "example.com")
    r = cli(ws, "grants", "list")
    assert r.exit_code == 0 and "people/*" in r.output and "example.com" in r.output
    rows = json.loads(cli(ws, "grants", "list", "--json").output)
    assert [(g["kind"], g["target"], g["note"]) for g in rows] == [("memory", "people/*", "approval abc"),
                                                                  ("net", "example.com", "")]
    r = cli(ws, "grants", "revoke", "memory", "people/*")
    assert r.exit_code == 0 and "revoked" in r.output
    assert [g.target for g in store.load()] == ["example.com"]


def test_revoke_errors(ws):
    r = cli(ws, "grants", "revoke", "memory", "people/*")
    assert r.exit_code != 0 and "no grant" in r.output
    r = cli(ws, "grants", "revoke", "shell", "x")
    assert r.exit_code != 0 and "unknown kind" in r.output


# the last three files are the issue-3 acceptance cases (`test_grants_corrupt_is_clear_error`, merged
# here: it asserted the same clear error, naming grants.json, with no traceback)
@pytest.mark.parametrize("content, says", [
    ('{"version": 3, "grants": []}', "unknown version 3"),
    ("{not json", "grants.json"),
    (json.dumps({"version": 99, "grants": []}), "unknown version 99"),
    (json.dumps({"version": 1, "grants": [{"kind": "memory", "target": "[", "granted_at": "x", "note": ""}]}),
     "grants.json"),
])
def test_corrupt_grants_file(ws, content, says):
    (ws / "grants.json").write_text(content)
    r = cli(ws, "grants", "list")
    assert r.exit_code != 0 and says in r.output and "no grant" in r.output
    assert "grants.json" in r.output and "Traceback" not in r.output
    r = cli(ws, "grants", "revoke", "memory", "people/*")
    assert r.exit_code != 0 and says in r.output and "Traceback" not in r.output
    assert (ws / "grants.json").read_text() == content


def test_revoke_a_net_grant_as_typed_with_another_case(ws):
    """Hosts are stored lower-cased (as the gate normalises them): `revoke net Example.COM`
    must find `example.com`, or the person believes a grant is gone that is still there."""
    store = GrantStore(ws / "grants.json")
    store.add("net", "example.com:8080")
    r = cli(ws, "grants", "revoke", "net", "Example.COM:8080")
    assert r.exit_code == 0, r.output
    assert "revoked net example.com:8080" in r.output
    assert store.load() == []
