"""An answer given on the approval page is audited through the composition root's log: the
person's reason is scanned for credential shapes before it is written (it was written raw).
Real `assistant approvals serve` on loopback."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))

from web_approvals_support import Serve, audit_events, file_request, forms, links, make_ws  # noqa: E402

AWS_KEY = "AKIA" + "Q3ZX7PLM2KD8WTHR"     # an access-key shape (made up)


def test_a_credential_in_a_web_reason_is_redacted_in_the_audit_log(tmp_path):
    ws = make_ws(tmp_path)
    req = file_request(ws, "Ana likes tea.\n")
    urls = {k: v.replace("http://x", "") for k, v in links(ws, req, "http://x").items()}
    with Serve(ws) as server, server.client() as c:
        action, fields = forms(c.get(urls["deny_url"]).text)["deny"]
        done = c.post(action, data={**fields, "reason": f"no, and my key is {AWS_KEY}"})
        assert done.status_code == 200
    [line] = [e for e in audit_events(ws) if e.get("event") == "approval"]
    assert line["verdict"] == "denied" and line["by"] == "web" and line["request"] == req.id
    assert AWS_KEY not in (ws / "state" / "audit.jsonl").read_text()
    assert line["reason"] == "no, and my key is [redacted:aws-access-key]"
