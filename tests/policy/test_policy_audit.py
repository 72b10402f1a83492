"""policy.audit: append-only lines, no content, concurrent writers never interleave."""

import json
import os
import threading

import pytest

from policy.audit import AuditError, AuditLog


def test_lines_are_appended_never_rewritten(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl")
    log.append({"event": "ruling", "kind": "memory", "target": "a.md", "verdict": "allow"})
    first = (tmp_path / "audit.jsonl").read_bytes()
    log.append({"event": "answer", "verdict": "deny"})
    assert (tmp_path / "audit.jsonl").read_bytes().startswith(first)
    rows = log.read()
    assert [r["event"] for r in rows] == ["ruling", "answer"]
    assert rows[0]["time"].endswith("Z")
    assert oct(os.stat(tmp_path / "audit.jsonl").st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("key", ["content", "current", "secret", "value"])
def test_content_bearing_keys_refused(tmp_path, key):
    with pytest.raises(AuditError, match="sha256"):
        AuditLog(tmp_path / "a.jsonl").append({key: "x"})
    assert not (tmp_path / "a.jsonl").exists()


def test_redact_applies_to_every_string(tmp_path):
    log = AuditLog(tmp_path / "a.jsonl", redact=lambda s: s.replace("hunter2", "[redacted]"))
    log.append({"reason": "hunter2 inside", "target": "x/hunter2.md", "n": 3})
    raw = (tmp_path / "a.jsonl").read_text()
    assert "hunter2" not in raw and raw.count("[redacted]") == 2


def test_symlinked_log_refused(tmp_path):
    (tmp_path / "real").write_text("")
    (tmp_path / "a.jsonl").symlink_to(tmp_path / "real")
    with pytest.raises(AuditError):
        AuditLog(tmp_path / "a.jsonl").append({"event": "x"})
    assert (tmp_path / "real").read_text() == ""


def test_concurrent_writers_write_whole_lines(tmp_path):
    log = AuditLog(tmp_path / "a.jsonl")

    def work(n):
        for i in range(200):
            log.append({"event": "ruling", "who": n, "i": i, "pad": "x" * 500})
    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / "a.jsonl").read_text().splitlines()
    assert len(lines) == 800
    assert {(r["who"], r["i"]) for r in map(json.loads, lines)} == {(n, i) for n in range(4) for i in range(200)}
