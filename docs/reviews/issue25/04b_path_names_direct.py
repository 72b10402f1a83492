"""The names git's fsck stops at fetch ('..', '.git', a '/' inside one entry) never reach the
path check over the wire (the fetch fails whole: see 01). Here they are put to the same check
integrate uses, Memory.check_path, on a real workspace, in case fsck is ever relaxed.
usage: PYTHONPATH=. python docs/reviews/issue25/04b_path_names_direct.py WORKSPACE"""
import sys
from pathlib import Path

from assistant.notes.writer import Refused
from assistant.session import open_session
from assistant.workspace.layout import open_workspace

names = ["../config.toml", "../../grants.json.md", "a/../b.md", "/etc/x.md", ".git/config.md", "state/x.md",
         "../state/sync/devices.json", "A.md/../x.md", "x.md/", "CON.md", "x.md\u0000.md", "\u2024\u2024/x.md",
         "x\u2215y.md", "Ä.md", "ﬁle.md", "a" * 300 + ".md", "memory/../../x.md", "~/x.md", "x.md.", "x.MD"]
ws = open_workspace(sys.argv[1])
with open_session(ws, "watched", kind="cli", interactive=False, transcript=False) as s:
    for n in names:
        try:
            print(f"ACCEPTED {n!r} -> {s.memory.check_path(n)!r}")
        except Refused as exc:
            print(f"refused  {n[:40]!r}: {str(exc)[:90]}")
