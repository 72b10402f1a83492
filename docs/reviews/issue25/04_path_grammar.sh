#!/bin/bash
# A compromised enrolled device A signs a commit whose tree names notes outside memory/ or in
# forbidden places: '..' entries, an entry holding '/', absolute-looking names, .history, state,
# a symlink (120000) to /etc/passwd and a submodule (160000) entry, NFD/case twins, control chars.
. "$(dirname "$0")/lib.sh"; setup
echo base | a memory write keep.md >/dev/null; a sync >/dev/null; b sync >/dev/null
forge '{"files": [

 ["100644", ["notes", ".history", "log.md"], "x\n"],
 ["100644", ["notes", "esc\u001b[2Jname.md"], "x\n"],
 ["100644", ["notes", "nl\nname.md"], "x\n"],
 ["120000", ["notes", "link.md"], "/etc/passwd"],
 ["120000", ["notes", "dirlink"], "../../state"],
 ["100644", ["notes", "keep.md"], "base\n"],
 ["100644", ["notes", "cafe\u0301.md"], "nfd\n"],
 ["100644", ["notes", "caf\u00e9.md"], "nfc\n"],
 ["100644", ["notes", "rtl\u202egpj.md"], "x\n"]
]}' >/dev/null
b sync; echo "exit $?"
echo "--- what landed in B's workspace:"
(cd "$T/B" && find . -newer config.toml -type f -o -type l | grep -v '^./state' | sort)
grep -c pwned "$T/B/config.toml" || true
ls -la "$T/B/memory"
echo "--- sync status:"; b sync status
echo "--- doctor (sync lines):"; b doctor 2>&1 | grep -i sync
