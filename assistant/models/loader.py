"""Pick and load the model backend for a session from `--model` and config.toml.

Guards that a model spec means exactly one thing and that a bad one is a clear ModelError:
- None (no --model): config model.path (relative to the workspace), or the embedded default
  Gemma 3 270M when that is empty, run by llama-cpp-python;
- "script:FILE.json": the scripted backend (assistant.models.scripted), FILE relative to the
  current directory;
- "llama:PATH" or a path ending in ".gguf": that GGUF with the rest of [model] from config;
- "openai:URL": an OpenAI-compatible server at URL (assistant.models.openai), the rest of
  [model] from config; so is no --model with [model] backend = "openai".
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from assistant.workspace.config import ConfigError, ModelConfig
from assistant.models.base import Model, ModelError
from assistant.models.llama_cpp import LlamaModel
from assistant.models.openai import OpenAIModel
from assistant.models.scripted import ScriptedModel

if TYPE_CHECKING:
    from assistant.secrets.vault import Vault
    from assistant.workspace.layout import Workspace

SCRIPT_PREFIX = "script:"
LLAMA_PREFIX = "llama:"
OPENAI_PREFIX = "openai:"
BACKENDS = ("llama", "openai")


def _model_config(ws: Workspace | None) -> dict[str, object]:
    """[model] as the backend reads it (the validated section; defaults without a workspace)."""
    try:
        return asdict(ws.config.model if ws is not None else ModelConfig())
    except ConfigError as exc:
        raise ModelError(str(exc)) from None


def _openai(cfg: dict, ws: "Workspace | None", vault: "Vault | None") -> Model:
    if cfg.get("protocol", "auto") not in ("auto", "actions"):
        raise ModelError(f"model.protocol {cfg.get('protocol')!r} needs the in-process backend (backend = \"llama\"); "
                         "a model server is driven with JSON actions: set protocol = \"auto\" or \"actions\"")

    try:
        timeout = ws.config.limits.tool_timeout if ws is not None else 30.0
    except ConfigError as exc:
        raise ModelError(str(exc)) from None
    return OpenAIModel(cfg, vault=vault, timeout=timeout)


def load_model(spec: str | None, ws: "Workspace | None", *, progress: TextIO | str | None = "stderr",
               vault: "Vault | None" = None) -> Model:
    """The Model for a session. `ws` is an assistant.workspace.layout.Workspace (or None: defaults).
    `progress`: where loading progress goes ("stderr" = sys.stderr at call time; None = nowhere).
    `vault`: the session's unlocked vault (the server backend's model.api_key names a secret)."""
    root = ws.root if ws is not None else None
    if spec is None or spec == "":
        cfg = _model_config(ws)
        backend = cfg.get("backend", "llama") or "llama"
        if backend not in BACKENDS:
            raise ModelError(f"model.backend {backend!r} is unknown; use \"llama\" (in process) or \"openai\" "
                             "(an OpenAI-compatible server at model.endpoint)")
        if backend == "openai":
            return _openai(cfg, ws, vault)

        return LlamaModel(_model_config(ws), root, progress=progress)
    if not isinstance(spec, str):
        raise ModelError(f"--model must be text, got {type(spec).__name__}")
    if spec.startswith(SCRIPT_PREFIX):
        path = spec[len(SCRIPT_PREFIX):]
        if not path:
            raise ModelError("--model script: needs a file, e.g. --model script:steps.json")

        return ScriptedModel(Path(path))
    if spec.startswith(OPENAI_PREFIX):
        url = spec[len(OPENAI_PREFIX):]
        if not url:
            raise ModelError("--model openai: needs the server's API base, e.g. --model openai:http://127.0.0.1:8080/v1")
        cfg = _model_config(ws)
        cfg["endpoint"] = url
        return _openai(cfg, ws, vault)
    if spec.startswith(LLAMA_PREFIX) or spec.endswith(".gguf"):
        path = spec[len(LLAMA_PREFIX):] if spec.startswith(LLAMA_PREFIX) else spec
        if not path:
            raise ModelError("--model llama: needs a GGUF file path, e.g. --model llama:models/my.gguf")

        cfg = _model_config(ws)
        # A path given on the command line is taken from the current directory.
        cfg["path"] = str(Path(path).expanduser().resolve())
        return LlamaModel(cfg, root, progress=progress)
    raise ModelError(
        f"unknown --model {spec!r}: use script:FILE.json (a scripted run), a .gguf file "
        "(or llama:PATH), openai:URL (a model server), or leave it out for the model in config.toml"
    )
