#!/bin/sh
# Attack 7b: the vault value written into notes through memory_write in a watched chat, in
# spellings of the encodings the scanner claims (rot13, HTML entities, byte lists, UTF-16,
# base32) with a small twist each. A note that lands on disk is a leak.
set -u
PY=/work/main/.venv/bin/python; export PYTHONPATH=$PWD ASSISTANT_VAULT_PASSPHRASE=pass1234
T=$(mktemp -d); W=$T/ws
$PY -m assistant init $W >/dev/null
sed -i 's/^opslimit = 3/opslimit = 1/; s/^memlimit_mib = 256/memlimit_mib = 8/' $W/config.toml
$PY -m assistant -w $W vault init >/dev/null
echo 'sk-Q7mZpX4vL2nR9tB6wY3c' | $PY -m assistant -w $W vault set apikey >/dev/null
cd $T
$PY - <<'P'
import base64, codecs, json
V = "sk-Q7mZpX4vL2nR9tB6wY3c"; raw = V.encode()
forms = {
  "rot13-lower": codecs.encode(V, "rot13").lower(),
  "html-no-semicolon": "".join(f"&#{ord(c)}" for c in V),
  "html-zero-padded": "".join(f"&#x{ord(c):04x};" for c in V),
  "html-one-char": V[:5] + f"&#{ord(V[5])};" + V[6:],
  "dec-list-semicolon": ";".join(str(b) for b in raw),
  "hex-colon": ":".join(f"{b:02x}" for b in raw),
  "utf16le-hex": V.encode("utf-16-le").hex(),
  "base32hex": base64.b32encode(raw).decode().translate(str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789ABCDEFGHIJKLMNOPQRSTUV")),
}
for name, text in forms.items():   # one chat per form: a chat ends at its second refused secret
    steps = [{"tool": "memory_write", "args": {"path": f"{name}.md", "content": f"config value: {text}\n"}}, {"reply": "ok"}]
    open(f"s-{name}.json", "w").write(json.dumps(steps))
P
for s in s-*.json; do printf 'write\n/quit\n' | $PY -m assistant -w $W chat --model script:$s >> chat.out 2>&1; done
for f in $W/memory/*.md; do case $f in */index.md) continue;; esac; echo "BROKE  $(basename $f .md): written: $(tail -1 $f | cut -c1-70)"; done
grep -c "carried your vault secret" chat.out | sed 's/^/refused: /'
rm -rf $T
