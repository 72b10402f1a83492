"""`assistant grants list [--json]` and `grants revoke KIND TARGET` as issue 3 spells them: the
JSON fields, what revoke leaves on disk, a missing grants.json is no grants."""

from __future__ import annotations

import json

from acceptance_support import out, run_cli


def _grant_file(ws, grants):
    (ws / "grants.json").write_text(json.dumps({"version": 1, "grants": grants}))


G1 = {"kind": "memory", "target": "people/lina.md", "granted_at": "2026-01-01T00:00:00Z",
      "note": "acceptance"}


# acceptance (issue 3: grants CLI), written from the words
def test_grants_list_json_and_revoke(vault_ws):
    g2 = {"kind": "memory", "target": "projects/*", "granted_at": "2026-01-02T00:00:00Z",
          "note": ""}
    _grant_file(vault_ws, [G1, g2])
    r = run_cli(["grants", "list", "--json"], ws=vault_ws)
    assert r.exit_code == 0, out(r)
    data = json.loads(r.output)
    items = data["grants"] if isinstance(data, dict) else data
    assert {(g["kind"], g["target"]) for g in items} == {("memory", "people/lina.md"),
                                                          ("memory", "projects/*")}
    r = run_cli(["grants", "list"], ws=vault_ws)
    assert r.exit_code == 0 and "projects/*" in r.output
    r = run_cli(["grants", "revoke", "memory", "people/lina.md"], ws=vault_ws)
    assert r.exit_code == 0, out(r)
    on_disk = json.loads((vault_ws / "grants.json").read_text())
    assert on_disk["version"] == 1
    assert [(g["kind"], g["target"]) for g in on_disk["grants"]] == [("memory", "projects/*")]
    for g in on_disk["grants"]:
        assert {"kind", "target", "granted_at", "note"} <= set(g)
    r = run_cli(["grants", "revoke", "memory", "people/lina.md"], ws=vault_ws)
    assert r.exit_code != 0


def test_grants_missing_file_is_empty(vault_ws):
    if (vault_ws / "grants.json").exists():
        (vault_ws / "grants.json").unlink()
    r = run_cli(["grants", "list", "--json"], ws=vault_ws)
    assert r.exit_code == 0, out(r)
    data = json.loads(r.output)
    items = data["grants"] if isinstance(data, dict) else data
    assert items == []
