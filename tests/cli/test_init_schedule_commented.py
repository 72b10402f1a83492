"""`assistant init` writes the sample schedule commented out (issue 23, item 17): a new
workspace schedules nothing the person did not choose; taking the "# " off enables the sample."""

from __future__ import annotations

import os
import subprocess
import sys

from assistant.workspace.layout import open_workspace


def _assistant(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    return subprocess.run([sys.executable, "-m", "assistant", *args], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)


def test_init_schedules_nothing_until_the_person_enables_the_sample(tmp_path):
    root = tmp_path / "ws"
    r = _assistant("init", str(root))
    assert r.returncode == 0, r.stderr
    text = (root / "config.toml").read_text()
    assert "# [[schedule]]" in text and "\n[[schedule]]" not in text
    assert "schedule install" in text                     # how to enable it, next to it
    assert not open_workspace(root).config.schedule
    r = _assistant("-w", str(root), "schedule", "list")
    assert r.returncode == 0 and "no schedules" in r.stdout

    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("# [[schedule]]"))
    enabled = lines[:start] + [line[2:] if line.startswith("# ") else line for line in lines[start:start + 4]] \
        + lines[start + 4:]
    (root / "config.toml").write_text("".join(enabled))
    names = [s.name for s in open_workspace(root).config.schedule]
    assert names == ["morning-review"]
