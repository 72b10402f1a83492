# review (web approvals, 2026-12-01): an answer's reason reached the Answered / Already answered pages without terminal escaping
"""Review (hostile), approval page: an answer's reason reaches the page unescaped for the eye.

Found in review: assistant.web.pages promises that every text from a request, an answer's
reason included, is first made visible like the terminal shows it (control, bidi and
zero-width characters as \\u escapes) and then HTML-escaped. The "Already answered" page (any
GET of a link after the answer) and the "Answered" page put the reason through
pages.message_page, which only HTML-escapes: a U+202E RIGHT-TO-LEFT OVERRIDE, C1 controls and
carriage returns in a reason (typed by whoever held a deny link) reach the browser raw and
reorder what the person reads ("approved" shown for "devorppa").
Real `assistant approvals serve` on loopback.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))

from web_approvals_support import Serve, file_request, forms, links, make_ws  # noqa: E402

REASON = "ok \u202edevorppa\u202c \x9b2J\r\rX"


def test_reason_is_escaped_on_every_page(tmp_path):
    ws = make_ws(tmp_path)
    req = file_request(ws, "Ana likes tea.\n")
    urls = {k: v.replace("http://x", "") for k, v in links(ws, req, "http://x").items()}
    with Serve(ws) as server, server.client() as c:
        action, fields = forms(c.get(urls["deny_url"]).text)["deny"]
        done = c.post(action, data={**fields, "reason": REASON})
        assert done.status_code == 200
        again = c.get(urls["show_url"])
        assert again.status_code == 409
    for page in (done.text, again.text):
        assert "\u202e" not in page and "\x9b" not in page and "\r" not in page, \
            "a bidi override / C1 control / CR from the reason reached the page raw"
