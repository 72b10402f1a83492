"""Daily-use CLI behaviours from issue 13: help with no arguments, host bindings changed without
re-entering a value, messages that keep a secret name's case."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from assistant.secrets.vault import ENV_PASSPHRASE, Vault
from assistant.workspace.layout import init_workspace
from workspaces import bare_ws, cheap_kdf

PASS = "daily passphrase " + "for tests"
VALUE = "daily-" + "value-" + "Rt52Kc9w"


@pytest.fixture
def ws(tmp_path):
    """A workspace as `init` makes it (no example notes), with a cheap vault KDF."""
    return cheap_kdf(bare_ws(tmp_path))


def cli(ws, *args, input=None, passphrase=PASS):
    env = {k: v for k, v in os.environ.items() if k not in (ENV_PASSPHRASE, "ASSISTANT_WORKSPACE")}
    if passphrase is not None:
        env[ENV_PASSPHRASE] = passphrase
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], input=input,
                          capture_output=True, text=True, env=env, timeout=60, start_new_session=True)


def test_no_arguments_prints_help_and_exits_0(ws):
    r = subprocess.run([sys.executable, "-m", "assistant"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "Usage: assistant" in r.stdout and "Commands:" in r.stdout and "memory" in r.stdout
    assert "_ASSISTANT_COMPLETE" in r.stdout   # shell completion is documented where people look
    assert subprocess.run([sys.executable, "-m", "assistant", "no-such-command"],
                          capture_output=True, text=True, timeout=60).returncode == 2


def test_vault_hosts_add_and_remove_keep_the_value(ws):
    assert cli(ws, "vault", "init").returncode == 0
    assert cli(ws, "vault", "set", "Api_Token", "--host", "api.example.com", input=VALUE).returncode == 0
    before = Vault.open(ws / "vault.enc", PASS)
    set_at = dict((n, t) for n, t in before.names())["Api_Token"]

    r = cli(ws, "vault", "hosts", "Api_Token", "--add", "backup.example.org")
    assert r.returncode == 0, r.stderr
    assert "api.example.com" in r.stdout and "backup.example.org" in r.stdout
    v = Vault.open(ws / "vault.enc", PASS)
    assert v.get("Api_Token") == VALUE and dict(v.names())["Api_Token"] == set_at
    assert v.hosts("Api_Token") == ("api.example.com", "backup.example.org")

    r = cli(ws, "vault", "hosts", "Api_Token", "--remove", "api.example.com", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"name": "Api_Token", "hosts": ["backup.example.org"]}

    r = cli(ws, "vault", "hosts", "Api_Token", "--remove", "never.example.net")
    assert r.returncode == 1 and "not bound to never.example.net" in r.stderr
    r = cli(ws, "vault", "hosts", "Nope")
    assert r.returncode == 1 and "no secret named Nope" in r.stderr
    assert VALUE not in r.stdout + r.stderr


def test_set_with_host_says_which_binding_it_replaced(ws):
    assert cli(ws, "vault", "init").returncode == 0
    assert cli(ws, "vault", "set", "Api_Token", "--host", "a.example.com", input=VALUE).returncode == 0
    r = cli(ws, "vault", "set", "Api_Token", "--host", "b.example.com", input=VALUE)
    assert r.returncode == 0, r.stderr
    assert "no longer sent to a.example.com" in r.stderr and "vault hosts Api_Token --add" in r.stderr


def test_messages_keep_the_name_case(ws):
    assert cli(ws, "vault", "init").returncode == 0
    r = cli(ws, "vault", "set", "GitHub_Token", input="")
    assert r.returncode == 1 and "GitHub_Token" in r.stderr and "github_token" not in r.stderr


def test_approvals_take_any_unique_prefix_of_an_id(ws):
    """`approvals show/approve/deny` accept an abbreviated id; an ambiguous one is refused and
    answers nothing (every answer is bound to exactly one request)."""
    from policy.approvals import Inbox, sha256_hex
    from policy.kinds import KINDS

    inbox = Inbox(ws / "state" / "approvals")
    reqs = []
    for target in ("people/a.md", "people/b.md"):
        content = f"{target} text\n"
        req, _ = inbox.create(run_id="run-1", kind="memory", target=target, summary=f"update {target}",
                              reason="ask", sha256=sha256_hex(content.encode()), content=content, current=None,
                              content_exact=True, offers=KINDS["memory"].offers(target), timeout=600.0)
        reqs.append(req)
    a, b = reqs
    common = os.path.commonprefix([a.id, b.id])
    r = cli(ws, "approvals", "show", a.id[: len(common) + 1])
    assert r.returncode == 0, r.stderr
    assert "people/a.md" in r.stdout
    if common:
        r = cli(ws, "approvals", "deny", common)
        assert r.returncode == 1 and "ambiguous" in r.stderr
    r = cli(ws, "approvals", "deny", "", "--reason", "x")
    assert r.returncode != 0
    assert inbox.answer_of(a.id) is None and inbox.answer_of(b.id) is None
    r = cli(ws, "approvals", "deny", b.id[: len(common) + 1], "--reason", "not now")
    assert r.returncode == 0, r.stderr
    assert f"denied {b.id}" in r.stdout
    assert inbox.answer_of(b.id).verdict == "denied" and inbox.answer_of(a.id) is None


def _example(tmp_path):
    root = tmp_path / "ex"
    init_workspace(root, example=True)
    return root


def test_memory_cat_finds_the_note_without_its_md(tmp_path):
    ws = _example(tmp_path)
    r = cli(ws, "memory", "cat", "people/lina")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (ws / "memory" / "people" / "lina.md").read_text()
    r = cli(ws, "memory", "cat", "people/nobody")
    assert r.returncode == 1 and "people/nobody.md" in r.stderr


def test_memory_ls_sort_and_path_filter(tmp_path):
    ws = _example(tmp_path)
    os.utime(ws / "memory" / "people" / "marek.md", (2_000_000_000, 2_000_000_000))
    r = cli(ws, "memory", "ls", "people/", "--sort", "name", "--json")
    assert [e["path"] for e in json.loads(r.stdout)] == ["people/lina.md", "people/marek.md"]
    r = cli(ws, "memory", "ls", "--sort", "changed", "--json")
    assert json.loads(r.stdout)[0]["path"] == "people/marek.md"
    r = cli(ws, "memory", "ls", "nothing/here/")
    assert r.returncode == 0 and "no notes under nothing/here/" in r.stdout
    r = cli(ws, "memory", "ls", "--sort", "size")
    assert r.returncode == 2 and "size" in r.stderr


def test_schedule_install_refuses_units_that_could_not_unlock_the_vault(tmp_path, monkeypatch):
    ws = _example(tmp_path)
    cfg = (ws / "config.toml").read_text()
    cfg = re.sub(r"(?m)^opslimit = .*$", "opslimit = 1", cfg)
    cfg = re.sub(r"(?m)^memlimit_mib = .*$", "memlimit_mib = 8", cfg)
    (ws / "config.toml").write_text(cfg)
    assert cli(ws, "vault", "init").returncode == 0
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    env_home = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    r = cli(ws, "schedule", "install", "--systemd", "--write", passphrase=None)
    assert r.returncode == 1 and "not installed" in r.stderr and "key_file" in r.stderr
    r = cli(ws, "schedule", "install", "--print", passphrase=None)
    assert r.returncode == 0 and "warning:" in r.stderr and "key_file" in r.stderr

    # the keyring: cron cannot reach it; systemd units get the session bus they need
    (ws / "config.toml").write_text((ws / "config.toml").read_text().replace('unlock = ""', 'unlock = "keyring"'))
    r = cli(ws, "schedule", "install", "--cron", "--write", passphrase=None)
    assert r.returncode == 1 and "cron cannot reach" in r.stderr and "--systemd" in r.stderr
    r = cli(ws, "schedule", "install", "--systemd", "--print", passphrase=None)
    assert r.returncode == 0 and "warning" not in r.stderr
    assert "Environment=DBUS_SESSION_BUS_ADDRESS=unix:path=%t/bus" in r.stdout

    # a private key file: fine for either
    key = ws / "vault.key"
    key.write_text(PASS)
    key.chmod(0o600)
    (ws / "config.toml").write_text((ws / "config.toml").read_text().replace('key_file = ""', 'key_file = "vault.key"'))
    r = cli(ws, "schedule", "install", "--cron", "--print", passphrase=None)
    assert r.returncode == 0 and "warning" not in r.stderr
