"""Review (hostile): the prompt cache never reads, writes or deletes outside state/.

Found in review: state/prompt_cache/ was used by path, so a link planted there (state/ is
plain files the person or another tool may touch) made `save` write the model's state
elsewhere and `_trim` DELETE other people's *.state files there to fit the budget, and `load`
restore a state kept outside state/. The directory is now opened once without following a link
and every operation goes through that descriptor. Real files, real symlinks, tmp_path.
"""

from __future__ import annotations

import os

from assistant.models.prompt_cache import CacheKey, PromptCache

TOKENS = [1, 2, 3]


def _key(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + b"x" * 64)
    return CacheKey.build(model_path=model, params={"n_ctx": 512}, tokens=TOKENS)


def test_a_linked_cache_dir_is_neither_written_nor_trimmed(tmp_path):
    state = tmp_path / "ws" / "state"
    cache = PromptCache(state, 1 << 20)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    victim = elsewhere / "victim.state"
    victim.write_bytes(b"v" * (900 << 10))
    os.symlink(elsewhere, state / "prompt_cache")
    key = _key(tmp_path)
    assert cache.save(key, TOKENS, b"S" * (200 << 10)) is False
    assert sorted(os.listdir(elsewhere)) == ["victim.state"]
    assert victim.stat().st_size == 900 << 10
    assert cache.usage() == 0
    assert os.path.islink(state / "prompt_cache")


def test_a_valid_state_behind_a_linked_cache_dir_is_not_restored(tmp_path):
    state = tmp_path / "ws" / "state"
    cache = PromptCache(state, 1 << 20)
    key = _key(tmp_path)
    assert cache.save(key, TOKENS, b"REAL STATE")
    assert cache.load(key, TOKENS) == b"REAL STATE"
    moved = tmp_path / "moved"
    os.rename(state / "prompt_cache", moved)
    os.symlink(moved, state / "prompt_cache")
    assert cache.load(key, TOKENS) is None
    assert (moved / cache.path_for(key).name).exists()       # nothing outside state/ was touched


def test_a_cache_dir_open_to_others_is_not_used(tmp_path):
    state = tmp_path / "ws" / "state"
    cache = PromptCache(state, 1 << 20)
    key = _key(tmp_path)
    assert cache.save(key, TOKENS, b"REAL STATE")
    os.chmod(state / "prompt_cache", 0o777)
    assert cache.load(key, TOKENS) is None
    os.chmod(state / "prompt_cache", 0o700)
    assert cache.load(key, TOKENS) == b"REAL STATE"
