"""No note text is left in the system's temp folder: not by the assistant (the editor's copy of
a note lives in the workspace's state/edits/, and is removed unless a refusal keeps it there for
the person), and not by the tests (every temp file a test makes is made in its own tmp_path)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from assistant.workspace.layout import init_workspace

TESTS = Path(__file__).resolve().parents[1]


def _env(tmp_path: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env.update(HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path / "tmp"), **extra)
    return env


def _cli(ws, env, *args, input=None):
    return subprocess.run([sys.executable, "-m", "assistant", "-w", str(ws), *args], input=input,
                          capture_output=True, text=True, env=env, timeout=120)


def _editor(tmp_path: Path, name: str, body: str) -> str:
    script = tmp_path / name
    script.write_text(f"import sys, pathlib\np = pathlib.Path(sys.argv[1])\n{body}\n")
    return f"{sys.executable} {script}"


def test_a_day_of_cli_use_leaves_the_temp_folder_empty(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "tmp").mkdir()
    ws = tmp_path / "ws"
    env = _env(tmp_path)
    r = _cli(ws, env, "init", "--example", str(ws))
    assert r.returncode == 0, r.stderr
    note = ws / "memory" / "people" / "lina.md"

    r = _cli(ws, env, "memory", "write", "diary.md", input="A private day: Lina's birthday.\n")
    assert r.returncode == 0, r.stderr
    assert _cli(ws, env, "memory", "cat", "diary").returncode == 0
    assert _cli(ws, env, "memory", "ls", "--sort", "changed").returncode == 0

    # an edit that saves (the editor leaves a backup beside the copy, as some do)
    ok = _editor(tmp_path, "ok.py", "p.with_name(p.name + '~').write_text(p.read_text())\n"
                                    "p.write_text(p.read_text() + 'Likes green tea.\\n')")
    r = _cli(ws, {**env, "EDITOR": ok, "VISUAL": ""}, "memory", "edit", "people/lina.md")
    assert r.returncode == 0, r.stderr
    assert "Likes green tea." in note.read_text()

    # an edit refused because the note changed meanwhile: the person's text is kept, in the workspace
    clash = _editor(tmp_path, "clash.py", f"p.write_text('my private edit\\n')\n"
                                          f"pathlib.Path({str(note)!r}).write_text('someone else\\n')")
    r = _cli(ws, {**env, "EDITOR": clash, "VISUAL": ""}, "memory", "edit", "people/lina.md")
    assert r.returncode == 1 and "changed since you read it" in r.stderr
    kept = Path(r.stderr.split("kept at ")[1].strip())
    assert kept.read_text() == "my private edit\n"
    assert kept.is_relative_to(ws / "state" / "edits")
    assert oct(kept.parent.stat().st_mode & 0o777) == "0o700"
    assert oct((ws / "state" / "edits").stat().st_mode & 0o777) == "0o700"

    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool": "memory_read", "args": {"path": "diary.md"}},
                                  {"reply": "Read it."}]))
    r = _cli(ws, env, "run", "--model", f"script:{script}", "what is in my diary?")
    assert r.returncode == 0 and r.stdout.startswith("done:"), r.stdout + r.stderr
    r = _cli(ws, env, "chat", "--model", f"script:{script}", input="what is in my diary?\n/quit\n")
    assert r.returncode == 0, r.stderr
    assert _cli(ws, env, "runs").returncode == 0
    assert _cli(ws, env, "memory", "log").returncode == 0
    _cli(ws, env, "doctor", "--no-notify", "--model", f"script:{script}")

    left = sorted(str(p.relative_to(tmp_path / "tmp")) for p in (tmp_path / "tmp").rglob("*"))
    assert left == [], f"left in TMPDIR: {left}"


def test_a_saved_edit_leaves_no_copy_behind(tmp_path):
    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    (tmp_path / "tmp").mkdir()
    ok = _editor(tmp_path, "ok.py", "p.write_text('rewritten\\n')")
    r = _cli(ws, {**_env(tmp_path), "EDITOR": ok, "VISUAL": ""}, "memory", "edit", "people/lina.md")
    assert r.returncode == 0, r.stderr
    assert list((ws / "state" / "edits").iterdir()) == []


def test_an_edits_folder_that_is_a_link_is_refused(tmp_path):
    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    (ws / "state").mkdir(exist_ok=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, ws / "state" / "edits")
    ok = _editor(tmp_path, "ok.py", "p.write_text('rewritten\\n')")
    r = _cli(ws, {**_env(tmp_path), "EDITOR": ok, "VISUAL": ""}, "memory", "edit", "people/lina.md")
    # issue 23 item 5: the refusal names the link and the fix
    assert r.returncode == 1 and "state/edits is a symbolic link" in r.stderr
    assert f"rm {ws / 'state' / 'edits'}" in r.stderr
    assert list(elsewhere.iterdir()) == []


# A temp-file call in a test must name its folder (dir=..., inside tmp_path); pytest's tmp_path and
# tmp_path_factory are the way to get one.
_TEMP_CALL = re.compile(r"tempfile\.(mkdtemp|mkstemp|NamedTemporaryFile|TemporaryDirectory|SpooledTemporaryFile)\(")


def _call_args(text: str, start: int) -> str:
    depth, i = 0, start
    while i < len(text):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
        i += 1
    return text[start:]


def test_no_test_makes_temp_files_outside_its_own_folder():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.resolve() == Path(__file__).resolve():
            continue
        text = path.read_text(encoding="utf-8")
        for m in _TEMP_CALL.finditer(text):
            if "dir=" not in _call_args(text, m.end() - 1):
                offenders.append(f"{path.relative_to(TESTS)}:{text.count(chr(10), 0, m.start()) + 1}")
        for m in re.finditer(r"""["']/tmp/[^"'\s]*["']\s*\)?\s*\.(write_text|write_bytes|mkdir|open)\(""", text):
            offenders.append(f"{path.relative_to(TESTS)}:{text.count(chr(10), 0, m.start()) + 1}")
    assert offenders == [], "temp files made outside tmp_path (pass dir= inside tmp_path): " + ", ".join(offenders)
