# review (web approvals, 2026-12-01): deleted/added lines starting with --/++ were styled as the diff's file header
"""Review (hostile), approval page: a deleted or added line is styled as a diff file header.

Found in review: assistant.web.pages.diff_html classifies each line by its prefix without
knowing where the diff's header ends: any line starting with "---" or "+++" gets the grey
`meta` style of the file header. So a deleted note line that starts with "--" (a Markdown rule
"---" or a "-- signed" line: "----", "--- signed") and an added line that starts with "++" are
shown grey like "--- a/people/ana.md", not red/green as a deletion/addition; an added line
"++ b/people/ana.md" even renders exactly like the real header. The person misreads what the
write removes or adds.
Real `assistant approvals serve` on loopback; the request is filed as the gate files it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))

from web_approvals_support import Serve, file_request, links, make_ws  # noqa: E402

CURRENT = "# Ana\n---\n-- keep: Ana is allergic to penicillin\nlikes tea\n"
PROPOSED = "# Ana\n++ b/people/ana.md\nlikes tea\n"


def test_deleted_and_added_lines_are_styled_as_such(tmp_path):
    ws = make_ws(tmp_path)
    req = file_request(ws, PROPOSED, current=CURRENT)
    show = links(ws, req, "http://x")["show_url"].replace("http://x", "")
    with Serve(ws) as server, server.client() as c:
        page = c.get(show)
    assert page.status_code == 200
    spans = re.findall(r'<span class="([^"]*)">(.*?)</span>', page.text.split('<pre class="diff">', 1)[1])
    by_text = {text: cls for cls, text in spans}
    assert by_text.get("----") == "del", by_text                   # the deleted "---" line
    assert by_text.get("--- keep: Ana is allergic to penicillin") == "del", by_text
    assert by_text.get("+++ b/people/ana.md") is not None
    added = [cls for cls, text in spans if text == "+++ b/people/ana.md"]
    assert added == ["meta", "add"], f"the added line looks like the file header: {spans}"
