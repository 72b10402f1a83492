"""Item 4 of issue 10, without a terminal: the next line answers an inline question, with the
same words as on a terminal (`y`, `r`, `always`, `folder`; anything else is no)."""

from __future__ import annotations

from click.testing import CliRunner

from assistant.cli import main

from e2e_support import Site, grants_in, make_ws, write_script


def _run(tmp_path, answer):
    with Site({"/": (200, {"Content-Type": "text/plain"}, b"page")}) as site:
        ws = make_ws(tmp_path)
        script = write_script(tmp_path, [{"tool": "web_fetch", "args": {"url": site.url("/")}}, {"reply": "ok"}],
                              name=f"{answer}.json")
        r = CliRunner().invoke(main, ["-w", str(ws), "chat", "--model", f"script:{script}"],
                               input=f"fetch\n{answer}\n/quit\n", catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return ws, site, r.stdout, len(site.seen_headers)


def test_a_scripted_a_is_no_longer_always(tmp_path):
    ws, site, out, fetched = _run(tmp_path, "a")
    assert fetched == 0 and grants_in(ws) == [] and "[deny] net" in out


def test_a_scripted_always_records_the_exact_grant(tmp_path):
    ws, site, out, fetched = _run(tmp_path, "always")
    assert fetched == 1 and [g["target"] for g in grants_in(ws)] == [site.target]


def test_y_still_means_this_once(tmp_path):
    ws, site, out, fetched = _run(tmp_path, "y")
    assert fetched == 1 and grants_in(ws) == []
