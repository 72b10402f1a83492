#!/bin/sh
# Attack 8 (memory rename, decomposed names, approvals prune): two notes that read the same
# (NFC and NFD spellings), a rename onto the other spelling, a rename whose new name carries
# the vault value split across folders, and prune against a pending request and a planted link.
set -u
PY=/work/main/.venv/bin/python; export PYTHONPATH=$PWD ASSISTANT_VAULT_PASSPHRASE=pass1234
T=$(mktemp -d); W=$T/ws
$PY -m assistant init $W >/dev/null
sed -i 's/^opslimit = 3/opslimit = 1/; s/^memlimit_mib = 256/memlimit_mib = 8/' $W/config.toml
$PY -m assistant -w $W vault init >/dev/null
echo 'sk-Q7mZpX4vL2nR9tB6wY3c' | $PY -m assistant -w $W vault set apikey >/dev/null
A="$PY -m assistant -w $W"
NFD=$(printf 'cafe\314\201.md'); NFC=$(printf 'caf\303\251.md')
printf 'decomposed\n' > "$W/memory/$NFD"
echo "rename NFC-named (finds the NFD entry): $($A memory rename "$NFC" drinks.md 2>&1 | tail -1)"
printf 'x\n' | $A memory write "$NFC" >/dev/null 2>&1
printf 'y\n' > "$W/memory/$NFD"
echo "rename onto a name read twice: $($A memory rename drinks.md "$NFC" 2>&1 | tail -1)"
echo "rename to a name carrying the value: $($A memory rename drinks.md 'sk-Q7mZpX4v/L2nR9tB6wY3c.md' 2>&1 | tail -1)"
ls "$W/memory" | od -c | grep -c 314 | sed 's/^/NFD entries left: /'
# prune: a pending request is never removed; a link planted in the inbox is not followed
cd $T
printf '%s' '[{"tool": "memory_write", "args": {"path": "p.md", "content": "pending\n"}}, {"reply": "ok"}]' > s.json
$A run --approval-timeout 20s --model script:s.json task > run.out 2>&1 &
for i in $(seq 50); do ls $W/state/approvals/*.json >/dev/null 2>&1 && break; sleep 0.2; done
echo outside > $T/victim; ln -s $T/victim $W/state/approvals/planted.json
echo "prune --older-than 0s: $($A approvals prune --older-than 0s 2>&1 | tail -1)"
echo "pending still listed: $($A approvals list --json | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))')"
[ -f $T/victim ] && echo "held   victim behind the planted link untouched" || echo "BROKE  victim removed"
ID=$($A approvals list --json | $PY -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])'); $A approvals deny $ID >/dev/null 2>&1; wait
rm -rf $T
