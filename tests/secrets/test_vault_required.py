"""Issue 10 item 15: a missing vault fails closed. Once a workspace has had a vault (recorded
as `[vault] required = true` in config.toml, which deleting state/ does not erase), a session
refuses to start without vault.enc and names the fix."""

from __future__ import annotations

import shutil
import tomllib

from secrets_support import PASSPHRASE, WIFI, cli, env, make_ws, vault_env, write_script


def _required(ws) -> bool:
    return tomllib.loads((ws / "config.toml").read_text())["vault"].get("required", False)


def _run(ws, tmp_path, environ):
    script = write_script(tmp_path, [{"tool": "memory_read", "args": {"path": "router.md"}}, {"reply": "read"}])
    return cli("-w", str(ws), "run", "--model", f"script:{script}", "read the router note", environ=environ)


def test_vault_init_records_it_and_a_missing_vault_stops_every_session(tmp_path):
    ws = make_ws(tmp_path)
    config_before = (ws / "config.toml").read_text()
    r = cli("-w", str(ws), "vault", "init", environ=vault_env())
    assert r.returncode == 0, r.stderr
    assert _required(ws) is True
    # every other line of config.toml is kept as written (comments included)
    after = (ws / "config.toml").read_text()
    assert all(line in after.splitlines() for line in config_before.splitlines())
    r = cli("-w", str(ws), "vault", "set", "WIFI", input=WIFI + "\n", environ=vault_env())
    assert r.returncode == 0, r.stderr
    (ws / "memory" / "router.md").write_text(f"wifi password: {WIFI}\n")
    (ws / "vault.enc").rename(tmp_path / "vault.enc.away")
    shutil.rmtree(ws / "state")                       # deleting state/ does not forget it
    r = _run(ws, tmp_path, vault_env())
    assert r.returncode == 1 and r.stdout.startswith("error: "), r.stdout + r.stderr
    assert "vault.enc is missing" in r.stdout and "restore vault.enc" in r.stdout
    assert WIFI not in r.stdout + r.stderr
    assert not (ws / "state" / "transcripts").exists() or not list((ws / "state" / "transcripts").iterdir())
    for args in (["memory", "cat", "router.md"], ["memory", "ls"], ["memory", "catalog"]):
        r = cli("-w", str(ws), *args, environ=vault_env())
        assert r.returncode != 0 and "missing" in r.stderr and WIFI not in r.stdout, args
    r = cli("-w", str(ws), "chat", "--model", f"script:{write_script(tmp_path, [{'reply': 'hi'}])}",
            input="hi\n", environ=vault_env())
    assert r.returncode != 0 and "missing" in r.stderr and "hi" not in r.stdout
    # the fix works: put it back
    (tmp_path / "vault.enc.away").rename(ws / "vault.enc")
    r = _run(ws, tmp_path, vault_env())
    assert r.returncode == 0 and r.stdout == "done: read\n", r.stdout + r.stderr


def test_an_existing_vault_is_recorded_on_first_open(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})           # made without `vault init`
    assert _required(ws) is False
    r = cli("-w", str(ws), "memory", "ls", environ=vault_env())
    assert r.returncode == 0, r.stderr
    assert _required(ws) is True
    (ws / "vault.enc").unlink()
    r = _run(ws, tmp_path, env())
    assert r.returncode == 1 and "missing" in r.stdout and "required = false" in r.stdout


def test_a_workspace_that_never_had_a_vault_runs_without_one(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory" / "router.md").write_text("no secrets here\n")
    r = _run(ws, tmp_path, env())
    assert r.returncode == 0 and r.stdout == "done: read\n", r.stdout + r.stderr
    assert _required(ws) is False


def test_required_must_be_a_boolean(tmp_path):
    ws = make_ws(tmp_path)
    cfg = ws / "config.toml"
    cfg.write_text(cfg.read_text().replace('key_file = ""', 'key_file = ""\nrequired = "yes"'))
    r = cli("-w", str(ws), "memory", "ls", environ=env())
    assert r.returncode != 0 and "vault.required" in r.stderr and "true or false" in r.stderr
