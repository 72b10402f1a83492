#!/bin/bash
# kill -9 of B's sync part-way through integrating 300 notes from A, at several moments; the
# next sync must complete: every note as A has it, each imported version logged once.
. "$(dirname "$0")/lib.sh"; setup
N=${N:-300}
"$PY" - "$T/spec.json" "$N" <<'P'
import json, sys
n = int(sys.argv[2])
spec = {"files": [["100644", f"notes/n{i}.md", f"note {i}\n"] for i in range(n)],
        "events": [{"op": "version", "path": f"n{i}.md", "time": "2026-01-01T00:00:00.000000Z", "source": "person", "v": i} for i in range(n)],
        "versions": [f"note {i}\n" for i in range(n)]}
json.dump(spec, open(sys.argv[1], "w"))
P
"$PY" "$ATTACKS/forge.py" "$T/A" "$T/remote.git" A "$T/spec.json" >/dev/null
for delay in ${DELAYS:-2.5 3.5 5}; do
  "$PY" -m assistant -w "$T/B" sync >/dev/null 2>&1 & pid=$!
  sleep "$delay"; kill -9 "$pid" 2>/dev/null && echo "killed after ${delay}s: $(ls "$T/B/memory" | wc -l) files in memory/"
  wait "$pid" 2>/dev/null
done
b sync | tail -2
echo "notes: $(ls "$T/B/memory" | grep -c '^n')  (want $N)"
bad=0; for i in $(seq 0 $((N-1))); do [ "$(cat "$T/B/memory/n$i.md" 2>/dev/null)" = "note $i" ] || bad=$((bad+1)); done; echo "wrong: $bad"
echo "imported versions logged: $(grep -c '"imported":true' "$T/B/history/log.jsonl") (want $N)"
ls -a "$T/B/memory" | grep '^\.' | grep -v '^\.\.\?$' || echo "no temp files left"
b sync status | tail -3
