#!/bin/bash
# A (enrolled) sends a version whose provenance (run, model, sources, approval, scope, grant,
# time) holds terminal escapes, and replaces a note by a submodule (160000) entry.
# `memory log`, `sync status` and `doctor` must show the escapes escaped.
. "$(dirname "$0")/lib.sh"; setup
echo one | a memory write one.md >/dev/null; echo keep | a memory write gl.md >/dev/null
a sync >/dev/null; b sync >/dev/null
E=$'\e[2J\e]0;pwn\a\r'
"$PY" - "$T/spec.json" "$E" <<'P'
import json, sys
e = sys.argv[2]
spec = {"files": [["100644", "notes/one.md", "two\n"], ["160000", "notes/gl.md", "0123456789abcdef0123456789abcdef01234567"]],
        "events": [{"op": "version", "path": "one.md", "time": "2026-01-01T00:00:00.000000Z" + e, "source": "person",
                    "run": "r" + e, "model": "m" + e, "sources": ["s" + e], "approval": "ap" + e, "scope": "sc" + e,
                    "grant": "g" + e, "v": 0}],
        "versions": ["two\n"]}
json.dump(spec, open(sys.argv[1], "w"))
P
"$PY" "$ATTACKS/forge.py" "$T/A" "$T/remote.git" A "$T/spec.json" >/dev/null
b sync > "$T/out" 2>&1; b memory log >> "$T/out" 2>&1; b memory log --json >> "$T/out" 2>&1
b sync status >> "$T/out" 2>&1; b doctor >> "$T/out" 2>&1
echo "raw ESC/BEL/CR bytes in the output: $(tr -cd '\033\007\r' < "$T/out" | wc -c)"
grep -a -e "gl.md" -e "one.md" "$T/out" | cut -c1-220
