"""A net request's summary (assistant.tools.fetch_summary) reads back as the URL and the vault
secret's name it would send, and the approval page shows both, the URL in parts, before any
form (assistant.web.pages.fetch_html)."""

from __future__ import annotations

import pytest

from assistant.tools.fetch_summary import FetchSummary, parse
from assistant.web.pages import fetch_html


@pytest.mark.parametrize("fetch", [FetchSummary("https://a.example/p?q=1"),
                                   FetchSummary("http://127.0.0.1:8080/x", "gh_token")])
def test_summary_round_trip(fetch):
    assert parse(fetch.text()) == fetch


@pytest.mark.parametrize("summary", ["net a.example", "web_fetch ", "web_fetch https://a.example/ (with vault secret)",
                                     "web_fetch https://a.example/ and more"])
def test_other_summaries_are_not_read_as_a_fetch(summary):
    assert parse(summary) is None


class _Req:
    def __init__(self, summary: str) -> None:
        self.summary = summary


def test_the_page_shows_each_part_and_the_secret_name():
    url = "https://collector.example:8443/c/\u202ep?d=Ana+PIN+4711"
    page = fetch_html(_Req(FetchSummary(url, "gh_token").text()))
    for shown in ("<code>collector.example</code>", "<code>8443</code>", "<code>/c/\\u202ep</code>",
                  "<code>d=Ana+PIN+4711</code>", "(14 characters)", "<b>gh_token</b>"):
        assert shown in page, shown
    assert "\u202e" not in page
    unreadable = fetch_html(_Req("web_fetch https://a.example/ <b>x</b>"))
    assert "&lt;b&gt;x&lt;/b&gt;" in unreadable and "<b>x" not in unreadable
