#!/bin/bash
# Baseline: a note written on A reaches B.
. "$(dirname "$0")/lib.sh"; setup
echo hello | a memory write hello.md >/dev/null
a sync; b sync
b memory cat hello.md
