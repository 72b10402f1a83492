#!/bin/bash
# A (enrolled; its person pasted the wifi password B keeps in its vault) sends B that value in a
# note's text, a note's name, a version's provenance, a tombstone's path and the commit message.
# None of it may enter B's memory/, history/, audit log or terminal output unredacted.
. "$(dirname "$0")/lib.sh"; setup; vault_b
echo base | a memory write keep.md >/dev/null; a sync >/dev/null; b sync >/dev/null
forge '{"files": [
 ["100644", "notes/keep.md", "base\n"],
 ["100644", "notes/wifi.md", "pass: '"$SECRET"'\n"],
 ["100644", "notes/'"$SECRET"'.md", "x\n"],
 ["100644", "notes/'"${SECRET:0:8}/${SECRET:8}"'.md", "split\n"],
 ["100644", "notes/prov.md", "fine\n"]],
 "events": [
  {"op": "version", "path": "prov.md", "time": "2026-01-01T00:00:00.000000Z", "source": "person",
   "run": "run-'"$SECRET"'", "model": "m", "sources": ["web:'"$SECRET"'"], "v": 0, "approval": "'"$SECRET"'"},
  {"op": "forget", "path": "t-'"$SECRET"'.md"}],
 "versions": ["fine\n"],
 "message_extra": "Note: '"$SECRET"'\n"}' >/dev/null
echo "--- B syncs:"; b sync 2>&1; echo "exit $?"
echo "--- where the value appears on B (outside vault.enc and the sync repo):"
grep -rl --exclude-dir=repo.git "$SECRET" "$T/B" 2>/dev/null || echo "nowhere"
grep -rl "${SECRET:8}" "$T/B/memory" "$T/B/history" 2>/dev/null
echo "--- status and doctor:"; b sync status 2>&1 | grep -e "$SECRET" -e "${SECRET:0:8}/"; b doctor 2>&1 | grep -e "$SECRET" -e "${SECRET:0:8}/"
