"""A compromised enrolled device: sign an arbitrary commit as device NAME with its own key.

usage: forge.py WS_OF_DEVICE REMOTE NAME SPEC.json
SPEC: {"files": [[mode, "path", "content"]...], "events": [...], "message_extra": ""}
path is split on '/' into tree entries unless it is given as ["raw entry", ...] (a list of
components, each used verbatim as one tree entry name: '..', names holding '/', etc.).
Builds the tree with `git hash-object --literally` (no checks), parents it on the branch's head
on the remote, signs (name, tree, parent) with WS/state/sync/device.key and pushes it.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.environ.get("PYTHONPATH") or str(Path(__file__).resolve().parents[1]))
from assistant.sync.keys import DeviceKey  # noqa: E402

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(gd, *args, input=None):
    return subprocess.run(["git", "--git-dir", gd, *args], input=input, capture_output=True,
                          env=ENV, check=True).stdout


def put_blob(gd, data: bytes) -> str:
    return git(gd, "hash-object", "-w", "--stdin", "--literally", input=data).decode().strip()


def put_tree(gd, entries) -> str:
    raw = b""
    for mode, name, oid in sorted(entries, key=lambda e: e[1] + (b"/" if e[0] == "40000" else b"")):
        raw += mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid)
    return git(gd, "hash-object", "-t", "tree", "-w", "--stdin", "--literally", input=raw).decode().strip()


def build(gd, node) -> str:
    entries = []
    for name, val in node.items():
        if isinstance(val, dict):
            entries.append(("40000", name, build(gd, val)))
        else:
            mode, data = val
            oid = data.decode() if mode == "160000" else put_blob(gd, data)
            entries.append((mode, name, oid))
    return put_tree(gd, entries)


def main():
    ws, remote, name, spec_file = sys.argv[1:5]
    spec = json.loads(Path(spec_file).read_text())
    tmp = tempfile.mkdtemp()
    gd = tmp + "/g.git"
    subprocess.run(["git", "init", "-q", "--bare", gd], check=True, env=ENV)
    ref = f"refs/heads/devices/{name}"
    subprocess.run(["git", "--git-dir", gd, "fetch", "-q", remote, f"+{ref}:{ref}"], env=ENV,
                   capture_output=True)
    try:
        parent = git(gd, "rev-parse", "-q", "--verify", ref).decode().strip()
    except subprocess.CalledProcessError:
        parent = None
    root: dict = {}
    files = list(spec.get("files", []))
    files.append(["100644", "sync/events.jsonl",
                  "".join(json.dumps(e) + "\n" for e in spec.get("events", []))])
    for i, data in enumerate(spec.get("versions", [])):
        files.append(["100644", f"sync/versions/{i}", data])
    for mode, path, content in files:
        parts = path if isinstance(path, list) else path.split("/")
        node = root
        for p in parts[:-1]:
            node = node.setdefault(p.encode("utf-8", "surrogateescape"), {})
        if isinstance(content, dict):
            data = content.get("text", "x").encode() * content["size"]
        else:
            data = content.encode("utf-8", "surrogateescape")
        node[parts[-1].encode("utf-8", "surrogateescape")] = (mode, data)
    tree = build(gd, root)
    key = DeviceKey.load(Path(ws) / "state" / "sync")
    sig = key.sign(name, tree, parent)
    msg = f"sync from {name}\n\nSync-Device: {name}\nSync-Signature: {sig}\n{spec.get('message_extra', '')}"
    args = ["-c", "user.name=x", "-c", "user.email=x@x", "commit-tree", tree, "-m", msg] + (["-p", parent] if parent else [])
    commit = git(gd, *args).decode().strip()
    git(gd, "update-ref", ref, commit)
    subprocess.run(["git", "--git-dir", gd, "push", "-q", "--force", remote, f"{ref}:{ref}"], check=True, env=ENV)
    print(commit)


if __name__ == "__main__":
    main()
