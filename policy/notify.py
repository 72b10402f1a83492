"""Running the person's notify command (e.g. notify-send) when an approval request is filed.

Guards "unreachable means deny": a missing, failing or hanging command is reported as a
reason string (never raised), and a hanging one is killed with its whole process group after
a bounded wait. The command is an argv list (no shell); `{summary}` in any argument is
replaced by a one-line summary that the caller has already redacted, and `{show_url}`,
`{approve_url}`, `{deny_url}` by the request's signed web links (empty when there are none:
[approvals] web_url unset, or a notification that is not about a request). The placeholders are
replaced in one pass over the template, so text inside the summary is never expanded again.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from typing import Mapping, Sequence

from policy.visible import visible

# Environment variables never handed to the notify command: the unlock passphrase of an
# unattended run is the workspace's master secret, and a notifier has no use for it.
SCRUBBED_ENV_PREFIXES = ("ASSISTANT_VAULT_",)


def notify_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_ENV_PREFIXES)}


def _visible(text: str) -> str:
    """Every control, format (bidi, zero-width), surrogate, private-use, unassigned or separator
    character shown as an escape: the summary holds model-chosen text (a URL), and a notifier may
    put it on a screen. (The same rule as assistant.display.terminal.escape, policy.visible's, which
    also escapes every default-ignorable character: variation selectors, Hangul fillers...)"""
    out = []
    for ch in text:
        if ch == " " or (ch.isprintable() and visible(ch)):
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


# The placeholders an argument may hold. The link fields are filled when [approvals] web_url is set.
LINK_FIELDS = ("show_url", "approve_url", "deny_url")
PLACEHOLDERS = ("summary", *LINK_FIELDS)
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


def summary_line(summary: str) -> str:
    """The summary as a notifier shows it: one line (every run of whitespace, line and paragraph
    separators included, becomes one space) with every hidden character escaped. The notify
    command's {summary} and the push body (policy.gate) both go through this one function."""
    return _visible(" ".join(summary.split()))


def fill(argv: Sequence[str], summary: str, links: Mapping[str, str] | None = None) -> list[str]:
    """argv with every placeholder replaced, in a single pass (a `{deny_url}` inside the summary
    stays as text). `summary` is made one escaped line here (summary_line); links are used as given."""
    values = {"summary": summary_line(summary)}
    for name in LINK_FIELDS:
        values[name] = _visible((links or {}).get(name, ""))
    return [_PLACEHOLDER.sub(lambda m: values[m.group(1)], a) for a in argv]


def run_notify(argv: Sequence[str], summary: str, *, timeout: float = 10.0,
               links: Mapping[str, str] | None = None) -> str | None:
    """None if the command ran and exited 0, else why the approver is unreachable."""
    if not argv:
        return None
    args = fill(argv, summary, links)
    try:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
            env=notify_env(),
        )
    except FileNotFoundError:
        return f"notify command not found: {args[0]!r}"
    except OSError as exc:
        return f"notify command {args[0]!r} could not be started: {exc.strerror or exc}"
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return f"notify command {args[0]!r} did not finish within {timeout:g}s (killed)"
    except BaseException:    # interrupted while waiting: leave no notifier running behind us
        _kill(proc)
        raise
    if code != 0:
        return f"notify command {args[0]!r} failed with exit status {code}"
    return None


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=5)    # SIGKILL: only an unkillable (D-state) process outlives this
    except subprocess.TimeoutExpired:
        pass
