"""web_fetch refuses a URL carrying a vault value percent-encoded twice (url_secret_check looks
through every layer) with SecretInUrl, a plain ToolError. The agent's own scan sees one layer
only, so the refusal is neither counted by the session's refusal rule nor audited as
secret_refused, and the turn goes on: a model can test guess after guess in one turn (a URL
with a wrong guess goes to the gate instead), and a chat or run never ends for it."""

from __future__ import annotations

import json

from assistant.models.scripted import ScriptedModel

WIFI = "correct-horse-battery-93kd"
TWICE = "".join("%%25%02X" % ord(c) for c in WIFI)      # "%2563%256F..." -> "%63%6F..." -> the value


def test_a_twice_encoded_vault_value_in_a_url_ends_the_turn(vault_ws, sessions, tmp_path):
    asked = []
    session = sessions(vault_ws, "watched", kind="chat", vault={"WIFI": WIFI},
                       inline_ask=lambda q: asked.append(q) and None)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool": "web_fetch", "args": {"url": f"http://127.0.0.1:9/?q={TWICE}"}}] * 3
                                 + [{"reply": "done"}]))
    result = session.new_agent(ScriptedModel(script)).turn("look it up")
    refused = [c for c in result.failed_calls if "would carry a secret" in c.message]
    assert refused, "web_fetch did refuse the URL as carrying a secret"
    assert result.secret_refused                 # the turn ends at a vault-value refusal
    assert result.tool_calls == 1                # no second guess in the same turn
    assert session.refusals.count == 1           # counted by the session's rule
    audit = vault_ws / "state" / "audit.jsonl"
    events = [json.loads(x).get("event") for x in audit.read_text().splitlines()] if audit.exists() else []
    assert "secret_refused" in events
