"""`assistant` imports a command's module only when that command is used (issue 12, log speed):
every command is still there, listed, and complete; a fresh process running one command does
not import the others."""

from __future__ import annotations

import importlib
import subprocess
import sys

from click.testing import CliRunner

import assistant.cli as cli

MODULES = ["init", "memory", "memory_history", "memory_search", "approvals", "grants", "vault",
           "chat", "run", "runs", "schedule", "doctor", "audit", "model"]


def test_the_table_names_every_command_of_every_module():
    for name in MODULES:
        module = importlib.import_module(f"assistant.cli.{name}")
        for command in getattr(module, "COMMANDS", []):
            assert name in cli._MODULES[command.name], (name, command.name)
    # and every module that adds subcommands to `memory` is loaded with it
    memory = cli.main.get_command(None, "memory")
    assert {"log", "show", "diff", "revert", "prune", "forget", "stale", "search", "reindex",
            "ls", "cat", "write"} <= set(memory.commands)


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_a_fresh_process_imports_only_the_command_it_runs(tmp_path):
    from assistant.workspace.layout import init_workspace

    init_workspace(tmp_path / "ws")
    loaded = _fresh(
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from assistant.cli import main\n"
        f"r = CliRunner().invoke(main, ['-w', {str(tmp_path / 'ws')!r}, 'memory', 'log'])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('assistant.cli.'))))\n")
    names = set(loaded.split())
    assert "assistant.cli.memory_history" in names
    for other in ("chat", "vault", "approvals", "doctor", "schedule", "runs", "model", "run", "init"):
        assert f"assistant.cli.{other}" not in names


def test_help_lists_every_command_in_a_fresh_process():
    out = subprocess.run([sys.executable, "-m", "assistant", "--help"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0
    listed = out.stdout.split("Commands:", 1)[1].split()
    for name in cli._MODULES:
        assert name in listed
    sub = subprocess.run([sys.executable, "-m", "assistant", "memory", "--help"], capture_output=True,
                         text=True, timeout=120)
    assert sub.returncode == 0 and " log " in sub.stdout and " search " in sub.stdout


def test_an_unknown_command_is_still_a_usage_error():
    r = CliRunner().invoke(cli.main, ["no-such-command"])
    assert r.exit_code == 2 and "No such command" in r.output
