"""A broken config.toml stops a session with a SessionError that quotes the bad value; the doors
print it as it is (`assistant run`: its one outcome line on stdout, a scheduled run's journal or
cron mail; `assistant memory`: stderr). A value that is a credential (an access token inside a
push URL given as a string instead of a list) is printed raw: not even the credential shapes the
scanner knows without a vault are redacted, though every other text a door prints is."""

from __future__ import annotations

from click.testing import CliRunner

from assistant.cli import main

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"     # a GitHub token shape (made up)


def test_a_credential_in_a_broken_setting_is_not_printed(ws):
    cfg = ws / "config.toml"
    text = cfg.read_text()
    assert "push = []" in text
    cfg.write_text(text.replace("push = []", f'push = "ntfys://{TOKEN}@ntfy.sh/topic"'))
    for args in (["run", "--model", "script:none.json", "hello"], ["memory", "ls"]):
        res = CliRunner().invoke(main, ["-w", str(ws), *args])
        assert res.exit_code == 1 and "approvals.push" in res.output     # the session did refuse to start
        leaked = TOKEN in res.output        # a bool: a failure never prints the output itself
        assert not leaked, f"`assistant {args[0]}` printed the token from config.toml"
