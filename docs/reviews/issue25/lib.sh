# Shared setup for the sync attacks: a bare remote and two enrolled devices A and B in $T.
# Source it: . "$(dirname "$0")/lib.sh"; then `a sync`, `b sync`, `a memory write x.md <<<text`.
set -u
ATTACKS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HERE=$(git -C "$ATTACKS" rev-parse --show-toplevel)   # the tree under review (the scripts may move)
PY=/work/main/.venv/bin/python
T=$(mktemp -d /tmp/attack.XXXXXX)
export PYTHONPATH=$HERE
asst() { local ws=$1; shift; "$PY" -m assistant -w "$ws" "$@"; }
a() { asst "$T/A" "$@"; }
b() { asst "$T/B" "$@"; }
setup() {
  git init -q --bare "$T/remote.git"
  asst "$T/A" init >/dev/null; asst "$T/B" init >/dev/null
  asst "$T/A" sync init "$T/remote.git" --name A >/dev/null
  asst "$T/B" sync init "$T/remote.git" --name B >/dev/null
  KA=$(asst "$T/A" sync devices list --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["key"])')
  KB=$(asst "$T/B" sync devices list --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["key"])')
  asst "$T/A" sync devices add B "$KB" >/dev/null
  asst "$T/B" sync devices add A "$KA" >/dev/null
}
# a plain git on the remote, as a stranger would use it
sgit() { GIT_CONFIG_GLOBAL=/dev/null git -c user.name=s -c user.email=s@x "$@"; }
# forge SPEC_JSON: A (a compromised, enrolled device) signs and pushes an arbitrary commit
forge() { local f=$T/spec.json; printf '%s' "$1" > "$f"; "$PY" "$ATTACKS/forge.py" "$T/A" "$T/remote.git" A "$f"; }
# a vault on B holding SECRET (the leak scanner's vault rule then knows it)
SECRET=Zq9xW7hunterTwo42
export ASSISTANT_VAULT_PASSPHRASE=attack-pass
vault_b() { b vault init >/dev/null 2>&1; printf '%s' "$SECRET" | b vault set wifi >/dev/null 2>&1; b vault list; }
