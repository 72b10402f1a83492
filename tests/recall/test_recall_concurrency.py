"""Several processes at once: two write notes (and sync the index) while a third searches.

Real processes on one workspace; every search must succeed (no "database is locked", no corrupt
index), and at the end a search finds every note either writer wrote."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

from recall_support import make_ws

WRITER = textwrap.dedent("""
    import sys, time
    from assistant.session import open_session
    ws, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open_session(ws, "watched", kind="cli", transcript=False) as s:
        for i in range(n):
            with open(f"{ws}/memory/{tag}-{i}.md", "w") as f:     # a hand edit
                f.write(f"pelican {tag} note number {i} marker{tag}{i}\\n")
            s.recall.search(f"pelican {tag}")                    # syncs: this process writes the index too
    print("ok")
""")

SEARCHER = textwrap.dedent("""
    import json, os, sys, time
    from assistant.session import open_session
    ws, stop = sys.argv[1], sys.argv[2]
    counts, errors = [], []
    end = time.monotonic() + 120          # bounded, however slow the machine
    with open_session(ws, "watched", kind="cli", transcript=False) as s:
        # search until the writers are done (and at least a few times), never forever
        while time.monotonic() < end and (len(counts) < 3 or not os.path.exists(stop)):
            try:
                counts.append(len(s.recall.search("pelican", limit=50)))
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
            if len(counts) + len(errors) == 1:
                open(stop + ".ready", "w").close()     # searching: the writers may start
    print(json.dumps({"counts": counts, "errors": errors}))
""")


def test_two_writers_and_a_searcher_at_once(tmp_path):
    ws = make_ws(tmp_path)
    n = 25
    stop = tmp_path / "writers-done"
    searcher = subprocess.Popen([sys.executable, "-c", SEARCHER, str(ws), str(stop)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (tmp_path / "writers-done.ready").exists():
        assert time.monotonic() < deadline and searcher.poll() is None, searcher.communicate()
        time.sleep(0.05)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(ws), tag, str(n)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for tag in ("a", "b")]
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0 and out.strip() == "ok", err
    stop.write_text("done")
    out, err = searcher.communicate(timeout=180)
    assert searcher.returncode == 0, err
    report = json.loads(out)
    assert report["errors"] == []
    assert report["counts"], "the searcher never got to search"
    assert report["counts"] == sorted(report["counts"])      # notes only get added: never fewer found
    from recall_support import session

    with session(ws) as s:
        hits = s.recall.search("pelican", limit=50)
        assert len(hits) == 2 * n
        assert s.recall.search("markerb24")[0].path == "b-24.md"
