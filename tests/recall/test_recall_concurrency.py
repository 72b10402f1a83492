"""Several processes at once: two write notes (and sync the index) while a third searches.

Real processes on one workspace; every search must succeed (no "database is locked", no corrupt
index), and at the end a search finds every note either writer wrote."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

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
    import json, sys, time
    from assistant.session import open_session
    ws, seconds = sys.argv[1], float(sys.argv[2])
    counts, errors = [], []
    end = time.monotonic() + seconds
    with open_session(ws, "watched", kind="cli", transcript=False) as s:
        while time.monotonic() < end:
            try:
                counts.append(len(s.recall.search("pelican", limit=50)))
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
    print(json.dumps({"counts": counts, "errors": errors}))
""")


def test_two_writers_and_a_searcher_at_once(tmp_path):
    ws = make_ws(tmp_path)
    n = 25
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(ws), tag, str(n)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for tag in ("a", "b")]
    searcher = subprocess.Popen([sys.executable, "-c", SEARCHER, str(ws), "4"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "ok", err
    out, err = searcher.communicate(timeout=120)
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
