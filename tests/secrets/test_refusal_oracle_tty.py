"""Hostile review: a refusal for a vault value must not tell the model WHICH secret it hit.

A model that guesses values and is told "the note would carry a secret (bank_pin)" learns that
its guess is bank_pin's value: the refusal is an oracle. It must name no secret, and after the
first such refusal the turn takes no more tool calls (no guessing loop). Driven through real
`assistant run` processes on the scripted model; the transcript holds exactly what the model
was given back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from e2e_support import make_ws

PASS = "review-oracle-pass"
SECRETS = {"bank_pin": "Tr0ub4dor-zeta-9931", "mail_pw": "k7-Qx2-mellon-8814"}


def cli(ws, *args, stdin=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env["ASSISTANT_VAULT_PASSPHRASE"] = PASS
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=90, start_new_session=True)


@pytest.fixture
def ws(tmp_path):
    root = make_ws(tmp_path, channel="none")     # the example; nobody to ask
    assert cli(root, "vault", "init").returncode == 0
    for name, value in SECRETS.items():
        r = cli(root, "vault", "set", name, stdin=value + "\n")
        assert r.returncode == 0, r.stderr
    return root


def _tool_results(ws):
    runs = json.loads(cli(ws, "runs", "--json").stdout)
    path = ws / "state" / "transcripts" / f"{runs[0]['id']}.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e for e in events if e.get("event") == "tool_result"]


@pytest.mark.parametrize("first", [
    {"tool": "memory_write", "args": {"path": "a.md", "content": "guess " + SECRETS["bank_pin"]}},
    {"tool": "file_write", "args": {"path": "a.txt", "content": "guess " + SECRETS["bank_pin"]}},
], ids=["memory_write", "file_write"])
def test_a_secret_refusal_names_no_secret_and_ends_the_tool_calls(ws, tmp_path, first):
    script = tmp_path / "guess.json"
    script.write_text(json.dumps([
        first,
        {"tool": "memory_write", "args": {"path": "b.md", "content": "guess " + SECRETS["mail_pw"]}},
        {"tool": "file_write", "args": {"path": "b.txt", "content": "guess " + SECRETS["mail_pw"]}},
        {"reply": "nothing to see"}]))
    r = cli(ws, "run", "--model", f"script:{script}", "tidy")
    results = _tool_results(ws)
    outputs = [str(e.get("output", "")) for e in results]
    assert outputs and "refused" in outputs[0] and "secret" in outputs[0]
    for out in outputs:     # what the model was told: no name, no value
        assert not any(name in out for name in SECRETS), outputs
        assert not any(value in out for value in SECRETS.values())
    assert len(results) == 1, outputs       # no second guess was run
    assert r.stdout.count("\n") == 1 and not r.stdout.startswith("done:"), r.stdout
    assert r.returncode != 0
    assert not any(v in r.stdout + r.stderr for v in SECRETS.values())
