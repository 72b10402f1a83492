"""policy.fileio on the real filesystem: no-follow bounded reads that never hang, atomic writes
with one exact temp pattern, and directory watching through watchfiles' public API."""

import os
import pathlib
import stat
import threading
import time

import pytest

from policy import fileio
from policy.fileio import FileTooLargeError, NotRegularFile

ROOT = pathlib.Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ reads
def test_read_regular_reads_a_file_within_its_bound(tmp_path):
    (tmp_path / "f").write_bytes(b"hello")
    assert fileio.read_regular(tmp_path / "f", max_bytes=5) == b"hello"
    with pytest.raises(FileTooLargeError, match="5 bytes; the limit is 4"):
        fileio.read_regular(tmp_path / "f", max_bytes=4)


def test_read_refuses_a_symlink_without_touching_its_target(tmp_path):
    target = tmp_path / "secret"
    target.write_bytes(b"outside")
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(NotRegularFile, match="symlink"):
        fileio.read_regular(tmp_path / "link", max_bytes=100)


def test_read_of_a_fifo_fails_at_once_instead_of_hanging(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    t = time.monotonic()
    with pytest.raises(NotRegularFile, match="a FIFO, not a regular file"):
        fileio.read_regular(tmp_path / "fifo", max_bytes=100)
    assert time.monotonic() - t < 2


def test_read_of_a_directory_or_missing_file(tmp_path):
    with pytest.raises(NotRegularFile, match="a directory"):
        fileio.read_regular(tmp_path, max_bytes=100)
    with pytest.raises(FileNotFoundError):
        fileio.read_regular(tmp_path / "nope", max_bytes=100)


# ------------------------------------------------------------------ atomic writes
def test_write_atomic_is_0600_and_leaves_no_temp(tmp_path):
    old = os.umask(0)
    try:
        fileio.write_atomic(tmp_path / "grants.json", b"{}\n")
    finally:
        os.umask(old)
    assert (tmp_path / "grants.json").read_bytes() == b"{}\n"
    assert stat.S_IMODE((tmp_path / "grants.json").stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["grants.json"]


def test_write_atomic_replaces_a_symlink_entry_never_its_target(tmp_path):
    target = tmp_path / "outside"
    target.write_bytes(b"keep me")
    (tmp_path / "name").symlink_to(target)
    fileio.write_atomic(tmp_path / "name", b"new")
    assert target.read_bytes() == b"keep me"
    assert not (tmp_path / "name").is_symlink() and (tmp_path / "name").read_bytes() == b"new"


def test_write_atomic_without_replace_never_replaces(tmp_path):
    dfd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fileio.write_atomic("a.json", b"first", dir_fd=dfd, replace=False)
        with pytest.raises(FileExistsError):
            fileio.write_atomic("a.json", b"second", dir_fd=dfd, replace=False)
    finally:
        os.close(dfd)
    assert (tmp_path / "a.json").read_bytes() == b"first"
    assert os.listdir(tmp_path) == ["a.json"]


def test_a_failed_write_leaves_nothing(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        fileio.write_atomic(tmp_path / "d", b"x")   # rename onto a directory fails
    assert os.listdir(tmp_path) == ["d"] and os.listdir(tmp_path / "d") == []


def test_replacing_publishes_a_folder_only_when_complete(tmp_path):
    dest = tmp_path / "ws"
    with pytest.raises(RuntimeError):
        with fileio.replacing(dest, directory=True) as tmp:
            (tmp / "half").write_text("x")
            raise RuntimeError("copy failed")
    assert os.listdir(tmp_path) == []
    with fileio.replacing(dest, directory=True) as tmp:
        assert fileio.is_temp_name(tmp.name)
        (tmp / "whole").write_text("x")
    assert os.listdir(dest) == ["whole"] and os.listdir(tmp_path) == ["ws"]


def test_temp_names_have_one_exact_pattern():
    names = {fileio.temp_name() for _ in range(50)}
    assert len(names) == 50 and all(fileio.is_temp_name(n) for n in names)
    for person in (".tmp-chapter3-draft.tex", ".tmp-0123456789abcdef", ".tmp-assistant-0123",
                   ".tmp-assistant-0123456789ABCDEF", ".tmp-assistant-0123456789abcdef.tex", "tmp-assistant-x"):
        assert not fileio.is_temp_name(person), person


# ------------------------------------------------------------------ watching
def test_watch_dir_first_batch_means_live_then_a_change_is_seen(tmp_path):
    stop = threading.Event()
    seen = []
    gen = fileio.watch_dir(tmp_path, stop_event=stop, tick=0.05)
    first = next(gen)   # the watches are in place from here on
    assert first == set()
    (tmp_path / "new.md").write_text("x")
    end = time.monotonic() + 10
    for batch in gen:
        seen.extend(p for _, p in batch)
        if seen or time.monotonic() > end:
            break
    stop.set()
    gen.close()
    assert str(tmp_path / "new.md") in seen


def test_nothing_uses_watchfiles_private_rust_notify():
    users = [str(p.relative_to(ROOT)) for d in ("assistant", "policy") for p in (ROOT / d).rglob("*.py")
             if "RustNotify" in p.read_text(encoding="utf-8")]
    assert users == []
