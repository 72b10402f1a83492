"""Item 21 of issue 10: the tests that send SIGINT pass even when the test runner itself was
started with SIGINT ignored (as under `nohup pytest &`): each resets SIGINT in its child.
Runs those tests in a pytest whose SIGINT is ignored."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
SIGINT_TESTS = [
    "cli/test_cli_ux.py::test_ctrl_c_at_the_prompt_clears_the_line_and_the_chat_goes_on",
    "cli/test_cli_ux.py::test_ctrl_c_ends_follow_and_watch_cleanly_on_a_fresh_line",
    "run/test_run.py::test_an_interrupted_run_does_not_leave_its_request_pending[SIGINT]",
    "terminal/test_deliberate_answers.py::test_ctrl_c_at_the_question_denies_at_once_and_the_next_line_is_a_message",
]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_sigint_tests_pass_under_a_runner_that_ignores_sigint():
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        *[str(TESTS / t) for t in SIGINT_TESTS]],
                       cwd=TESTS.parent, capture_output=True, text=True, timeout=300, preexec_fn=_ignore_sigint)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "4 passed" in r.stdout, r.stdout[-2000:]
