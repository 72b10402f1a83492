"""The prompt cache file (assistant/models/prompt_cache.py) on the real filesystem: authenticated,
keyed, bounded, atomic, private; a failing file is ignored and removed. No model needed."""

from __future__ import annotations

import os
import stat

import pytest

from assistant.models.prompt_cache import DIR, KEY_FILE, CacheKey, PromptCache, PromptCacheError

TOKENS = [2, 105, 2364, 107, 9259, 1234, 88]
STATE = os.urandom(4096)


@pytest.fixture
def model_file(tmp_path):
    p = tmp_path / "m.gguf"
    p.write_bytes(b"GGUF" + b"\0" * 100)
    return p


def _key(model_file, tokens=TOKENS, **params):
    return CacheKey.build(model_path=model_file, params={"n_ctx": 2048, **params}, tokens=tokens)


def test_round_trip_private_and_atomic(tmp_path, model_file):
    cache = PromptCache(tmp_path / "state", 1 << 20)
    key = _key(model_file)
    assert cache.load(key, TOKENS) is None        # missing: simply not there
    assert cache.save(key, TOKENS, STATE)
    assert cache.load(key, TOKENS) == STATE
    path = cache.path_for(key)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "state" / DIR).stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "state" / KEY_FILE).stat().st_mode) == 0o600
    assert [p.name for p in (tmp_path / "state" / DIR).iterdir()] == [path.name]   # no temp left
    assert b"pickle" not in path.read_bytes()[:64] and path.read_bytes()[:2] != b"\x80\x04"


def test_anything_that_affects_the_state_changes_the_key(tmp_path, model_file):
    base = _key(model_file)
    assert _key(model_file, tokens=TOKENS[:-1] + [89]) != base
    assert _key(model_file, n_ctx=4096) != base
    assert _key(model_file, chat_format="chatml") != base
    os.utime(model_file, ns=(1, 1))
    assert _key(model_file) != base


@pytest.mark.parametrize("damage", ["flip", "truncate", "append", "empty", "other_workspace_key"])
def test_a_file_that_fails_is_ignored_and_removed(tmp_path, model_file, damage):
    cache = PromptCache(tmp_path / "state", 1 << 20)
    key = _key(model_file)
    cache.save(key, TOKENS, STATE)
    path = cache.path_for(key)
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 1
    elif damage == "truncate":
        data = data[:-100]
    elif damage == "append":
        data += b"x"
    elif damage == "empty":
        data = bytearray()
    else:   # a valid file made under another workspace's key
        other = PromptCache(tmp_path / "other", 1 << 20)
        other.save(key, TOKENS, STATE)
        data = bytearray(other.path_for(key).read_bytes())
    path.write_bytes(bytes(data))
    assert cache.load(key, TOKENS) is None
    assert not path.exists()


def test_a_file_renamed_to_another_key_is_refused(tmp_path, model_file):
    cache = PromptCache(tmp_path / "state", 1 << 20)
    k1, k2 = _key(model_file), _key(model_file, n_ctx=4096)
    cache.save(k1, TOKENS, STATE)
    os.replace(cache.path_for(k1), cache.path_for(k2))
    assert cache.load(k2, TOKENS) is None and not cache.path_for(k2).exists()


def test_disk_use_is_bounded(tmp_path, model_file):
    cache = PromptCache(tmp_path / "state", 10_000)
    keys = [_key(model_file, n_ctx=1000 + i) for i in range(5)]
    for k in keys:
        assert cache.save(k, TOKENS, os.urandom(3000))
    assert cache.usage() <= 10_000
    assert cache.load(keys[-1], TOKENS) is not None        # the newest is kept
    assert cache.load(keys[0], TOKENS) is None              # the oldest went
    assert not cache.save(_key(model_file, n_ctx=9), TOKENS, os.urandom(20_000))   # too big: not written


def test_a_symlinked_or_loose_key_file_is_refused(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    target = tmp_path / "elsewhere"
    target.write_bytes(os.urandom(32))
    (state / KEY_FILE).symlink_to(target)
    with pytest.raises(PromptCacheError):
        PromptCache(state, 1 << 20)
    (state / KEY_FILE).unlink()
    (state / KEY_FILE).write_bytes(os.urandom(32))
    os.chmod(state / KEY_FILE, 0o644)
    with pytest.raises(PromptCacheError, match="private"):
        PromptCache(state, 1 << 20)


def test_a_symlink_in_place_of_a_cache_file_is_not_followed(tmp_path, model_file):
    cache = PromptCache(tmp_path / "state", 1 << 20)
    key = _key(model_file)
    good = PromptCache(tmp_path / "state", 1 << 20)
    good.save(key, TOKENS, STATE)
    real = tmp_path / "real.state"
    os.replace(cache.path_for(key), real)
    cache.path_for(key).symlink_to(real)
    assert cache.load(key, TOKENS) is None
    assert real.exists()    # the link's target is untouched
