"""`assistant vault` commands through click's CliRunner (and two real processes for the race)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from assistant.cli import main
from assistant.secrets.vault import ENV_PASSPHRASE, Vault
import stat
from acceptance_support import PASS as acc_PASS, out, run_cli
from pathlib import Path
from assistant.secrets.scanner import Scanner

PASS = "cli passphrase " + "for tests"
VALUE = "ghp-like-" + "value-" + "Zq81xY"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in (ENV_PASSPHRASE, "ASSISTANT_VAULT_NEW_PASSPHRASE", "ASSISTANT_WORKSPACE"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def ws(vault_ws):
    return vault_ws      # tests/conftest.py: the example workspace with a cheap vault KDF


def run(ws, *args, input=None, env=None):
    env = {ENV_PASSPHRASE: PASS, **(env or {})}
    env = {k: v for k, v in env.items() if v is not None}
    return CliRunner().invoke(main, ["-w", str(ws), "vault", *args], input=input, env=env)


def test_full_cycle(ws):
    r = run(ws, "init")
    assert r.exit_code == 0, r.output
    assert (ws / "vault.enc").stat().st_mode & 0o777 == 0o600

    r = run(ws, "set", "github", input=VALUE + "\n")
    assert r.exit_code == 0, r.output
    assert "stored github" in r.output
    r = run(ws, "set", "mail", input="mail-value-123456")
    assert r.exit_code == 0, r.output

    r = run(ws, "list")
    assert r.exit_code == 0
    assert re.search(r"(?m)^github\s+20\d\d-\d\d-\d\d \d\d:\d\d:\d\d [A-Z+-]", r.output) and "mail" in r.output
    assert VALUE not in r.output and "mail-value" not in r.output

    r = run(ws, "list", "--json")
    rows = json.loads(r.stdout)
    assert [row["name"] for row in rows] == ["github", "mail"]
    assert all(set(row) == {"name", "set_at", "hosts"} and row["hosts"] == [] for row in rows)

    # the stored value is exactly what was piped in (one trailing newline dropped)
    assert Vault.open(ws / "vault.enc", PASS).get("github") == VALUE

    r = run(ws, "remove", "mail")
    assert r.exit_code == 0 and "removed mail" in r.output
    assert [row["name"] for row in json.loads(run(ws, "list", "--json").stdout)] == ["github"]
    r = run(ws, "remove", "mail")
    assert r.exit_code == 1 and "no secret named 'mail'" in r.output


def test_workspace_option_on_leaf_command(ws):
    r = CliRunner().invoke(main, ["vault", "init", "-w", str(ws)], env={ENV_PASSPHRASE: PASS})
    assert r.exit_code == 0, r.output
    assert (ws / "vault.enc").exists()


def test_piped_passphrase_is_never_read(ws):
    """Issue 13: a passphrase comes only from the terminal, the env or the key file. Piped text is
    never taken as one (it used to be: `echo VALUE | vault set` unlocked with VALUE). The terminal
    paths are in tests/cli/test_vault_terminal.py (a real pty)."""
    r = run(ws, "init", input="piped passphrase\npiped passphrase\n", env={ENV_PASSPHRASE: None})
    assert r.exit_code == 1 and ENV_PASSPHRASE in r.stderr and "key_file" in r.stderr
    assert "no terminal" in r.stderr and "piped passphrase" not in r.output
    assert not (ws / "vault.enc").exists()
    assert run(ws, "init").exit_code == 0
    r = run(ws, "set", "k", input=VALUE + "\n", env={ENV_PASSPHRASE: None})
    assert r.exit_code == 1 and ENV_PASSPHRASE in r.stderr and "no terminal" in r.stderr
    assert VALUE not in r.output and "wrong passphrase" not in r.stderr
    assert Vault.open(ws / "vault.enc", PASS).names() == []


def test_short_value_refused_with_reason(ws):
    assert run(ws, "init").exit_code == 0
    r = run(ws, "set", "tiny", input="1234567\n")
    assert r.exit_code == 1
    assert "too short" in r.stderr and "false alarms" in r.stderr and "1234567" not in r.output
    assert Vault.open(ws / "vault.enc", PASS).names() == []


def test_value_never_from_argv(ws):
    assert run(ws, "init").exit_code == 0
    r = run(ws, "set", "github", VALUE)
    assert r.exit_code == 2  # click usage error: no such argument
    assert Vault.open(ws / "vault.enc", PASS).names() == []


def test_empty_stdin_and_bad_name_refused(ws):
    assert run(ws, "init").exit_code == 0
    r = run(ws, "set", "k", input="")
    assert r.exit_code == 1 and "no value for k" in r.stderr
    r = run(ws, "set", "../evil", input=VALUE)
    assert r.exit_code == 1 and "secret name" in r.stderr


def test_wrong_passphrase_and_locked(ws):
    assert run(ws, "set", "k", input=VALUE).exit_code == 1  # no vault yet
    assert run(ws, "init").exit_code == 0
    assert run(ws, "set", "k", input=VALUE).exit_code == 0
    before = (ws / "vault.enc").read_bytes()
    r = run(ws, "list", env={ENV_PASSPHRASE: "not-it-at-all"})
    assert r.exit_code == 1 and "wrong passphrase" in r.stderr and "not-it-at-all" not in r.output
    r = run(ws, "list", input="", env={ENV_PASSPHRASE: None})
    assert r.exit_code == 1 and ENV_PASSPHRASE in r.stderr and "key_file" in r.stderr
    assert (ws / "vault.enc").read_bytes() == before


def test_passwd(ws):
    assert run(ws, "init").exit_code == 0
    assert run(ws, "set", "k", input=VALUE).exit_code == 0
    r = run(ws, "passwd", input="brand new phrase\nbrand new phrase\n")
    assert r.exit_code == 1 and "no terminal" in r.stderr   # issue 13: never from a pipe
    r = run(ws, "passwd", env={"ASSISTANT_VAULT_NEW_PASSPHRASE": "brand new phrase"})
    assert r.exit_code == 0, r.output
    assert "brand new phrase" not in r.output
    assert run(ws, "list").exit_code == 1
    r = run(ws, "list", "--json", env={ENV_PASSPHRASE: "brand new phrase"})
    assert r.exit_code == 0 and json.loads(r.stdout)[0]["name"] == "k"
    r = run(ws, "passwd", env={ENV_PASSPHRASE: "brand new phrase",
                               "ASSISTANT_VAULT_NEW_PASSPHRASE": "third phrase"})
    assert r.exit_code == 0
    assert Vault.open(ws / "vault.enc", "third phrase").get("k") == VALUE


def test_key_file_from_config(ws):
    key = ws / "vault.key"
    key.write_text(PASS + "\n")
    key.chmod(0o644)
    cfg = (ws / "config.toml").read_text().replace('key_file = ""', 'key_file = "vault.key"')
    (ws / "config.toml").write_text(cfg)
    r = run(ws, "init", env={ENV_PASSPHRASE: None})
    assert r.exit_code == 1 and "chmod 600" in r.stderr
    assert not (ws / "vault.enc").exists()
    key.chmod(0o600)
    assert run(ws, "init", env={ENV_PASSPHRASE: None}).exit_code == 0
    r = run(ws, "set", "k", input=VALUE, env={ENV_PASSPHRASE: None})
    assert r.exit_code == 0, r.output
    assert Vault.open(ws / "vault.enc", PASS).get("k") == VALUE


def test_concurrent_cli_set_from_two_processes(ws):
    assert run(ws, "init").exit_code == 0
    env = {**os.environ, ENV_PASSPHRASE: PASS}
    script = (
        "import sys, time\n"
        "from click.testing import CliRunner\n"
        "from assistant.cli import main\n"
        "ws, tag, start = sys.argv[1], sys.argv[2], float(sys.argv[3])\n"
        "while time.time() < start: time.sleep(0.005)\n"
        "for i in range(8):\n"
        "    r = CliRunner().invoke(main, ['-w', ws, 'vault', 'set', f'{tag}{i}'],\n"
        "                           input=f'value-{tag}-{i}-abcdefgh')\n"
        "    assert r.exit_code == 0, r.output\n"
    )
    start = time.time() + 1.0
    procs = [subprocess.Popen([sys.executable, "-c", script, str(ws), tag, str(start)], env=env)
             for tag in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    names = {row["name"] for row in json.loads(run(ws, "list", "--json").stdout)}
    assert names == {f"{t}{i}" for t in "ab" for i in range(8)}


def test_set_binds_hosts_for_web_fetch(ws):
    """`vault set NAME --host HOST` (repeatable) stores the hosts with the entry (inside the
    encrypted payload), normalised as web_fetch normalises a URL's host; `list` shows them."""
    assert run(ws, "init").exit_code == 0
    r = run(ws, "set", "api", "--host", "API.Example.com.", "--host", "127.0.0.1:8080", input=VALUE)
    assert r.exit_code == 0, r.output
    assert "127.0.0.1:8080" in r.output and "api.example.com" in r.output
    v = Vault.open(ws / "vault.enc", PASS)
    assert v.hosts("api") == ("127.0.0.1:8080", "api.example.com")
    assert b"api.example.com" not in (ws / "vault.enc").read_bytes()   # encrypted, not a header
    rows = json.loads(run(ws, "list", "--json").stdout)
    assert rows == [{"name": "api", "set_at": rows[0]["set_at"], "hosts": ["127.0.0.1:8080", "api.example.com"]}]
    text = run(ws, "list").output
    assert "api.example.com" in text and VALUE not in text
    # an update without --host keeps the binding; with --host it replaces it
    assert run(ws, "set", "api", input=VALUE + "-2").exit_code == 0
    assert Vault.open(ws / "vault.enc", PASS).hosts("api") == ("127.0.0.1:8080", "api.example.com")
    assert run(ws, "set", "api", "--host", "other.example.org", input=VALUE).exit_code == 0
    assert Vault.open(ws / "vault.enc", PASS).hosts("api") == ("other.example.org",)
    # a secret with no hosts is listed as unusable by web_fetch
    assert run(ws, "set", "plain", input="plain-value-123456").exit_code == 0
    assert "not usable by web_fetch" in run(ws, "list").output


@pytest.mark.parametrize("bad", ["https://api.example.com", "api.example.com/v1", "user@api.example.com",
                                 "*.example.com", "%61pi.example.com", "api example.com", "x.com:99999"])
def test_set_refuses_a_host_that_is_not_a_bare_host(ws, bad):
    assert run(ws, "init").exit_code == 0
    r = run(ws, "set", "api", "--host", bad, input=VALUE)
    assert r.exit_code == 1 and "host" in r.output
    assert "api" not in [row["name"] for row in json.loads(run(ws, "list", "--json").stdout)]


def test_entries_without_hosts_load_from_an_older_vault(ws):
    """Backward compatible: a payload written before bindings existed ({value, set_at} only)."""
    assert run(ws, "init").exit_code == 0
    v = Vault.open(ws / "vault.enc", PASS)
    v._update(lambda entries: entries.__setitem__("old", {"value": VALUE, "set_at": "2026-01-01T00:00:00Z"}))
    v2 = Vault.open(ws / "vault.enc", PASS)
    assert v2.get("old") == VALUE and v2.hosts("old") == ()
    rows = json.loads(run(ws, "list", "--json").stdout)
    assert rows == [{"name": "old", "set_at": "2026-01-01T00:00:00Z", "hosts": []}]


SECRET = "s3cr3t-Value-Xq9Zk2Lm"


# acceptance (issue 4: vault CLI), written from the words
def test_vault_cli_lifecycle(vault_ws):
    env = {"ASSISTANT_VAULT_PASSPHRASE": acc_PASS}
    r = run_cli(["vault", "init"], ws=vault_ws, env=env)
    assert r.exit_code == 0, out(r)
    vault = vault_ws / "vault.enc"
    assert vault.is_file()
    assert stat.S_IMODE(vault.stat().st_mode) == 0o600
    r = run_cli(["vault", "set", "github"], ws=vault_ws, env=env, input=SECRET + "\n")
    assert r.exit_code == 0, out(r)
    assert SECRET not in out(r)
    assert SECRET.encode() not in vault.read_bytes()
    assert stat.S_IMODE(vault.stat().st_mode) == 0o600
    r = run_cli(["vault", "list"], ws=vault_ws, env=env)
    assert r.exit_code == 0, out(r)
    assert "github" in r.output and SECRET not in r.output
    assert time.strftime("%Y") in r.output  # when it was set
    # too short: refused with the reason
    r = run_cli(["vault", "set", "short"], ws=vault_ws, env=env, input="1234567\n")
    assert r.exit_code != 0
    assert "8" in out(r) and "1234567" not in out(r)
    assert "short" not in run_cli(["vault", "list"], ws=vault_ws, env=env).output.split()
    # never from argv
    r = run_cli(["vault", "set", "argv", SECRET], ws=vault_ws, env=env)
    assert r.exit_code != 0
    assert "argv" not in run_cli(["vault", "list"], ws=vault_ws, env=env).output
    # wrong passphrase: clear error, file untouched
    before = vault.read_bytes()
    r = run_cli(["vault", "set", "other"], ws=vault_ws, env={"ASSISTANT_VAULT_PASSPHRASE": "wrong-pass"},
                input="another-secret-value\n")
    assert r.exit_code != 0
    assert "Traceback" not in out(r)
    assert vault.read_bytes() == before
    r = run_cli(["vault", "list"], ws=vault_ws, env={"ASSISTANT_VAULT_PASSPHRASE": "wrong-pass"})
    assert r.exit_code != 0
    # remove
    r = run_cli(["vault", "remove", "github"], ws=vault_ws, env=env)
    assert r.exit_code == 0, out(r)
    assert "github" not in run_cli(["vault", "list"], ws=vault_ws, env=env).output


def test_vault_tampered_and_truncated(vault_ws):
    env = {"ASSISTANT_VAULT_PASSPHRASE": acc_PASS}
    assert run_cli(["vault", "init"], ws=vault_ws, env=env).exit_code == 0
    assert run_cli(["vault", "set", "k"], ws=vault_ws, env=env, input=SECRET + "\n").exit_code == 0
    vault = vault_ws / "vault.enc"
    good = vault.read_bytes()
    for bad in (good[:-5], good[: len(good) // 2],
                bytes([good[0] ^ 1]) + good[1:],
                good[:-1] + bytes([good[-1] ^ 1])):
        vault.write_bytes(bad)
        r = run_cli(["vault", "list"], ws=vault_ws, env=env)
        assert r.exit_code != 0
        assert "Traceback" not in out(r)
        assert vault.read_bytes() == bad


def test_vault_init_refuses_existing(vault_ws):
    env = {"ASSISTANT_VAULT_PASSPHRASE": acc_PASS}
    assert run_cli(["vault", "init"], ws=vault_ws, env=env).exit_code == 0
    before = (vault_ws / "vault.enc").read_bytes()
    r = run_cli(["vault", "init"], ws=vault_ws, env=env)
    assert r.exit_code != 0
    assert (vault_ws / "vault.enc").read_bytes() == before


def test_vault_passwd_and_prompted_passphrase(vault_ws):
    env = {"ASSISTANT_VAULT_PASSPHRASE": acc_PASS}
    assert run_cli(["vault", "init"], ws=vault_ws, env=env).exit_code == 0
    assert run_cli(["vault", "set", "k"], ws=vault_ws, env=env, input=SECRET + "\n").exit_code == 0
    new = "a brand new passphrase"
    # issue 13: a new passphrase comes from the terminal or ASSISTANT_VAULT_NEW_PASSPHRASE, never a pipe
    r = run_cli(["vault", "passwd"], ws=vault_ws, env={**env, "ASSISTANT_VAULT_NEW_PASSPHRASE": new})
    assert r.exit_code == 0, out(r)
    assert new not in out(r)
    assert run_cli(["vault", "list"], ws=vault_ws, env=env).exit_code != 0
    r = run_cli(["vault", "list"], ws=vault_ws, env={"ASSISTANT_VAULT_PASSPHRASE": new})
    assert r.exit_code == 0 and "k" in r.output.split()


def test_vault_key_file_needs_0600(vault_ws):
    env = {"ASSISTANT_VAULT_PASSPHRASE": acc_PASS}
    assert run_cli(["vault", "init"], ws=vault_ws, env=env).exit_code == 0
    assert run_cli(["vault", "set", "k"], ws=vault_ws, env=env, input=SECRET + "\n").exit_code == 0
    key = vault_ws.parent / "vault.key"
    key.write_text(acc_PASS + "\n")
    cfg = (vault_ws / "config.toml").read_text()
    import re
    if re.search(r"(?m)^\s*key_file\s*=", cfg):
        cfg = re.sub(r"(?m)^\s*key_file\s*=.*$", f"key_file = {json.dumps(str(key))}", cfg)
    else:
        cfg += f"\n[vault]\nkey_file = {json.dumps(str(key))}\n"
    (vault_ws / "config.toml").write_text(cfg)
    os.chmod(key, 0o644)
    r = run_cli(["vault", "list"], ws=vault_ws)
    assert r.exit_code != 0
    assert "600" in out(r)
    os.chmod(key, 0o600)
    r = run_cli(["vault", "list"], ws=vault_ws)
    assert r.exit_code == 0, out(r)
    assert "k" in r.output.split()


def test_finding_fields_and_import():
    from assistant.secrets.scanner import Finding  # noqa: F401
    s = Scanner(secrets={"github": SECRET})
    f = s.find("x" + SECRET)[0]
    assert (f.name, f.rule, f.start, f.end) == ("github", "vault", 1, 1 + len(SECRET))


def test_concurrent_vault_set_loses_nothing(vault_ws):
    import subprocess
    env = dict(os.environ, ASSISTANT_WORKSPACE=str(vault_ws), ASSISTANT_VAULT_PASSPHRASE=acc_PASS)
    exe = Path(sys.executable).with_name("assistant")
    assert subprocess.run([str(exe), "vault", "init"], env=env,
                          capture_output=True).returncode == 0
    names = ["alpha", "bravo", "charlie"]
    procs = [subprocess.Popen([str(exe), "vault", "set", n], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for n in names]
    for n, p in zip(names, procs):
        o, _ = p.communicate(f"value-of-{n}-0123456789\n".encode(), timeout=60)
        assert p.returncode == 0, o
        assert b"value-of" not in o
    r = subprocess.run([str(exe), "vault", "list"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    listed = r.stdout.split()
    assert all(n in listed for n in names), r.stdout
    assert "value-of" not in r.stdout


def test_secret_blocked_on_the_way_in_redacted_on_the_way_out(vault_ws):
    env = {"ASSISTANT_VAULT_PASSPHRASE": acc_PASS}
    assert run_cli(["vault", "init"], ws=vault_ws, env=env).exit_code == 0
    assert run_cli(["vault", "set", "github"], ws=vault_ws, env=env,
                   input=SECRET + "\n").exit_code == 0
    r = run_cli(["memory", "write", "notes/leak.md"], ws=vault_ws, env=env,
                input=f"the token is {SECRET}\n")
    assert r.exit_code != 0
    assert "github" in out(r) and SECRET not in out(r)
    assert not (vault_ws / "memory" / "notes" / "leak.md").exists()
    (vault_ws / "memory" / "hand.md").write_text(f"pasted {SECRET} by hand\n")
    r = run_cli(["memory", "cat", "hand.md"], ws=vault_ws, env=env)
    assert r.exit_code == 0, out(r)
    assert "[redacted:github]" in r.output and SECRET not in r.output
    # vault present but locked: reads and writes fail closed, saying how to unlock
    for args, inp in ((["memory", "cat", "hand.md"], None),
                      (["memory", "write", "notes/ok.md"], "harmless\n")):
        r = run_cli(args, ws=vault_ws, input=inp)
        assert r.exit_code != 0
        assert "ASSISTANT_VAULT_PASSPHRASE" in out(r)
        assert SECRET not in out(r)
    assert not (vault_ws / "memory" / "notes" / "ok.md").exists()


def test_vault_remove_unknown_name(vault_ws):
    env = {"ASSISTANT_VAULT_PASSPHRASE": acc_PASS}
    assert run_cli(["vault", "init"], ws=vault_ws, env=env).exit_code == 0
    r = run_cli(["vault", "remove", "nope"], ws=vault_ws, env=env)
    assert r.exit_code != 0 and "nope" in out(r)
