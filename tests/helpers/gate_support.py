"""Test support for the gate and approval tests (no tests here): an unattended gate on a
workspace's files, a ruling asked in a thread, waiting for the request file, a FIFO unblocked."""

from __future__ import annotations

import json
import os
import threading
import time

from assistant.workspace.config import parse as parse_config
from policy.gate import Gate


def unattended_gate(ws, **approvals):
    """An unattended gate on WS's grants, inbox and audit log; APPROVALS overrides [approvals]."""
    cfg = parse_config({"approvals": {"channel": "inbox", "timeout": "20s", **approvals}})
    return Gate.for_workspace("unattended", run_id="acc-run", config=cfg,
                              grants_path=ws / "grants.json",
                              approvals_dir=ws / "state" / "approvals",
                              audit_path=ws / "state" / "audit.jsonl")


def ask_in_thread(gate, target="people/lina.md", content=b"Lina likes tea\n",
                  current=b"Lina likes coffee\n"):
    """gate.authorize a memory write in a daemon thread: (thread, {"d": ruling once done})."""
    res = {}

    def go():
        res["d"] = gate.authorize("memory", target, content=content, current=current,
                                  summary=f"update {target}")

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t, res


def wait_request_file(ws, timeout=10.0):
    """The first request filed in WS's inbox, as JSON; AssertionError after TIMEOUT seconds."""
    inbox = ws / "state" / "approvals"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if inbox.is_dir():
            reqs = [p for p in inbox.iterdir()
                    if p.suffix == ".json" and not p.name.startswith(".")
                    and "answer" not in p.name]
            if reqs:
                return json.loads(reqs[0].read_text())
        time.sleep(0.02)
    raise AssertionError("no request filed")


def in_thread(fn):
    """Run FN in a daemon thread: (thread, {"value": result} or {"error": exception})."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # surfaced by the test
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def unblock_fifo(path):
    """Open a FIFO for writing (non-blocking if possible) so a reader stuck in open() returns."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    except OSError:
        pass


def run_past_fifo(fn, fifo, hang_message: str):
    """Run FN, which a FIFO at FIFO might hang, in a thread; see `join_past_fifo`."""
    t, out = in_thread(fn)
    return join_past_fifo(t, out, fifo, hang_message)


def join_past_fifo(t, out, fifo, hang_message: str):
    """Join the `in_thread` thread T; a hang on the FIFO at FIFO fails the test with
    HANG_MESSAGE (the FIFO is then opened for writing until the thread returns). Returns the
    thread's value, or raises the exception it raised."""
    t.join(15)   # a hang is forever; this bound only has to outlast a busy CI machine
    hung = t.is_alive()
    while t.is_alive():
        unblock_fifo(fifo)
        t.join(0.2)
    assert not hung, hang_message
    if "error" in out:
        raise out["error"]
    return out["value"]
