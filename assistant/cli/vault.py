"""`assistant vault`: init, set, list, remove, passwd.

`vault set NAME --host HOST` binds a secret to the hosts web_fetch may send it to.

Guards the ways a secret value can enter or show: values come from stdin or a hidden
prompt, never from argv (where `ps` and shell history would keep them); listing shows names
and dates, never values; every refusal is one line on stderr with the reason.
"""

from __future__ import annotations

import os
import sys

import click

from assistant.display.localtime import local_time
from assistant.secrets.remembered import KeyringUnavailable, forget, remember
from assistant.workspace.layout import WorkspaceError, record_setting
from assistant.secrets.vault import (
    ENV_NEW_PASSPHRASE, ENV_PASSPHRASE, Vault, VaultError, VaultLocked, ask_on_terminal, kdf_settings,
    normalize_hosts, read_key_file, record_required, unlock, validate_name, validate_value,
)
from assistant.cli.common import (
    echo_json, fail, get_workspace, is_tty, json_option, workspace_group,
)


def _prompt_hidden(label: str, *, confirm: bool = False) -> str:
    """A hidden prompt on the terminal (stdin, or the controlling terminal when stdin is a pipe
    carrying a value). A passphrase is never read from a pipe: with no terminal, fail saying
    how to give one (the env or the key file)."""
    what = label[:1].lower() + label[1:]   # "Value for GitHub_Token" -> "value for GitHub_Token"
    try:
        first = ask_on_terminal(label)
        if confirm and ask_on_terminal(f"{label} (again)") != first:
            fail(f"{what}: the two entries do not match")
    except VaultLocked as exc:
        fail(f"no {what} given: {exc}")
    except (EOFError, KeyboardInterrupt):
        fail(f"no {what} given")
    return first


def _open(ws) -> Vault:
    if not ws.vault_path.exists():
        fail(f"no vault in {ws.root} yet: create one with `assistant vault init`")
    try:
        return unlock(ws, interactive=True)
    except VaultError as exc:
        fail(str(exc))



def _read_value(name: str) -> str:
    if is_tty(sys.stdin):
        return _prompt_hidden(f"Value for {name}", confirm=True)
    # Not a terminal: the value is the whole of stdin (the passphrase never is).
    data = sys.stdin.read()
    if data.endswith("\r\n"):
        data = data[:-2]
    elif data.endswith("\n"):
        data = data[:-1]
    if not data:
        fail(f"no value for {name} on stdin (pipe it in, or run on a terminal to be asked)")
    return data


vault_group = workspace_group("vault", """Encrypted secrets (vault.enc): the leak scanner blocks and redacts their values.

    Unlock with $ASSISTANT_VAULT_PASSPHRASE, a key file ([vault] key_file in config.toml,
    mode 600), the OS keyring (`vault remember`), or the hidden prompt.
    """)


@vault_group.command("init")
def init_cmd() -> None:
    """Create an empty vault.enc (the KDF cost comes from [vault] in config.toml)."""
    ws = get_workspace("vault")
    if ws.vault_path.exists() or ws.vault_path.is_symlink():
        fail(f"{ws.vault_path} already exists; refusing to overwrite it")
    try:
        ops, mem = kdf_settings(ws)
        passphrase = os.environ.get(ENV_PASSPHRASE) or read_key_file(ws)
    except VaultError as exc:
        fail(str(exc))
    if not passphrase:
        passphrase = _prompt_hidden("New vault passphrase", confirm=True)
    if not passphrase:
        fail("the vault passphrase cannot be empty")
    try:
        Vault.create(ws.vault_path, passphrase, opslimit=ops, memlimit=mem)
    except VaultError as exc:
        fail(str(exc))
    click.echo(f"created {ws.vault_path}")
    # From now on a session refuses to start without vault.enc (recorded in config.toml, which
    # deleting state/ does not erase).
    problem = record_required(ws)
    if problem:
        click.echo(f"warning: {problem}", err=True)


@vault_group.command("set")
@click.argument("name")
@click.option("--host", "hosts", multiple=True, metavar="HOST",
              help="A host web_fetch may send this secret to (repeatable), e.g. api.example.com "
                   "or 127.0.0.1:8080. Replaces the hosts bound before; without --host an "
                   "update keeps them. A secret bound to no host is never sent by web_fetch.")
def set_cmd(name: str, hosts: tuple[str, ...]) -> None:
    """Store a secret under NAME. The value is read from stdin or a hidden prompt, never argv."""
    ws = get_workspace("vault")
    try:
        validate_name(name)
        bound = normalize_hosts(hosts) if hosts else None
    except VaultError as exc:
        fail(str(exc))
    vault = _open(ws)
    value = _read_value(name)
    try:
        validate_value(value)
        existed = name in vault
        was_bound = vault.hosts(name) if existed else ()
        vault.set(name, value, hosts=bound)
        now_bound = vault.hosts(name)
    except VaultError as exc:
        fail(str(exc))
    where = f" (web_fetch may send it to: {', '.join(now_bound)})" if now_bound else ""
    click.echo(f"{'updated' if existed else 'stored'} {name}{where}")
    dropped = [h for h in was_bound if h not in now_bound]
    if dropped:   # --host replaces; never drop a binding without saying so
        click.echo(f"note: {name} is no longer sent to {', '.join(dropped)} (--host replaces the hosts; "
                   f"`assistant vault hosts {name} --add HOST` adds one)", err=True)


@vault_group.command("hosts")
@click.argument("name")
@click.option("--add", "add", multiple=True, metavar="HOST",
              help="Also allow web_fetch to send this secret to HOST (repeatable).")
@click.option("--remove", "remove", multiple=True, metavar="HOST",
              help="No longer send this secret to HOST (repeatable).")
@json_option("Machine-readable: {name, hosts}.")
def hosts_cmd(name: str, add: tuple[str, ...], remove: tuple[str, ...], as_json: bool) -> None:
    """Show or change the hosts NAME is bound to, without re-entering its value.

    Without --add/--remove, lists them. A secret bound to no host is never sent by web_fetch.
    """
    ws = get_workspace()
    try:
        validate_name(name)
        added = normalize_hosts(add) if add else ()
        removed = normalize_hosts(remove) if remove else ()
    except VaultError as exc:
        fail(str(exc))
    vault = _open(ws)
    if name not in vault:
        fail(f"no secret named {name} in the vault (`assistant vault list` shows them)")
    before = vault.hosts(name)
    missing = [h for h in removed if h not in before]
    if missing:
        fail(f"{name} is not bound to {', '.join(missing)} (bound to: {', '.join(before) or 'no host'})")
    if added or removed:
        after = tuple(h for h in dict.fromkeys((*before, *added)) if h not in removed)
        try:
            vault.set_hosts(name, after)
        except VaultError as exc:
            fail(str(exc))
    now = vault.hosts(name)
    if as_json:
        echo_json({"name": name, "hosts": list(now)})
        return
    if added or removed:
        click.echo(f"{name}: web_fetch may send it to: {', '.join(now) or 'no host (never sent)'}"
                   f" (was: {', '.join(before) or 'no host'})")
    else:
        click.echo(f"{name}: {', '.join(now) or 'no host (never sent by web_fetch)'}")


@vault_group.command("remember")
def remember_cmd() -> None:
    """Keep the vault passphrase in the OS keyring, so commands stop asking for it.

    Uses the Secret Service (GNOME Keyring, KWallet), the macOS Keychain or the Windows
    Credential Locker, never a plaintext file, and sets [vault] unlock = "keyring" in
    config.toml. The passphrase is checked against the vault before it is stored. Cron has no
    desktop session: for scheduled runs use [vault] key_file instead.
    """
    ws = get_workspace()
    if not ws.vault_path.exists():
        fail(f"no vault in {ws.root} yet: create one with `assistant vault init`")
    passphrase = os.environ.get(ENV_PASSPHRASE) or _prompt_hidden("Vault passphrase")
    try:
        Vault.open(ws.vault_path, passphrase)
    except VaultError as exc:
        fail(f"not remembered: {exc}")
    try:
        where = remember(ws.root, passphrase)
    except KeyringUnavailable as exc:
        fail(f"not remembered: {exc}")
    try:
        record_setting(ws.config_path, "vault", "unlock", "keyring")
    except WorkspaceError as exc:
        fail(f"remembered in {where}, but config.toml could not be updated ({exc}): "
             "set [vault] unlock = \"keyring\" yourself")
    click.echo(f"remembered the passphrase of {ws.vault_path} in the OS keyring ({where}); "
               "config.toml: [vault] unlock = \"keyring\"")


@vault_group.command("forget")
def forget_cmd() -> None:
    """Remove the remembered passphrase from the OS keyring (and [vault] unlock = "keyring")."""
    ws = get_workspace()
    try:
        had = forget(ws.root)
    except KeyringUnavailable as exc:
        fail(str(exc))
    if ws.config.vault.unlock == "keyring":
        try:
            record_setting(ws.config_path, "vault", "unlock", "")
        except WorkspaceError as exc:
            fail(f"config.toml could not be updated ({exc}): set [vault] unlock = \"\" yourself")
    click.echo("forgot the remembered passphrase; commands will ask for it again" if had
               else "no passphrase was remembered for this workspace")


@vault_group.command("list")
@json_option("Machine-readable: [{name, set_at, hosts}].")
def list_cmd(as_json: bool) -> None:
    """Names of the stored secrets, when each was set and the hosts web_fetch may send it to
    (never the values)."""
    ws = get_workspace("vault")
    vault = _open(ws)
    rows = vault.listing()
    if as_json:
        echo_json([{"name": n, "set_at": t, "hosts": list(h)} for n, t, h in rows])
        return
    if not rows:
        click.echo("(no secrets)")
        return
    width = max(len(n) for n, _, _ in rows)
    for n, t, h in rows:
        click.echo(f"{n.ljust(width)}  {local_time(t)}  hosts: {', '.join(h) if h else '(none: not usable by web_fetch)'}")


@vault_group.command("remove")
@click.argument("name")
def remove_cmd(name: str) -> None:
    """Delete the secret NAME."""
    ws = get_workspace("vault")
    vault = _open(ws)
    try:
        vault.remove(name)
    except VaultError as exc:
        fail(str(exc))
    click.echo(f"removed {name}")


@vault_group.command("passwd")
def passwd_cmd() -> None:
    """Change the vault passphrase (new salt; KDF cost from config.toml).

    The new passphrase comes from $ASSISTANT_VAULT_NEW_PASSPHRASE or a hidden prompt.
    """
    ws = get_workspace("vault")
    vault = _open(ws)
    try:
        ops, mem = kdf_settings(ws)
    except VaultError as exc:
        fail(str(exc))
    new = os.environ.get(ENV_NEW_PASSPHRASE) or _prompt_hidden("New vault passphrase", confirm=True)
    if not new:
        fail("the new passphrase cannot be empty")
    try:
        vault.change_passphrase(new, opslimit=ops, memlimit=mem)
    except VaultError as exc:
        fail(str(exc))
    click.echo("passphrase changed")
    if os.environ.get(ENV_PASSPHRASE) or read_key_file_safely(ws):
        click.echo(
            f"note: update {ENV_PASSPHRASE} / your key file to the new passphrase", err=True
        )


def read_key_file_safely(ws) -> bool:
    try:
        return read_key_file(ws) is not None
    except VaultError:
        return True


COMMANDS = [vault_group]
