#!/bin/bash
# B's person hand-edits the vault value into a note, then takes it out again by hand, then
# tries a tombstone and a note name holding it. Nothing B pushes may carry the value, and no
# pushed object may be a digest of bytes that held it.
. "$(dirname "$0")/lib.sh"; setup; vault_b
echo "start" | b memory write wifi.md >/dev/null; b sync >/dev/null
printf 'pass: %s\n' "$SECRET" > "$T/B/memory/wifi.md"
echo "--- sync with the value in the note:"; b sync; echo "exit $?"
printf 'pass: ask me\n' > "$T/B/memory/wifi.md"
echo "--- value removed by hand, still in a version:"; b sync; echo "exit $?"
b memory forget wifi.md </dev/null >/dev/null 2>&1
echo "--- after forget:"; b sync; echo "exit $?"
mkdir -p "$T/B/memory/${SECRET:0:8}"; echo x > "$T/B/memory/${SECRET:0:8}/${SECRET:8}.md"
echo "--- a note named by the value split across a folder:"; b sync; echo "exit $?"
rm -r "$T/B/memory/${SECRET:0:8}"; b memory forget "${SECRET:0:8}/${SECRET:8}.md" </dev/null >/dev/null 2>&1
echo "--- after removing and forgetting it (the tombstone names the value):"; b sync; echo "exit $?"
echo "--- does the remote hold the value, or its sha256/sha1 digest of any B text that held it?"
G="git --git-dir $T/remote.git"
for o in $($G rev-list --objects --all | cut -d' ' -f1); do $G cat-file -p $o 2>/dev/null; done > "$T/all.txt"
grep -c -e "$SECRET" -e "${SECRET:8}" "$T/all.txt" || echo "value: absent"
for text in "pass: $SECRET" ; do
  s=$(printf '%s\n' "$text" | sha256sum | cut -c1-64); h=$(printf '%s\n' "$text" | git hash-object --stdin)
  grep -c -e "$s" -e "$h" "$T/all.txt" || echo "digests: absent"
done
