"""`memory log --json` renders each version without a dict per version (issue 12, log speed):
its text must stay exactly what json.dumps of the per-version objects gives, one per line."""

from __future__ import annotations

import json
import random

from click.testing import CliRunner

from assistant.cli import main
from assistant.cli.memory_history import _json, _json_list, _Shown  # noqa: F401
from assistant.notes.history import Version
from assistant.secrets.scanner import Scanner
from assistant.session import open_session
from assistant.workspace.layout import init_workspace


class _Mem:
    def __init__(self, scanner: Scanner) -> None:
        self.scanner = scanner


def reference(shown: _Shown, versions: list[Version]) -> str:
    """What `memory log --json` printed before: one json.dumps, then one object per line."""
    text = json.dumps([_json(shown, v) for v in versions], sort_keys=True, ensure_ascii=False,
                      separators=(", ", ": "))
    return text.replace('}, {"approval"', '},\n {"approval"').replace('[{"approval"', '[\n {"approval"', 1)


WEIRD = ["", "plain", 'quote " and \\ backslash', "tab\there", "new\nline", "\x1b[2K escape",
         "é ü 日本", "\u2028 line sep", "\U0001d11e astral", "mcp:client \"x\""]
SECRET = "Zq8#vT2m!kP4wX9r"


def random_versions(r: random.Random, n: int) -> list[Version]:
    out = []
    for i in range(n):
        pick = r.choice
        out.append(Version(
            seq=i + 1, time=pick(["2026-12-01T08:00:00.000Z", "odd \"time\"", "ü"]),
            path=pick(["a.md", "people/josé.md", "x\ny.md", "has " + SECRET + ".md"]),
            rev=pick(["0123456789ab", "ffffffffffff"]), sha256=f"{r.getrandbits(256):064x}",
            bytes=r.randrange(0, 10**7), source=pick(["assistant", "person", "hand-edit", "revert",
                                                      "removal", "mcp:cli\"ent"]),
            run=pick(["", "run-1", SECRET]), approval=pick([None, "req-1", "\u00e9"]),
            scope=pick([None, "exact", "folder"]), grant=pick([None, "", "granted: memory *", SECRET]),
            model=pick(["", "m", WEIRD[r.randrange(len(WEIRD))]]),
            sources=tuple(pick(WEIRD + ["web:" + SECRET]) for _ in range(r.randrange(0, 3))),
            removed=r.random() < 0.2, baseline=r.random() < 0.2))
    return out


def test_the_fast_json_is_exactly_the_json_dumps_text():
    shown = _Shown(_Mem(Scanner({"PW": SECRET})))
    r = random.Random(12)
    for n in (0, 1, 2, 7, 300):
        versions = random_versions(r, n)
        got = _json_list(shown, versions)
        assert got == reference(shown, versions)
        assert SECRET not in got
        assert [o["seq"] for o in json.loads(got)] == [v.seq for v in versions]


def test_memory_log_json_of_a_real_history(tmp_path):
    ws = tmp_path / "ws"
    init_workspace(ws)
    with open_session(ws, "watched", kind="api", transcript=False) as s:
        for i in range(30):
            s.memory.write("busy.md", f"version {i}\n", force=True)
        s.memory.remove("busy.md")
        s.memory.write("busy.md", "back\n")
        versions = list(reversed(s.memory.history.versions("busy.md")))
        expected = reference(_Shown(s.memory), versions)
    r = CliRunner().invoke(main, ["-w", str(ws), "memory", "log", "busy.md", "--json"])
    assert r.exit_code == 0, r.output
    assert r.stdout == expected + "\n"
    got = json.loads(r.stdout)
    assert [g["removed"] for g in got[:2]] == [False, True] and len(got) == 32


def test_the_fast_text_is_exactly_one_line_per_version():
    from assistant.cli.memory_history import _line, _lines

    shown = _Shown(_Mem(Scanner({"PW": SECRET})))
    r = random.Random(13)
    for n in (0, 1, 5, 300):
        versions = random_versions(r, n)
        got = _lines(shown, versions)
        assert got == "\n".join(_line(shown, v) for v in versions)
        assert SECRET not in got
        assert "\x1b" not in got     # escaped like every text shown on a terminal
