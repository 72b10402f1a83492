#!/bin/sh
# Attack 5: plant a symlink for state/ (and for state/approvals, history/objects...) and see which
# commands write through it. A file that appears under $OUT is a write that followed the link.
set -u
PY=/work/main/.venv/bin/python; export PYTHONPATH=$PWD ASSISTANT_VAULT_PASSPHRASE=pass1234
T=$(mktemp -d); W=$T/ws; OUT=$T/outside
$PY -m assistant init $W >/dev/null
sed -i 's/^opslimit = 3/opslimit = 1/; s/^memlimit_mib = 256/memlimit_mib = 8/' $W/config.toml
$PY -m assistant -w $W vault init >/dev/null
echo '[{"tool": "memory_write", "args": {"path": "a.md", "content": "hello\n"}}, {"reply": "ok"}]' > $T/s.json
cd $T
printf 'w\n/quit\n' | $PY -m assistant -w $W chat --model script:s.json >/dev/null 2>&1
try() {  # $1: what is linked; rest: the command
  what=$1; shift
  rm -rf $OUT; mkdir -p $OUT
  cp -a $W/$what/. $OUT/ 2>/dev/null; rm -rf $W/$what.real; mv $W/$what $W/$what.real; ln -s $OUT $W/$what
  before=$(find $OUT -type f -newer $T/s.json -printf '%P %s\n' | sort | md5sum)
  touch $T/mark; sleep 0.01
  out=$("$@" 2>&1 | tail -1)
  changed=$(find $OUT -newer $T/mark \( -type f -o -type d \) -printf '%P\n' | sort | tr '\n' ' ')
  rm $W/$what; mv $W/$what.real $W/$what
  if [ -n "$changed" ]; then echo "BROKE  $what: $* -> wrote through the link: $changed"; else echo "held   $what: $* -> $out"; fi
}
A="$PY -m assistant -w $W"
try state $A approvals ack
try state $A approvals list
try state $A audit verify
try state $A approvals prune --older-than 0s
try state $A memory write b.md --force --content x
try state sh -c "printf 'w\n/quit\n' | $A chat --model script:s.json"
try state/approvals $A approvals list
try state/transcripts sh -c "printf 'w\n/quit\n' | $A chat --model script:s.json"
try history sh -c "printf 'w\n/quit\n' | $A chat --model script:s.json"
try history/objects $A memory write c.md --force --content y
rm -rf $T
