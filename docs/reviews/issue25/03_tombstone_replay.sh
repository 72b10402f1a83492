#!/bin/bash
# A tombstone is "forget every version of PATH", unbound to the versions it was meant for, and it
# is applied from every commit B integrates, whenever B integrates it. So
#  (a) B's own versions of plan.md, made independently before B ever took A's branch, are dropped
#      by a tombstone A issued for its plan.md;
#  (b) after `sync devices remove A` + `add A` (same key), B replays A's whole branch from the
#      root, old tombstones included, and drops versions made long after the forget.
. "$(dirname "$0")/lib.sh"; setup
echo "A's plan" | a memory write plan.md >/dev/null
a memory forget plan.md </dev/null >/dev/null 2>&1
a memory rm plan.md >/dev/null 2>&1
a sync >/dev/null 2>&1
echo "B's plan v1" | b memory write plan.md >/dev/null
echo "B's plan v2" | b memory write plan.md --force >/dev/null
echo "--- B's history of plan.md before sync:"; b memory log plan.md | wc -l
b sync
echo "--- (a) after sync:"; b memory log plan.md
# (b) replay after re-enrolment
echo "B's plan v3" | b memory write plan.md --force >/dev/null
b memory log plan.md | wc -l
b sync devices remove A >/dev/null; b sync devices add A "$KA" >/dev/null
b sync
echo "--- (b) after re-enrolment:"; b memory log plan.md
