#!/bin/sh
# Attack 4: the secret-refusal block lives only in state/secret_refusals.json, and a missing file
# is zero. Whoever can write state/ (untrusted in the threat model) lifts the block without
# `approvals ack` by deleting (or rolling back) that one file; nothing records that it happened.
set -u
PY=/work/main/.venv/bin/python; export PYTHONPATH=$PWD ASSISTANT_VAULT_PASSPHRASE=pass1234
T=$(mktemp -d); W=$T/ws
$PY -m assistant init $W >/dev/null
sed -i 's/^opslimit = 3/opslimit = 1/; s/^memlimit_mib = 256/memlimit_mib = 8/; s/^secret_refusals_per_day = 3/secret_refusals_per_day = 1/' $W/config.toml
$PY -m assistant -w $W vault init >/dev/null
echo 'sk-Q7mZpX4vL2nR9tB6wY3c' | $PY -m assistant -w $W vault set apikey >/dev/null
cd $T
printf '%s' '[{"tool": "memory_write", "args": {"path": "k.md", "content": "key: c2stUTdtWnBYNHZMMm5SOXRCNndZM2M="}}, {"reply": "ok"}]' > probe.json
printf '%s' '[{"reply": "ok"}]' > ok.json
echo "probe 1: $($PY -m assistant -w $W run --model script:probe.json 'task' 2>/dev/null)"
echo "next run: $($PY -m assistant -w $W run --model script:ok.json 'task' 2>/dev/null)"
rm $W/state/secret_refusals.json
echo "after rm state/secret_refusals.json: $($PY -m assistant -w $W run --model script:probe.json 'task' 2>/dev/null)"
rm $W/state/secret_refusals.json
echo "probe 3 after another rm: $($PY -m assistant -w $W run --model script:ok.json 'task' 2>/dev/null)"
$PY -m assistant -w $W audit verify
echo "secret_refused lines in the audit log: $(grep -c secret_refused $W/state/audit.jsonl); ack lines: $(grep -c ack $W/state/audit.jsonl)"
rm -rf $T
