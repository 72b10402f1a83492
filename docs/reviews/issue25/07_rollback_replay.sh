#!/bin/bash
# The remote rolls devices/A back to an older signed head, then replays A's signed commit C2 on
# B's branch name, then re-parents A's signed tree (same signature) under another commit.
. "$(dirname "$0")/lib.sh"; setup
G="git --git-dir $T/remote.git"
echo one | a memory write one.md >/dev/null; a sync >/dev/null; C1=$($G rev-parse devices/A)
echo two | a memory write two.md >/dev/null; a sync >/dev/null; C2=$($G rev-parse devices/A)
b sync >/dev/null
echo "--- rollback devices/A to C1:"; $G update-ref refs/heads/devices/A $C1; b sync; echo "exit $?"
$G update-ref refs/heads/devices/A $C2
echo "--- C2's tree and signature, message kept, on a new commit whose parent is C1's parent:"
P=$($G rev-parse $C1^ 2>/dev/null || true)
MSG=$($G cat-file commit $C2 | sed '1,/^$/d')
X=$(GIT_CONFIG_GLOBAL=/dev/null git --git-dir $T/remote.git -c user.name=x -c user.email=x@x commit-tree $($G rev-parse $C2^{tree}) -p $C2 -m "$MSG")
$G update-ref refs/heads/devices/A $X; b sync; echo "exit $?"
echo "--- A's first commit served to a device that never integrated A (C, new): undetectable rollback"
asst "$T/C" init >/dev/null; asst "$T/C" sync init "$T/remote.git" --name C >/dev/null
asst "$T/C" sync devices add A "$KA" >/dev/null
$G update-ref refs/heads/devices/A $C1; asst "$T/C" sync; echo "exit $?"; asst "$T/C" memory ls
