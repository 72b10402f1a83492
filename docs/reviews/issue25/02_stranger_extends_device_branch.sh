#!/bin/bash
# A stranger adds one unsigned commit on top of devices/A. B refuses A's branch (right), but A's
# own next push is a non-fast-forward and is rejected: A can never sync again, and B never gets
# A's later notes. The issue: a stranger's commit must not stop enrolled devices syncing.
. "$(dirname "$0")/lib.sh"; setup
echo one | a memory write one.md >/dev/null
a sync >/dev/null; b sync >/dev/null
W=$T/stranger; sgit clone -q "$T/remote.git" "$W" 2>/dev/null
sgit -C "$W" fetch -q origin refs/heads/devices/A:refs/heads/A
sgit -C "$W" checkout -q A && echo planted > "$W/notes/planted.md" && sgit -C "$W" add -A . \
  && sgit -C "$W" commit -qm plant && sgit -C "$W" push -q origin A:refs/heads/devices/A
echo "--- B syncs: (A refused, as it should be)"; b sync; echo "exit $?"
echo two | a memory write two.md >/dev/null
echo "--- A syncs its new note two.md:"; a sync; echo "exit $?"
echo "--- B syncs again:"; b sync; echo "exit $?"
b memory cat two.md
