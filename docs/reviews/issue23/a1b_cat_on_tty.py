"""Attack 1b: `memory cat` on a terminal (a pty) of a hand-edited note with invisible and control
characters: the output must carry escapes and the invisible count, never the raw characters.
(Into a pipe `memory cat` is byte for byte by design.)"""
import os, pty, subprocess, sys, tempfile, pathlib
PY = "/work/main/.venv/bin/python"
env = dict(os.environ, PYTHONPATH=os.getcwd())
with tempfile.TemporaryDirectory() as t:
    ws = pathlib.Path(t, "ws")
    subprocess.run([PY, "-m", "assistant", "init", str(ws)], env=env, check=True, capture_output=True)
    bad = "A\x1b[2JB\u202eC\u200b\u200bD\U000e0041E\u115fF\u3164G\u00adH"
    (ws / "memory" / "h.md").write_text("# h\n" + bad + "\n")
    m, s = pty.openpty()
    p = subprocess.Popen([PY, "-m", "assistant", "-w", str(ws), "memory", "cat", "h.md"], env=env,
                         stdin=s, stdout=s, stderr=s)
    os.close(s)
    out = b""
    while True:
        try:
            chunk = os.read(m, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait()
    text = out.decode("utf-8", "replace")
    raw = [f"U+{ord(c):04X}" for c in "\x1b\u202e\u200b\U000e0041\u115f\u3164\u00ad" if c in text]
    print(text)
    print("BROKE raw:" + " ".join(raw) if raw else "held: all escaped on a terminal")
