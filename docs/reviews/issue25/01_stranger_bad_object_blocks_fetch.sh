#!/bin/bash
# A stranger (anyone who can push) pushes a branch devices/evil holding a commit that git's fsck
# rejects (no email in its author line). Sync fetches every devices/* branch with
# transfer.fsckObjects=true, so the whole fetch fails and A and B can no longer sync at all.
. "$(dirname "$0")/lib.sh"; setup
echo one | a memory write one.md >/dev/null
a sync >/dev/null
W=$T/stranger; sgit init -q "$W"
tree=$(sgit -C "$W" mktree </dev/null)
bad=$(printf 'tree %s\nauthor nobody 0 +0000\ncommitter nobody 0 +0000\n\nx\n' "$tree" \
      | sgit -C "$W" hash-object -t commit -w --stdin --literally)
sgit -C "$W" update-ref refs/heads/x "$bad"
sgit -C "$W" push -q "$T/remote.git" "$bad:refs/heads/devices/evil" 2>&1 | tail -1
echo "--- B syncs (should still take one.md from A):"
b sync; echo "exit $?"
b memory cat one.md
