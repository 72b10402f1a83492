"""Random sequences of memory changes for the history property tests (run in-process or as a
child that the test kills with SIGKILL at a random instant).

Every project operation is journaled twice: a `begin` line (what it is about to write) before
it starts and a `done` line after it returned. Hand edits are journaled after the file was
written. The journal is flushed after each line (the page cache survives a SIGKILL)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys

from assistant.notes.history import Origin
from assistant.session import open_session

NOTES = ("a.md", "people/b.md", "c.md")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run(ws: str, seed: int, steps: int, journal_path: str) -> None:
    rnd = random.Random(seed)
    with open_session(ws, "watched", kind="api", transcript=False) as session, \
            open(journal_path, "a", encoding="utf-8") as journal:
        mem = session.memory

        def log(**rec) -> None:
            journal.write(json.dumps(rec) + "\n")
            journal.flush()

        for step in range(steps):
            path = rnd.choice(NOTES)
            op = rnd.choice(("assistant", "person", "hand", "remove", "revert", "assistant", "person"))
            disk = os.path.join(ws, "memory", path)
            content = f"---\ndescription: {op} {step}\n---\n{path} {seed}/{step} {rnd.random()}\n".encode()
            if op == "hand":
                os.makedirs(os.path.dirname(disk), exist_ok=True)
                with open(disk, "wb") as f:
                    f.write(content)
                log(op="hand", path=path, sha=sha(content))
                continue
            if op == "remove":
                if not os.path.exists(disk):
                    continue
                with open(disk, "rb") as f:
                    now = f.read()
                log(op="begin", source="removal", path=path, sha=sha(now))
                mem.remove(path)
                log(op="done", source="removal", path=path, sha=sha(now))
                continue
            if op == "revert":
                old = [v for v in session.history.versions(path) if not v.removed]
                if not old:
                    continue
                v = rnd.choice(old)
                content = session.history.object_bytes(v.sha256)
                origin = Origin("revert")
            elif op == "assistant":
                origin = Origin("assistant", model="script:test", sources=("web:example.org",))
            else:
                origin = Origin("person")
            log(op="begin", source=origin.source, path=path, sha=sha(content))
            mem.write(path, content, force=True, origin=origin)
            log(op="done", source=origin.source, path=path, sha=sha(content))


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
