"""Issue 10 item 18: a huge number in an action is an invalid step like any other, never a traceback."""

from __future__ import annotations

import pytest

from run_support import cli, make_ws, transcript_events, write_script


@pytest.mark.parametrize("literal", ["1" + "0" * 5000, "1e999", "-1e999", "1" * 400 + ".5"])
def test_huge_number_in_a_tool_call_is_an_invalid_step(tmp_path, literal):
    ws = make_ws(tmp_path)
    script = tmp_path / "big.json"
    script.write_text('[{"tool": "memory_list", "args": {"limit": ' + literal + '}}, {"reply": "listed"}]')
    r = cli("-w", str(ws), "run", "--model", f"script:{script}", "list my notes")
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    assert r.stdout == "done: listed\n"
    assert "[model] invalid step" in r.stderr
    invalid = [e for e in transcript_events(ws) if e["event"] == "invalid"]
    assert len(invalid) == 1 and "number" in invalid[0]["error"]


def test_parse_action_refuses_huge_numbers_with_an_action_error():
    from assistant.agent.actions import ActionError, parse_action
    from assistant.tools.registry import all_tools

    for text in ('{"tool": "memory_list", "args": {"offset": ' + "9" * 5000 + '}}',
                 '{"tool": "memory_list", "args": {"offset": 1e999}}',
                 '{"tool": "file_read", "args": {"path": ' + "7" * 4000 + '}}'):
        with pytest.raises(ActionError, match="number"):
            parse_action(text, all_tools())
    # ordinary numbers are still fine
    assert parse_action('{"tool": "memory_list", "args": {"offset": 3}}', all_tools()).args == {"offset": 3}
