#!/bin/bash
# A (enrolled, compromised) sends one note of 300 MB. B refuses it by size (max_note_bytes), but
# only after `git cat-file --batch` has piped all of it into B's Python process: the size cap
# does not bound memory or time; a few GB exhaust B's memory or run past the 60 s bound.
. "$(dirname "$0")/lib.sh"; setup
SIZE=${SIZE:-300000000}
echo one | a memory write one.md >/dev/null; a sync >/dev/null; b sync >/dev/null
forge '{"files": [["100644", "notes/one.md", "one\n"], ["100644", "notes/big.md", {"size": '"$SIZE"'}]]}' >/dev/null
echo "--- B syncs (max RSS of the sync process):"
/usr/bin/time -f "max RSS %M KB, %e s" "$PY" -m assistant -w "$T/B" sync 2>&1 | cut -c1-200
