#!/bin/bash
# Remote URLs that try to inject options or transports into git, or store credentials.
. "$(dirname "$0")/lib.sh"
asst "$T/A" init >/dev/null
git init -q --bare "$T/r.git"
for url in "-u touch$T/pwned" "--upload-pack=touch $T/pwned" "ext::sh -c touch% $T/pwned" \
  "EXT::sh -c touch% $T/pwned" "fd::3" "file::$T/r.git" "ssh://-oProxyCommand=touch%20$T/pwned/x" \
  "-oProxyCommand=touch:x" "https://user:pw@example.invalid/r.git" "https://tok@example.invalid/r.git" \
  "ssh://u:pw@example.invalid/r" "https://example.invalid/r.git?access_token=ghp_abcdefghijklmnopqrstuvwxyz0123456789" \
  "https://example.invalid/ghp_abcdefghijklmnopqrstuvwxyz0123456789/r.git" \
  "$(printf 'file://%s\n--upload-pack=x' "$T/r.git")" "file://$T/r.git" ; do
  printf '%-70s -> ' "$(printf %q "$url" | cut -c1-70)"
  timeout 60 "$PY" -m assistant -w "$T/A" sync init "$url" --name A 2>&1 | head -1 | cut -c1-150
done
ls "$T" | grep -c pwned || echo "no command ran"
grep -o '"remote":"[^"]*"' "$T/A/state/sync/sync.json"
