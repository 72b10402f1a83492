"""Review (hostile): a page that decodes to a lone surrogate does not end the turn.

Found in review: web_fetch decodes with the charset the SERVER names, and `charset=utf-7`
(or unicode_escape) turns "+2AA-" into a lone surrogate ("\\ud800"), which no UTF-8 encoder
accepts: the transcript's write of the tool result raised UnicodeEncodeError, and so would the
in-process tokenizer and the server backend's JSON body. Any page could end the person's turn
("model backend failed: UnicodeEncodeError"). Tool output now reaches the transcript and the
model with lone surrogates replaced by U+FFFD. Real loopback site, real session and gate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


from assistant.models.scripted import ScriptedModel  # noqa: E402
from assistant.session import open_session  # noqa: E402
from assistant.workspace.layout import open_workspace  # noqa: E402

from e2e_support import Site, make_ws, transcripts, write_script  # noqa: E402


class Encoding(ScriptedModel):
    """The scripted steps, after encoding every message as UTF-8 as every real backend does
    (llama-cpp-python's tokenizer, httpx's JSON body)."""

    def step(self, messages, *args, **kwargs):
        for m in messages:
            m["content"].encode("utf-8")
        return super().step(messages, *args, **kwargs)


def test_a_utf7_page_with_a_lone_surrogate_does_not_end_the_turn(tmp_path, loopback_site):
    page = b"hello +2AA- world"
    site = loopback_site({"/": (200, {"Content-Type": "text/plain; charset=utf-7"}, page)})      # conftest: closed at teardown
    ws = make_ws(tmp_path)
    script = write_script(tmp_path, [{"tool": "web_fetch", "args": {"url": site.url("/")}},
                                     {"reply": "read it"}])
    session = open_session(open_workspace(ws), "watched", kind="test", interactive=False,
                           inline_ask=lambda q: "once")
    try:
        agent = session.new_agent(Encoding(script))
        result = agent.turn("fetch the page")
    finally:
        session.close()
    assert site.seen_headers, "the page was not fetched"
    assert result.outcome != "error", result.message
    assert "read it" in (result.reply or "")
    records = [r for t in transcripts(ws) for r in t]
    outputs = [json.dumps(r, ensure_ascii=False) for r in records if r.get("event") == "tool_result"
               or r.get("type") == "tool_result"]
    # (since the scanner review, a page naming a non-web charset such as utf-7 is read as UTF-8,
    # so no lone surrogate arises from it any more; either way its record must be there)
    assert any("hello \ufffd world" in o or "hello +2AA- world" in o for o in outputs), outputs
