"""An object larger than the limit is never read into this process: `Git.blobs` learns sizes
with `cat-file --batch-check` and reads only the small ones (hostile review, attack 6: a 300 MB
note from an enrolled device was read whole before being refused by size)."""

from __future__ import annotations

from assistant.sync.git import Git

from sync_support import git


def test_an_object_over_the_limit_is_sized_not_read(tmp_path):
    repo = tmp_path / "r.git"
    git("init", "-q", "--bare", str(repo))
    big = tmp_path / "big"
    big.write_bytes(b"x" * 8_000_000)
    small = tmp_path / "small"
    small.write_bytes(b"small note\n")
    big_id = git("hash-object", "-w", str(big), git_dir=repo)
    small_id = git("hash-object", "-w", str(small), git_dir=repo)
    g = Git(repo, tmp_path)
    read = []
    run = g.run

    def counting(args, **kw):
        code, out = run(args, **kw)
        read.append(len(out))
        return code, out

    g.run = counting
    found = g.blobs([big_id, small_id, "0" * 40], limit=1_000_000)
    assert found == {big_id: 8_000_000, small_id: b"small note\n", "0" * 40: None}
    assert sum(read) < 1_000_000            # the 8 MB body never came through
