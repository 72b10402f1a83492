"""Typed config (issue 9 item 5): every problem listed with key, bad value and a good example;
unknown keys are errors; a broken section stops only the commands that read it."""

import json

import pytest
from click.testing import CliRunner

from assistant.cli import main
from assistant.workspace.config import ConfigError, LimitsConfig, parse, read
from assistant.workspace.layout import open_workspace
from policy.approvals import ApprovalSettings, Inbox, sha256_hex
from policy.kinds import KINDS


# `ws` (the example workspace, a Path) comes from tests/conftest.py

def cli(ws, *args):
    return CliRunner().invoke(main, ["-w", str(ws), *args])


def set_config(ws, old, new):
    path = ws / "config.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def file_request(ws, target="people/lina.md", content="Lina likes tea.\n"):
    req, _ = Inbox(ws / "state" / "approvals").create(
        run_id="run-c", kind="memory", target=target, summary=f"update {target}",
        reason="root policy for memory in an unattended run is ask", sha256=sha256_hex(content.encode()),
        content=content, current=None, content_exact=True, offers=KINDS["memory"].offers(target), timeout=600)
    return req


def test_defaults_are_typed_values():
    c = parse({})
    assert c.limits == LimitsConfig(max_steps=8, tool_timeout=30.0)
    assert c.approvals == ApprovalSettings(channel="inbox", timeout=900.0, notify=())
    assert c.web.timeout == 10.0 and c.memory.pinned == ("index.md",) and c.schedule == ()
    with pytest.raises(Exception):
        c.limits.max_steps = 3          # frozen


def test_every_problem_is_listed_with_key_value_and_example():
    c = parse({"limits": {"tool_timeout": "15 min", "max_steps": -2},
               "model": {"max_tokens": 0}, "approvals": {"channel": "email"}, "webb": {}})
    with pytest.raises(ConfigError) as ei:
        c.require("limits", "model", "approvals")
    msg = str(ei.value)
    assert "5 problems" in msg
    assert "limits.tool_timeout = '15 min'" in msg and 'e.g. tool_timeout = "30s"' in msg
    assert "limits.max_steps = -2" in msg and "e.g. max_steps = 8" in msg
    assert "model.max_tokens = 0" in msg and "e.g. max_tokens = 512" in msg
    assert "approvals.channel = 'email'" in msg and 'channel = "inbox"' in msg
    assert "unknown setting webb" in msg        # a problem of the file itself: always reported
    assert len(ei.value.problems) == 5


def test_unknown_keys_are_errors_not_defaults():
    c = parse({"approvals": {"chanel": "none"}, "memory": {"max_note_byte": 1}})
    for section, key in (("approvals", "approvals.chanel"), ("memory", "memory.max_note_byte")):
        with pytest.raises(ConfigError, match=f"unknown setting {key}"):
            c.require(section)
    assert c.limits.max_steps == 8               # another section is still readable


def test_policy_and_schedule_problems_are_collected_too():
    c = parse({"policy": {"memory_unattended": "allow"},
               "schedule": [{"name": "a", "cron": "* * *", "task": "x"},
                            {"name": "b", "cron": "* * * * *", "task": ""}]})
    with pytest.raises(ConfigError, match="loosen"):
        c.policy
    with pytest.raises(ConfigError) as ei:
        c.schedule
    assert "'a'" in str(ei.value) and "'b'" in str(ei.value) and "2 problems" in str(ei.value)
    assert c.approvals.channel == "inbox"


def test_updated_validates_like_reading(tmp_path):
    c = parse({}, tmp_path / "config.toml")
    assert c.updated({"web": {"timeout": "2s"}}).web == type(c.web)(max_bytes=c.web.max_bytes, timeout=2.0)
    with pytest.raises(ConfigError, match="web.timeout = 'soon'"):
        c.updated({"web": {"timeout": "soon"}}).web


def test_unreadable_toml_is_a_problem_of_every_section(tmp_path):
    p = tmp_path / "config.toml"
    p.write_text("this is [ not toml\n")
    c = read(p)
    for name in ("model", "memory", "schedule"):
        with pytest.raises(ConfigError, match="not valid TOML"):
            c.require(name)


@pytest.mark.parametrize("old,new,key,bad,example", [
    ('tool_timeout = "30s"', 'tool_timeout = "15 min"', "limits.tool_timeout", "'15 min'", 'tool_timeout = "30s"'),
    ("max_tokens = 512", "max_tokens = -1", "model.max_tokens", "-1", "max_tokens = 512"),
    ('chat_format = "gemma"', "chat_format = 3", "model.chat_format", "3", 'chat_format = "gemma"'),
])
def test_bad_section_stops_run_but_not_approvals(ws, old, new, key, bad, example):
    set_config(ws, old, new)
    req = file_request(ws)
    # approvals list / show / deny read no config section: they work whatever else is wrong
    r = cli(ws, "approvals", "list", "--json")
    assert r.exit_code == 0, r.output
    assert [e["id"] for e in json.loads(r.stdout)] == [req.id]
    r = cli(ws, "approvals", "show", req.id)
    assert r.exit_code == 0 and "Lina likes tea." in r.output, r.output
    r = cli(ws, "approvals", "deny", req.id, "--reason", "not now")
    assert r.exit_code == 0, r.output
    assert Inbox(ws / "state" / "approvals").answer_of(req.id).verdict == "denied"
    # run needs [limits] and [model]: it stops, naming the key, the bad value and a good example
    r = cli(ws, "run", "--model", "script:/nonexistent.json", "remember tea")
    assert r.exit_code != 0
    assert key in r.output and bad in r.output and example in r.output, r.output


def test_broken_toml_still_lets_approvals_work(ws):
    (ws / "config.toml").write_text("[limits\nmax_steps = 3\n")
    req = file_request(ws)
    assert cli(ws, "approvals", "list").exit_code == 0
    assert cli(ws, "approvals", "show", req.id).exit_code == 0
    r = cli(ws, "run", "--model", "script:/nonexistent.json", "x")
    assert r.exit_code != 0 and "not valid TOML" in r.output


def test_a_bad_model_section_does_not_stop_the_memory_cli(ws):
    set_config(ws, "max_tokens = 512", "max_tokens = 0")
    r = cli(ws, "memory", "ls")
    assert r.exit_code == 0 and "index.md" in r.output, r.output
    set_config(ws, "summary_width = 100", 'summary_width = "wide"')
    r = cli(ws, "memory", "ls")
    assert r.exit_code != 0 and "memory.summary_width = 'wide'" in r.output and "summary_width = 100" in r.output


def test_schedule_list_lists_every_bad_entry_and_other_commands_go_on(ws):
    path = ws / "config.toml"
    path.write_text(path.read_text() + '\n[[schedule]]\nname = "b"\ncron = "99 * * * *"\ntask = "t"\n'
                    '\n[[schedule]]\nname = "c"\ncron = "@sometimes"\ntask = "t"\n')
    r = cli(ws, "schedule", "list")
    assert r.exit_code != 0 and "'b'" in r.output and "'c'" in r.output, r.output
    assert cli(ws, "memory", "ls").exit_code == 0


def test_open_workspace_reads_leniently_and_load_config_strictly(ws):
    from assistant.workspace.layout import WorkspaceError, load_config
    set_config(ws, 'timeout = "10s"', 'timeout = "later"')
    w = open_workspace(ws)                       # no error yet
    assert w.config.limits.max_steps == 8
    with pytest.raises(ConfigError, match="web.timeout"):
        w.config.web
    with pytest.raises(WorkspaceError, match="web.timeout = 'later'"):
        load_config(ws / "config.toml")
