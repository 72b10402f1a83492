"""Root's one resolver translates an OSError once into an error carrying op, path and cause,
on both resolution paths (openat2 and the per-component walk)."""

import errno
import os

import pytest

from assistant.confine import ConfinementError, Root, openat2_available

MODES = ["walk"] + (["openat2"] if openat2_available() else [])


@pytest.fixture(params=MODES)
def root(request, tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "outside").mkdir()
    r = Root(tmp_path / "root", use_openat2=request.param == "openat2")
    assert r.uses_openat2 is (request.param == "openat2")
    yield r, tmp_path
    r.close()


def test_a_symlinked_component_names_op_path_and_cause(root):
    r, tmp = root
    os.symlink(tmp / "outside", tmp / "root" / "d")
    with pytest.raises(ConfinementError) as info:
        r.write_bytes("d/n.md", b"x")
    e = info.value
    assert (e.op, e.path) == ("write", "d/n.md")
    assert e.cause in (errno.ELOOP, errno.ENOTDIR) and "'d' is a symlink" in str(e)
    assert os.listdir(tmp / "outside") == []


def test_a_symlink_at_the_leaf_read(root):
    r, tmp = root
    (tmp / "outside" / "secret").write_text("s")
    os.symlink(tmp / "outside" / "secret", tmp / "root" / "n.md")
    with pytest.raises(ConfinementError) as info:
        r.read_bytes("n.md")
    assert (info.value.op, info.value.path) == ("read", "n.md") and "symlink" in str(info.value)


def test_a_grammar_refusal_is_op_validate(root):
    r, _ = root
    with pytest.raises(ConfinementError) as info:
        r.stat("a/../b")
    assert (info.value.op, info.value.path, info.value.cause) == ("validate", "a/../b", None)


def test_rename_onto_a_full_directory_names_both_paths(root):
    r, _ = root
    r.write_bytes("src/a.md", b"x")
    r.write_bytes("dir/inner.md", b"y")
    with pytest.raises(ConfinementError, match="cannot rename 'src' onto 'dir'") as info:
        r.rename("src", "dir")   # renameat: ENOTEMPTY
    assert (info.value.op, info.value.path, info.value.cause) == ("rename", "dir", errno.ENOTEMPTY)


def test_missing_is_still_file_not_found(root):
    r, _ = root
    with pytest.raises(FileNotFoundError, match="no such file 'nope.md'"):
        r.read_bytes("nope.md")
    with pytest.raises(FileNotFoundError, match="no such directory 'a'"):
        r.read_bytes("a/nope.md")
    assert r.exists("a/nope.md") is False


def test_a_fifo_at_the_leaf_is_refused_not_replaced(root):
    r, tmp = root
    r.mkdirs("p")
    os.mkfifo(tmp / "root" / "p" / "leaf")
    with pytest.raises(ConfinementError, match="a FIFO, not a file") as info:
        r.write_bytes("p/leaf", b"x")
    assert (info.value.op, info.value.path) == ("write", "p/leaf")
    assert sorted(os.listdir(tmp / "root" / "p")) == ["leaf"]   # no temp file left
