"""Ctrl-C while the model loads: the outcome line reaches the real stdout even when the abandoned
load points fds 1, 2 and sys.stdout at /dev/null *after* the interrupt was caught (a Ctrl-C just
before llama.cpp's own redirection: `assistant run` exited 1 with nothing printed)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import os, signal, sys, threading, time
    from assistant.agent.interrupt import call_interruptibly, real_streams

    signal.signal(signal.SIGINT, signal.default_int_handler)
    redirected = threading.Event()

    def load():
        time.sleep(0.5)                       # the Ctrl-C lands before this
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        sys.stdout = sys.stderr = open(os.devnull, "w")
        redirected.set()
        time.sleep(30)

    threading.Timer(0.1, lambda: signal.raise_signal(signal.SIGINT)).start()
    try:
        call_interruptibly(load, name="fake-load")
    except KeyboardInterrupt:
        assert redirected.wait(10)
        out, err = real_streams()
        print("error: interrupted while loading the model", file=out)
        print("said on stderr", file=err)
        out.flush()
        err.flush()
        os._exit(1)
    os._exit(3)
""")


def _default_sigint():
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_the_outcome_line_is_printed_after_the_load_redirects_again():
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60,
                          preexec_fn=_default_sigint)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stdout == "error: interrupted while loading the model\n"
    assert proc.stderr == "said on stderr\n"
