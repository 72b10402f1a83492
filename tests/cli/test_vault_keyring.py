"""The remembered unlock against a REAL Secret Service: gnome-keyring-daemon on a private D-Bus
session bus (dbus-run-session), both started by the test (issue 13 item 2). Skipped only where
Debian's gnome-keyring / dbus packages are not installed (.ci/run installs them)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.secrets.vault import ENV_PASSPHRASE, Vault
from assistant.workspace.layout import init_workspace
from workspaces import cheap_kdf

PASS = "keyring passphrase " + "for tests"
VALUE = "kr-" + "value-" + "Wm38Tz1q"
NOTE = "Router: ask Sam.\n"

pytestmark = pytest.mark.skipif(
    not (shutil.which("dbus-run-session") and shutil.which("gnome-keyring-daemon")),
    reason="needs Debian's dbus and gnome-keyring (installed by .ci/run)")


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    init_workspace(root, example=True)
    cheap_kdf(root)
    env = {**os.environ, ENV_PASSPHRASE: PASS}
    for args in (["vault", "init"], ["vault", "set", "wifi"]):
        r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(root), *args], input=VALUE,
                           capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 0, r.stderr
    return root


def in_desktop_session(tmp_path: Path, ws: Path, steps: list[list[str]], *, first_passphrase: str | None = PASS):
    """Run `assistant` commands one after another inside one D-Bus session with an unlocked
    gnome-keyring; returns [(returncode, stdout, stderr)] per step. No ASSISTANT_VAULT_* env
    except ASSISTANT_VAULT_PASSPHRASE = first_passphrase on the first step (vault remember)."""
    home = tmp_path / "home"
    run_dir = tmp_path / "run"
    home.mkdir(exist_ok=True)
    run_dir.mkdir(mode=0o700, exist_ok=True)
    out = tmp_path / "steps.jsonl"
    driver = tmp_path / "driver.py"
    driver.write_text(
        "import json, os, subprocess, sys\n"
        "steps = json.loads(sys.argv[1]); first = json.loads(sys.argv[2])\n"
        "with open(sys.argv[3], 'w') as f:\n"
        "    for i, argv in enumerate(steps):\n"
        "        env = {k: v for k, v in os.environ.items() if not k.startswith('ASSISTANT_VAULT')}\n"
        f"        if i == 0 and first is not None: env['{ENV_PASSPHRASE}'] = first\n"
        "        r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60,\n"
        "                           stdin=subprocess.DEVNULL)\n"
        "        f.write(json.dumps([r.returncode, r.stdout, r.stderr]) + '\\n')\n")
    base = [sys.executable, "-m", "assistant", "-w", str(ws)]
    argvs = [base + s for s in steps]
    script = (f"printf '%s' login-keyring-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null && "
              f"exec {shlex.quote(sys.executable)} {shlex.quote(str(driver))} {shlex.quote(json.dumps(argvs))} "
              f"{shlex.quote(json.dumps(first_passphrase))} {shlex.quote(str(out))}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSISTANT_", "DBUS_"))}
    env.update(HOME=str(home), XDG_RUNTIME_DIR=str(run_dir), XDG_DATA_HOME=str(home / ".local/share"))
    r = subprocess.run(["dbus-run-session", "--", "sh", "-c", script], env=env, capture_output=True,
                       text=True, timeout=180, start_new_session=True)
    assert out.exists(), r.stderr
    return [tuple(json.loads(line)) for line in out.read_text().splitlines()]


def test_remember_then_commands_unlock_without_asking(tmp_path, ws):
    (ws / "memory" / "wifi.md").write_text(f"wifi password: {VALUE}\n")
    results = in_desktop_session(tmp_path, ws, [["vault", "remember"], ["memory", "cat", "wifi.md"],
                                                ["vault", "list", "--json"], ["vault", "forget"],
                                                ["memory", "cat", "wifi.md"]])
    (rc, out, err) = results[0]
    assert rc == 0, err
    assert "remembered" in out and 'unlock = "keyring"' in out and PASS not in out + err
    rc, out, err = results[1]
    assert rc == 0, err
    assert out == "wifi password: [redacted:wifi]\n"            # unlocked: the value is known and redacted
    rc, out, err = results[2]
    assert rc == 0 and json.loads(out)[0]["name"] == "wifi"
    rc, out, err = results[3]
    assert rc == 0 and "forgot" in out
    assert 'unlock = ""' in (ws / "config.toml").read_text()
    rc, out, err = results[4]
    assert rc == 1 and "locked" in err and VALUE not in out + err  # forgotten: fails closed again


def test_remember_refuses_a_wrong_passphrase(tmp_path, ws):
    results = in_desktop_session(tmp_path, ws, [["vault", "remember"]], first_passphrase="not the passphrase")
    rc, out, err = results[0]
    assert rc == 1 and "not remembered" in err
    assert 'unlock = "keyring"' not in (ws / "config.toml").read_text()


def test_no_session_bus_says_so_and_points_to_key_file(ws):
    """Under cron there is no session bus: no silent fallback (never a plaintext keyring)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSISTANT_", "DBUS_"))}
    env[ENV_PASSPHRASE] = PASS
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "vault", "remember"],
                       capture_output=True, text=True, env=env, timeout=60, start_new_session=True)
    assert r.returncode == 1
    assert "session bus" in r.stderr and "key_file" in r.stderr
    cfg = (ws / "config.toml").read_text().replace('unlock = ""', 'unlock = "keyring"')
    (ws / "config.toml").write_text(cfg)
    env.pop(ENV_PASSPHRASE)
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), "run", "--model",
                        "script:/nonexistent.json", "hello"], capture_output=True, text=True, env=env,
                       timeout=60, start_new_session=True)
    assert r.returncode == 1 and "keyring" in r.stdout + r.stderr and "key_file" in r.stdout + r.stderr
