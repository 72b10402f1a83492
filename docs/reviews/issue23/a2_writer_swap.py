"""Attack 2: the writer's exchange (renameat2 RENAME_EXCHANGE) against a hand edit and links.

(a) a person's in-place append whose file was opened before the writer's swap (`cat >> note.md`
    typing, an editor holding the file open) lands in the displaced inode, which the writer
    unlinks: the text is in no note and no version.
(b) a symlink swapped in at the leaf just before the exchange, and a symlinked folder on the way:
    nothing outside memory/ is written or followed.
"""
import os, subprocess, tempfile, pathlib, threading, time

PY = "/work/main/.venv/bin/python"
env = dict(os.environ, PYTHONPATH=os.getcwd())
env.pop("ASSISTANT_VAULT_PASSPHRASE", None)


def cli(ws, *args, input=None):
    return subprocess.run([PY, "-m", "assistant", "-w", str(ws), *args], env=env, input=input,
                          capture_output=True, text=True)


with tempfile.TemporaryDirectory() as t:
    ws = pathlib.Path(t, "ws")
    subprocess.run([PY, "-m", "assistant", "init", str(ws)], env=env, check=True, capture_output=True)
    note = ws / "memory" / "todo.md"
    cli(ws, "memory", "write", "todo.md", input="- milk\n")
    fd = os.open(note, os.O_WRONLY | os.O_APPEND)         # the person's `cat >> todo.md` starts
    r = cli(ws, "memory", "write", "todo.md", "--force", input="- milk\n- bread\n")
    os.write(fd, b"- call Lina\n")                          # ... and the person's line goes in
    os.close(fd)
    on_disk = note.read_text()
    hist = subprocess.run(["grep", "-rl", "call Lina", str(ws / "history")], capture_output=True, text=True).stdout
    lost = "call Lina" not in on_disk and not hist
    print(f"(a) in-place append through an fd opened before the swap: "
          f"{'LOST (in no note, no version)' if lost else 'kept'}")

    # (b) symlinked folder on the way, leaf link
    outside = pathlib.Path(t, "outside"); outside.mkdir()
    (outside / "x.md").write_text("outside\n")
    os.symlink(outside, ws / "memory" / "linked")
    r = cli(ws, "memory", "write", "linked/x.md", "--force", input="pwned\n")
    print("(b1) folder link on the way:", "BROKE" if (outside / "x.md").read_text() != "outside\n" else "held",
          "-", r.stdout.strip() or r.stderr.strip().splitlines()[-1])
    os.symlink(outside / "x.md", ws / "memory" / "leaf.md")
    r = cli(ws, "memory", "write", "leaf.md", "--force", input="pwned\n")
    print("(b2) leaf link:", "BROKE" if (outside / "x.md").read_text() != "outside\n" else "held",
          "-", r.stdout.strip() or r.stderr.strip().splitlines()[-1])
    # (b3) race: swap the leaf for a link to outside while writes run
    cli(ws, "memory", "write", "race.md", input="v0\n")
    stop = False

    def swapper():
        p = ws / "memory" / "race.md"; tmp = ws / "memory" / "race.tmp"
        while not stop:
            try:
                os.symlink(outside / "x.md", tmp); os.replace(tmp, p)
                time.sleep(0.0005)
                (ws / "memory" / "race.md2").write_text("v0\n"); os.replace(ws / "memory" / "race.md2", p)
            except OSError:
                pass
    th = threading.Thread(target=swapper); th.start()
    for i in range(30):
        cli(ws, "memory", "write", "race.md", "--force", input=f"v{i}\n")
    stop = True; th.join()
    print("(b3) leaf swapped for a link during 30 writes:",
          "BROKE" if (outside / "x.md").read_text() != "outside\n" else "held (outside file untouched)")
