"""`assistant model pull REPO FILE` and `assistant model list`: get a GGUF from a Hugging Face-style
hub and make it the workspace's model; show what is configured and present.

Guards that a pull either ends with a verified, loadable model set in config.toml or changes
nothing: the file is downloaded by huggingface_hub (resumable: an interrupted download continues
from its .incomplete file; progress bar on stderr; HF_ENDPOINT picks the hub) into the workspace's
models/ folder, its size and sha256 are shown (and compared with the hub's LFS sha256 when the hub
gives one), it must start with the GGUF magic and load in llama.cpp, and only then is
[model] path rewritten in config.toml (one line, atomically, the file's mode kept).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path
from typing import Callable, TypeVar

import click

from assistant.models.base import ModelError
from assistant.models.llama_cpp import LlamaModel, check_model_file
from assistant.workspace.config import ConfigError
from assistant.workspace.layout import CONFIG, WorkspaceError, record_setting
from assistant.cli.common import (
    EXIT_OK, echo_json, fail, get_workspace, json_option, workspace_group,
)

T = TypeVar("T")

MODELS_DIR = "models"
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def set_model_path(config_path: Path, value: str) -> None:
    """Set `path = ...` in [model] of config.toml (or add it), atomically; the rest untouched."""
    record_setting(config_path, "model", "path", value)


model_group = workspace_group("model", "Get a GGUF model from a Hugging Face-style hub, and see what is configured.")


@model_group.command("pull")
@click.argument("repo")
@click.argument("file")
@click.option("--revision", default=None, metavar="REV", help="Branch, tag or commit (default: main).")
@click.option("--no-set", is_flag=True, help="Download and verify only; leave [model] path as it is.")
def pull_command(repo: str, file: str, revision: str | None, no_set: bool) -> None:
    """Download FILE (a .gguf) from hub repository REPO (owner/name) into the workspace's models/,
    verify it loads, and set [model] path to it.

    Resumable (run it again after an interruption); the hub is https://huggingface.co unless
    HF_ENDPOINT names another. Example: assistant model pull Qwen/Qwen2.5-3B-Instruct-GGUF
    qwen2.5-3b-instruct-q4_k_m.gguf
    """
    ws = get_workspace()
    if not _REPO.match(repo):
        fail(f"REPO {repo!r} must look like owner/name (e.g. Qwen/Qwen2.5-3B-Instruct-GGUF)")
    if not file.endswith(".gguf") or file.startswith(("/", "\\")) or ".." in Path(file).parts or "\\" in file:
        fail(f"FILE {file!r} must be a .gguf file path inside the repository")
    try:
        import huggingface_hub as hub
    except ImportError:
        fail("`assistant model pull` needs huggingface_hub: pip install 'assistant[hub]'")
    endpoint = os.environ.get("HF_ENDPOINT") or None
    dest_dir = ws.root / MODELS_DIR
    dest_dir.mkdir(mode=0o700, exist_ok=True)
    url = hub.hf_hub_url(repo, file, revision=revision, endpoint=endpoint)
    meta = _ask_hub(lambda: hub.get_hf_file_metadata(url),
                    missing=f"{repo} has no file {file} at {endpoint or 'https://huggingface.co'} "
                            "(check REPO, FILE and --revision)",
                    refused=f"the hub refused {url}", unreachable=lambda exc: f"cannot reach the hub for {url}: {exc}")
    expected = (meta.etag or "").strip('"').lower()
    size = meta.size
    click.echo(f"downloading {repo}/{file} ({_mib(size)}) into {dest_dir}", err=True)
    got = Path(_ask_hub(lambda: hub.hf_hub_download(repo, file, revision=revision, local_dir=dest_dir,
                                                    endpoint=endpoint),
                        missing=f"{repo} has no file {file}", refused="the download failed",
                        unreachable=lambda exc: f"the download failed: {exc} (run the same command again to resume)"))
    digest = _sha256(got)
    actual = got.stat().st_size
    click.echo(f"size   {actual} bytes ({_mib(actual)})")
    click.echo(f"sha256 {digest}")
    if size is not None and actual != size:
        got.unlink(missing_ok=True)
        fail(f"{file}: the hub announced {size} bytes, got {actual}; removed it, run again")
    if _SHA256.match(expected) and expected != digest:
        got.unlink(missing_ok=True)
        fail(f"{file}: sha256 {digest} does not match the hub's {expected}; removed it, run again")

    try:
        check_model_file(got)
        LlamaModel({"path": str(got), "n_ctx": 256, "n_threads": 1}, ws.root, progress=None)
    except ModelError as exc:
        fail(f"{file} was downloaded but does not load: {exc}")
    click.echo(f"verified: {got.name} loads in llama.cpp")
    rel = got.relative_to(ws.root).as_posix()
    if no_set:
        click.echo(f"not changing config.toml; to use it: set [model] path = \"{rel}\"")
        sys.exit(EXIT_OK)
    try:
        set_model_path(ws.root / CONFIG, rel)
    except (OSError, WorkspaceError) as exc:
        fail(f"could not update {ws.root / CONFIG}: {exc}")
    click.echo(f"[model] path = \"{rel}\" in {ws.root / CONFIG}")
    click.echo("check the prompt format: [model] chat_format (\"auto\" uses the model's own template)")


def _ask_hub(call: Callable[[], T], *, missing: str, refused: str, unreachable: Callable[[OSError], str]) -> T:
    """call()'s result; a hub error ends the command with the words given."""
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, RepositoryNotFoundError

    try:
        return call()
    except (RepositoryNotFoundError, EntryNotFoundError):
        fail(missing)
    except HfHubHTTPError as exc:
        fail(f"{refused}: {str(exc).splitlines()[0]}")
    except OSError as exc:
        fail(unreachable(exc))


def _mib(n: int | None) -> str:
    return "unknown size" if n is None else f"{n / (1024 * 1024):.1f} MiB"


@model_group.command("list")
@json_option()
def list_command(as_json: bool) -> None:
    """Show the configured model and the GGUF files in the workspace's models/ folder."""
    ws = get_workspace()
    from dataclasses import asdict

    try:
        cfg = asdict(ws.config.model)
    except ConfigError as exc:
        fail(str(exc))
    backend = cfg.get("backend", "llama") or "llama"
    configured = str(cfg.get("path") or "")
    if configured:
        p = Path(configured).expanduser()
        p = p if p.is_absolute() else ws.root / p
        present = p.is_file()
    else:
        p, present = None, True
    files = []
    d = ws.root / MODELS_DIR
    if d.is_dir():
        for f in sorted(d.glob("*.gguf")):
            if f.is_file() and not f.is_symlink():
                files.append({"path": f.relative_to(ws.root).as_posix(), "bytes": f.stat().st_size,
                              "configured": p is not None and f.resolve() == p.resolve()})
    out = {"backend": backend, "path": configured, "present": present,
           "endpoint": cfg.get("endpoint", "") if backend == "openai" else "",
           "name": cfg.get("name", "") if backend == "openai" else "",
           "chat_format": cfg.get("chat_format", "gemma"), "files": files}
    if as_json:
        echo_json(out)
        return
    if backend == "openai":
        click.echo(f"configured: server {out['endpoint'] or '(model.endpoint not set)'} "
                   f"model {out['name'] or '(its only model)'}")
    elif configured:
        click.echo(f"configured: {configured} ({'present' if present else 'MISSING'}), chat_format "
                   f"{out['chat_format']}")
    else:
        click.echo("configured: the embedded Gemma 3 270M (model.path is empty)")
    if files:
        click.echo(f"in {d}:")
        for f in files:
            click.echo(f"  {'*' if f['configured'] else ' '} {f['path']}  {_mib(f['bytes'])}")
    else:
        click.echo(f"no GGUF files in {d} (get one with `assistant model pull REPO FILE`)")


COMMANDS = [model_group]
