"""Hostile review: the notify command's one line is text the model chose (a fetch's URL), and it
went into the command's argv unescaped. A URL may not hold controls below U+0021, but a bidi
override, an isolate or a zero-width character passes, so a desktop notification (or a notifier
that writes to a terminal) showed the host and path reordered. The summary handed to the notify
command is escaped like everything else that reaches a person."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from assistant.workspace.layout import init_workspace


def test_the_notify_summary_of_a_fetch_carries_no_bidi_or_invisible_character(tmp_path):
    root = tmp_path / "ws"
    init_workspace(root, example=True)
    seen = tmp_path / "argv.json"
    recorder = tmp_path / "record.py"
    recorder.write_text("import json, sys\nopen(sys.argv[1], 'w').write(json.dumps(sys.argv[2:]))\n")
    cfg = (root / "config.toml").read_text()
    cfg = cfg.replace("notify = []", "notify = " + json.dumps([sys.executable, str(recorder), str(seen), "{summary}"]), 1)
    (root / "config.toml").write_text(cfg)
    script = tmp_path / "s.json"
    url = "https://example.com/doc/\u202egpj.exe?x=\u2066a\u2069\u200b"
    script.write_text(json.dumps([{"tool": "web_fetch", "args": {"url": url}}, {"reply": "ok"}]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    r = subprocess.run([sys.executable, "-m", "assistant", "-w", str(root), "run", "--approval-timeout", "2s",
                        "--model", f"script:{script}", "fetch it"], capture_output=True, text=True, env=env,
                       timeout=90, start_new_session=True)
    assert r.returncode == 3, (r.stdout, r.stderr)      # nobody answered: denied
    argv = json.loads(seen.read_text())
    text = " ".join(argv)
    assert "example.com" in text
    for ch in ("\u202e", "\u2066", "\u2069", "\u200b"):
        assert ch not in text, argv
    assert "\\u202e" in text, argv          # shown, not dropped
