"""Pick and load the model backend for a session from `--model` and config.toml.

Guards that a model spec means exactly one thing and that a bad one is a clear ModelError:
- None (no --model): config model.path (relative to the workspace), or the embedded default
  Gemma 3 270M when that is empty, run by llama-cpp-python;
- "script:FILE.json": the scripted backend (assistant.models.scripted), FILE relative to the
  current directory;
- "llama:PATH" or a path ending in ".gguf": that GGUF with the rest of [model] from config.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from assistant.config import ModelConfig
from assistant.models.base import Model, ModelError

if TYPE_CHECKING:
    from assistant.workspace import Workspace

SCRIPT_PREFIX = "script:"
LLAMA_PREFIX = "llama:"


def _model_config(ws: Workspace | None) -> dict[str, object]:
    """[model] as the backend reads it (the validated section; defaults without a workspace)."""
    return asdict(ws.config.model if ws is not None else ModelConfig())


def load_model(spec: str | None, ws: "Workspace | None", *, progress: TextIO | str | None = "stderr") -> Model:
    """The Model for a session. `ws` is an assistant.workspace.Workspace (or None: defaults).
    `progress`: where loading progress goes ("stderr" = sys.stderr at call time; None = nowhere)."""
    root = ws.root if ws is not None else None
    if spec is None or spec == "":
        from assistant.models.llama_cpp import LlamaModel

        return LlamaModel(_model_config(ws), root, progress=progress)
    if not isinstance(spec, str):
        raise ModelError(f"--model must be text, got {type(spec).__name__}")
    if spec.startswith(SCRIPT_PREFIX):
        path = spec[len(SCRIPT_PREFIX):]
        if not path:
            raise ModelError("--model script: needs a file, e.g. --model script:steps.json")
        from assistant.models.scripted import ScriptedModel

        return ScriptedModel(Path(path))
    if spec.startswith(LLAMA_PREFIX) or spec.endswith(".gguf"):
        path = spec[len(LLAMA_PREFIX):] if spec.startswith(LLAMA_PREFIX) else spec
        if not path:
            raise ModelError("--model llama: needs a GGUF file path, e.g. --model llama:models/my.gguf")
        from assistant.models.llama_cpp import LlamaModel

        cfg = _model_config(ws)
        # A path given on the command line is taken from the current directory.
        cfg["path"] = str(Path(path).expanduser().resolve())
        return LlamaModel(cfg, root, progress=progress)
    raise ModelError(
        f"unknown --model {spec!r}: use script:FILE.json (a scripted run), a .gguf file "
        "(or llama:PATH), or leave it out for the model in config.toml"
    )
