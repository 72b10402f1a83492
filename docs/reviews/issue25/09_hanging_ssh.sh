#!/bin/bash
# An ssh remote that never answers (here: an ssh that sleeps). `sync init` and `sync` must give
# up within their bound (120 s) and leave no ssh/git process behind.
. "$(dirname "$0")/lib.sh"; setup
export GIT_SSH_COMMAND="sleep 3600 #"
start=$(date +%s)
a sync init ssh://hang.invalid/x.git --name A; echo "init exit $? after $(( $(date +%s) - start )) s"
# point A's existing sync at the hanging remote (as if the host went silent)
"$PY" - "$T/A/state/sync/sync.json" <<'P'
import json, sys; p = sys.argv[1]; d = json.load(open(p)); d["remote"] = "ssh://hang.invalid/x.git"; json.dump(d, open(p, "w"))
P
start=$(date +%s)
a sync; echo "sync exit $? after $(( $(date +%s) - start )) s"
echo "left behind:"; pgrep -af "sleep 3600" || echo none
