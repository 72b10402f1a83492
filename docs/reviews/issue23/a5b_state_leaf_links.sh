#!/bin/sh
# Attack 5b: symlinks planted at leaves and second levels under state/ and history/: the recall
# index's WAL and shm, the revision key, history-seen.json, secret_refusals.json, a history
# object folder. A changed file under $OUT is a write that followed the link.
set -u
PY=/work/main/.venv/bin/python; export PYTHONPATH=$PWD ASSISTANT_VAULT_PASSPHRASE=pass1234
T=$(mktemp -d); W=$T/ws; OUT=$T/outside; mkdir -p $OUT
$PY -m assistant init $W >/dev/null
sed -i 's/^opslimit = 3/opslimit = 1/; s/^memlimit_mib = 256/memlimit_mib = 8/' $W/config.toml
$PY -m assistant -w $W vault init >/dev/null
cd $T
chat() { printf 'w\n/quit\n' | $PY -m assistant -w $W chat --model script:$1 2>&1 | tail -1; }
printf '%s' '[{"tool": "memory_write", "args": {"path": "a.md", "content": "hello\n"}}, {"reply": "ok"}]' > s1.json
chat s1.json >/dev/null
# every leaf under state/ we can name, and two new ones, linked to files outside
rm -f $W/state/index.sqlite3-wal $W/state/index.sqlite3-shm
for f in index.sqlite3-wal index.sqlite3-shm index.sqlite3-journal secret_refusals.json history-seen.json; do
  echo original > $OUT/$f; ln -sf $OUT/$f $W/state/$f
done
# history object folder of the next content
sha=$(printf 'second\n' | sha256sum | cut -c1-2); mkdir -p $OUT/obj; ln -s $OUT/obj $W/history/objects/$sha
printf '%s' '[{"tool": "memory_write", "args": {"path": "b.md", "content": "second\n"}}, {"tool": "memory_search", "args": {"query": "second"}}, {"reply": "ok"}]' > s2.json
echo "chat: $(chat s2.json)"
printf 'x\n' | $PY -m assistant -w $W memory write c.md 2>&1 | tail -1
for f in $OUT/*; do
  [ -d $f ] && { [ -n "$(ls -A $f)" ] && echo "BROKE  wrote into linked folder $(basename $f)" || echo "held   $(basename $f)/"; continue; }
  [ "$(cat $f)" = original ] && echo "held   $(basename $f)" || echo "BROKE  $(basename $f) was written through the link ($(wc -c < $f) bytes)"
done
ls -la $W/state | grep -- '->' | sed 's/^/  still linked: /'
rm -rf $T
