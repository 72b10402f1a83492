#!/bin/sh
# Attack 1: a hand-edited note (untrusted content) and a model reply carrying an ESC sequence, a
# bidi override, a zero-width run, tag characters and a variation selector; every display that
# shows them must print escapes (\x1b, \u202e, ...), never the raw characters. A raw one is
# reported as BROKE with the command.
set -u
PY=/work/main/.venv/bin/python; export PYTHONPATH=$PWD ASSISTANT_VAULT_PASSPHRASE=pass1234
T=$(mktemp -d); W=$T/ws
$PY -m assistant init $W >/dev/null
sed -i 's/^opslimit = 3/opslimit = 1/; s/^memlimit_mib = 256/memlimit_mib = 8/' $W/config.toml
cd $T
BAD=$($PY -c 'print("A\x1b[2JB\u202eC\u200b\u200bD\U000e0041\U000e0042E\ufe0fF\u115fG\u3164H\u2800I\u00adJ\u061cK", end="")')
printf '# n\n%s\n' "$BAD" > $W/memory/hand.md
$PY - > $T/s.json <<'P'
import json
bad = "A\x1b[2JB\u202eC\u200b\u200bD\U000e0041\U000e0042E\ufe0fF\u115fG\u3164H\u2800I\u00adJ\u061cK"
print(json.dumps([{"tool": "memory_read", "args": {"path": "hand.md"}},
                  {"tool": "memory_write", "args": {"path": "m" + "\u3164" + ".md", "content": "x"}},
                  {"tool": "memory_write", "args": {"path": "new.md", "content": bad.replace("\x1b", "")}},
                  {"reply": bad}]))
P
check() {   # $1 label, stdin: output
  out=$(cat)
  if printf '%s' "$out" | $PY -c 'import sys; t=sys.stdin.read(); raw=[c for c in "\x1b\u202e\u200b\U000e0041\ufe0f\u115f\u3164\u00ad\u061c" if c in t]; print(" ".join(f"U+{ord(c):04X}" for c in raw)); sys.exit(1 if raw else 0)' > $T/raw; then
    echo "held   $1"; else echo "BROKE  $1: raw $(cat $T/raw)"; fi
}
printf 'hi\n/quit\n' | $PY -m assistant -w $W chat --model script:s.json 2>&1 | check "chat"
$PY -m assistant -w $W memory cat hand.md 2>&1 | check "memory cat"
$PY -m assistant -w $W memory cat hand.md --json 2>&1 | check "memory cat --json"
$PY -m assistant -w $W memory ls 2>&1 | check "memory ls"
$PY -m assistant -w $W memory catalog 2>&1 | check "memory catalog"
$PY -m assistant -w $W memory search B 2>&1 | check "memory search"
$PY -m assistant -w $W memory log 2>&1 | check "memory log"
$PY -m assistant -w $W memory diff hand.md 2>&1 | check "memory diff"
$PY -m assistant -w $W memory show hand.md 2>&1 | check "memory show"
RUN=$($PY -m assistant -w $W runs --json | $PY -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
$PY -m assistant -w $W runs 2>&1 | check "runs"
$PY -m assistant -w $W runs show $RUN 2>&1 | check "runs show"
$PY -m assistant -w $W audit show 2>&1 | check "audit show"
$PY -m assistant -w $W memory stale 2>&1 | check "memory stale"
rm -rf $T
